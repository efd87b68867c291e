//! The stand-in base until a robot and its plant exist: n axes that follow
//! position commands within a velocity limit and hold where they are when
//! no assembly commands them.

use crate::base::{Base, Commands};
use crate::component::{ComponentInfo, PortInfo, Step};
use crate::value::{Value, ValueType};

/// A simulated base of n axes following position commands within a velocity limit (rad, rad/s).
pub struct IdealAxes {
    info: ComponentInfo,
    period: f64,
    max_velocity: f64,
    q: Vec<f64>,
    qd: Vec<f64>,
}

impl IdealAxes {
    /// `n` axes at `q0`, stepped every `period` seconds, moving at most
    /// `max_velocity` units per second.
    pub fn new(q0: &[f64], period: f64, max_velocity: f64) -> Self {
        let n = q0.len();
        let ty = if n == 1 { ValueType::Real } else { ValueType::Vector(n) };
        IdealAxes {
            info: ComponentInfo::new("sim_axes", "simulated axes: follow position commands within a velocity limit, hold otherwise")
                .output(PortInfo::new("q", ty).unit("rad").doc("measured positions"))
                .output(PortInfo::new("qd", ty).unit("rad/s").doc("measured velocities"))
                .input(PortInfo::new("q_cmd", ty).unit("rad").doc("commanded positions")),
            period,
            max_velocity,
            q: q0.to_vec(),
            qd: vec![0.0; n],
        }
    }

    /// Current axis positions (rad).
    pub fn positions(&self) -> &[f64] {
        &self.q
    }
}

impl Base for IdealAxes {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }

    fn sense(&mut self, _tick: u64, outputs: &mut [Value]) -> Step {
        outputs[0].as_mut_slice().copy_from_slice(&self.q);
        outputs[1].as_mut_slice().copy_from_slice(&self.qd);
        Step::Continue
    }

    fn actuate(&mut self, _tick: u64, commands: Option<Commands>) -> Step {
        let max_step = self.max_velocity * self.period;
        match commands.and_then(|c| c.get(0)) {
            Some(target) => {
                let target = target.as_slice();
                for ((q, qd), &t) in self.q.iter_mut().zip(&mut self.qd).zip(target) {
                    if !t.is_finite() {
                        *qd = 0.0;
                        return Step::Fault("non-finite position command: holding".into());
                    }
                    let dq = (t - *q).clamp(-max_step, max_step);
                    *q += dq;
                    *qd = dq / self.period;
                }
            }
            None => self.qd.fill(0.0),
        }
        Step::Continue
    }
}

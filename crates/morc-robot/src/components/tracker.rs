//! A laser tracker (kind `tracker`): measures the robot's tool position from outside the robot,
//! as the calibration example's tracker does, at its own rate and with its noise. Fed the links'
//! positions (`robot.q_link` of an elastic arm; `robot.q` of a rigid one), it sees what the tool
//! really does — on an elastic arm, what the motors' encoders do not. Between measurements it
//! holds the last one. The noise is Gaussian per axis from a seeded generator, so a run repeats
//! exactly. Nothing here allocates after `initialize`.

use std::sync::Arc;

use crate::{Noise, Robot, RobotKinematics};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_motion::Kinematics;

use super::kind_doc;

/// The tracker component.
pub struct Tracker {
    info: ComponentInfo,
    kinematics: RobotKinematics,
    noise: Noise,
    /// Steps between measurements, and the noise's σ per axis (m).
    every: u64,
    sigma: f64,
    measurements: u64,
}

impl Tracker {
    /// A `tracker` of `robot`'s tool.
    pub fn new(robot: Arc<Robot>) -> Self {
        let info = ComponentInfo::new("tracker", kind_doc("tracker"))
            .input(robot.joint_port("q", "rad", "m").doc("the links' positions: robot.q_link of an elastic arm, robot.q of a rigid one").required())
            .output(PortInfo::position("pos").doc("the tool's position as last measured (world frame)"))
            .output(PortInfo::new("fresh", ValueType::Boolean).doc("a measurement was taken this step"))
            .param(ParamInfo::new("rate", Value::Real(1000.0)).unit("Hz").doc("measurements per second (the nearest whole number of steps apart)"))
            .param(ParamInfo::new("noise", Value::Real(0.015)).unit("mm").doc("the measurement's standard deviation per axis (a laser tracker's: about 0.015 mm)"))
            .param(ParamInfo::new("seed", Value::Integer(1)).doc("the noise generator's seed: the same seed, the same noise"));
        Tracker { info, kinematics: RobotKinematics::new(robot), noise: Noise::new(1), every: 1, sigma: 0.0, measurements: 0 }
    }
}

impl Component for Tracker {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        let (rate, noise) = (self.info.real("rate"), self.info.real("noise"));
        if !(rate > 0.0 && rate.is_finite()) {
            return Err(format!("rate = {rate}: give measurements per second, more than 0"));
        }
        if !(noise >= 0.0 && noise.is_finite()) {
            return Err(format!("noise = {noise}: give the standard deviation in mm, 0 or more"));
        }
        self.sigma = noise * 1e-3;
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        self.every = ((1.0 / (self.info.real("rate") * ctx.period)).round() as u64).max(1);
        self.noise = Noise::new(self.info.integer("seed") as u64);
        self.measurements = 0;
        Ok(())
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let [pos, fresh] = outputs else { unreachable!("two outputs") };
        let measure = ctx.step.is_multiple_of(self.every);
        if measure {
            let tool = self.kinematics.tool_pose(inputs[0].as_slice()).translation;
            for (p, x) in pos.as_mut_slice().iter_mut().zip(tool.iter()) {
                *p = x + self.sigma * self.noise.normal();
            }
            self.measurements += 1;
        }
        *fresh = Value::Boolean(measure);
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        results.set("measurements", Value::Integer(self.measurements as i64));
    }
}

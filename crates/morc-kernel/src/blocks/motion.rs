//! Small motion-control blocks for one axis per element: a point-to-point
//! trajectory, a cascaded P-PI position controller and a pendulum arm plant.
//! They are also exported as FMUs (crate `morc-fmu`), so each is kept small
//! and its discretisation is stated exactly.

use super::{check_finite, limit, per_element, width, width_param};
use crate::component::*;
use crate::ode::Ode;
use crate::value::{Value, ValueType};

fn real(name: &str, x: f64) -> ParamInfo {
    ParamInfo::new(name, Value::Real(x))
}

/// Gives every port of the block the signal type of width n.
fn size_ports(info: &mut ComponentInfo, n: usize) {
    super::set_port_types(info, n);
}

/// Point-to-point move with a quintic (minimum-jerk) profile: rest to rest in
/// `duration` seconds from `start`, q = q0 + (q1 − q0)·s³(10 − 15s + 6s²).
pub struct QuinticPtp {
    info: ComponentInfo,
    /// q0, q1, start, duration per element.
    params: [Vec<f64>; 4],
}

impl QuinticPtp {
    /// Kind name in the registry.
    pub const KIND: &'static str = "trajectory";
    /// Help text: the profile and its outputs.
    pub const DOC: &'static str =
        "Point-to-point quintic (minimum-jerk) profile from q0 to q1, starting at `start` s and lasting `duration` s: outputs position q, velocity qd and acceleration qdd at the sample time.";

    /// A trajectory with default parameters.
    pub fn new() -> Self {
        QuinticPtp {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(real("q0", 0.0).unit("rad").doc("start position"))
                .param(real("q1", 1.0).unit("rad").doc("end position"))
                .param(real("start", 0.0).unit("s").doc("time at which the move starts"))
                .param(real("duration", 1.0).unit("s").doc("duration of the move, > 0"))
                .output(PortInfo::new("q", ValueType::Real).unit("rad"))
                .output(PortInfo::new("qd", ValueType::Real).unit("rad/s"))
                .output(PortInfo::new("qdd", ValueType::Real).unit("rad/s2")),
            params: Default::default(),
        }
    }
}

impl Default for QuinticPtp {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for QuinticPtp {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        for (values, name) in self.params.iter_mut().zip(["q0", "q1", "start", "duration"]) {
            *values = per_element(&self.info, name, n)?;
            check_finite(Self::KIND, name, values)?;
        }
        if let Some(d) = self.params[3].iter().find(|d| **d <= 0.0) {
            return Err(format!("parameter duration of trajectory must be > 0 s, got {d}"));
        }
        size_ports(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, _ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.sample(0.0, outputs);
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, _inputs: &[Value], outputs: &mut [Value]) -> Step {
        self.sample(ctx.time, outputs);
        Step::Continue
    }
}

impl QuinticPtp {
    fn sample(&self, t: f64, outputs: &mut [Value]) {
        let [q0, q1, start, duration] = &self.params;
        let [q, qd, qdd] = outputs else { return };
        let (q, qd, qdd) = (q.as_mut_slice(), qd.as_mut_slice(), qdd.as_mut_slice());
        for i in 0..q.len().min(q0.len()) {
            let s = limit((t - start[i]) / duration[i], 0.0, 1.0);
            let distance = q1[i] - q0[i];
            let shape = s * s * s * (10.0 + s * (-15.0 + 6.0 * s));
            let slope = 30.0 * s * s * (1.0 - s) * (1.0 - s);
            let curvature = 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s);
            q[i] = q0[i] + distance * shape;
            qd[i] = distance * slope / duration[i];
            qdd[i] = distance * curvature / (duration[i] * duration[i]);
        }
    }
}

/// Cascaded position controller: a P position loop gives a velocity command,
/// a PI velocity loop gives the torque.
/// v = kp·(q_ref − q) + qd_ref; e = v − qd; tau = clamp(kv·e + I, umin, umax);
/// I[k+1] = I[k] + ki·h·e[k] unless tau is saturated and e drives further
/// (conditional integration); I[0] = 0.
pub struct PPi {
    info: ComponentInfo,
    /// kp, kv, ki, umin, umax per element.
    gains: [Vec<f64>; 5],
    integral: Vec<f64>,
    period: f64,
}

impl PPi {
    /// Kind name in the registry.
    pub const KIND: &'static str = "ppi";
    /// Help text: the control law.
    pub const DOC: &'static str = "P-PI cascade: velocity command kp·(q_ref − q) + qd_ref, then torque clamp(kv·e + ki·∫e dt, umin, umax) with e the velocity error; integral forward Euler with conditional-integration anti-windup.";

    /// A P-PI cascade with default gains.
    pub fn new() -> Self {
        PPi {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(real("kp", 20.0).unit("1/s").doc("position loop gain"))
                .param(real("kv", 1.0).unit("N.m.s/rad").doc("velocity loop proportional gain"))
                .param(real("ki", 10.0).unit("1/s").doc("velocity loop integral gain (times kv·e's unit)"))
                .param(real("umin", f64::NEG_INFINITY).unit("N.m").doc("lower torque limit"))
                .param(real("umax", f64::INFINITY).unit("N.m").doc("upper torque limit"))
                .input(PortInfo::new("q_ref", ValueType::Real).unit("rad").required().doc("position reference"))
                .input(PortInfo::new("qd_ref", ValueType::Real).unit("rad/s").doc("velocity feed-forward (0 if unconnected)"))
                .input(PortInfo::new("q", ValueType::Real).unit("rad").required().doc("measured position"))
                .input(PortInfo::new("qd", ValueType::Real).unit("rad/s").required().doc("measured velocity"))
                .output(PortInfo::new("tau", ValueType::Real).unit("N.m").doc("torque command")),
            gains: Default::default(),
            integral: Vec::new(),
            period: 0.0,
        }
    }
}

impl Default for PPi {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for PPi {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        for (values, name) in self.gains.iter_mut().zip(["kp", "kv", "ki", "umin", "umax"]) {
            *values = per_element(&self.info, name, n)?;
        }
        for (name, values) in [("kp", &self.gains[0]), ("kv", &self.gains[1]), ("ki", &self.gains[2])] {
            check_finite(Self::KIND, name, values)?;
        }
        super::check_limits(Self::KIND, ("umin", &self.gains[3]), ("umax", &self.gains[4]))?;
        size_ports(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.period = ctx.period;
        self.integral = vec![0.0; self.gains[0].len()];
        let [_, _, _, umin, umax] = &self.gains;
        for (i, tau) in outputs[0].as_mut_slice().iter_mut().enumerate() {
            *tau = limit(0.0, umin[i], umax[i]);
        }
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let [kp, kv, ki, umin, umax] = &self.gains;
        let (q_ref, qd_ref, q, qd) = (inputs[0].as_slice(), inputs[1].as_slice(), inputs[2].as_slice(), inputs[3].as_slice());
        for (i, tau) in outputs[0].as_mut_slice().iter_mut().enumerate() {
            let feed_forward = qd_ref.get(i).copied().unwrap_or(0.0);
            let velocity_command = kp[i] * (q_ref[i] - q[i]) + feed_forward;
            let e = velocity_command - qd[i];
            let v = kv[i] * e + self.integral[i];
            *tau = limit(v, umin[i], umax[i]);
            let increment = ki[i] * self.period * e;
            let deeper = (v > umax[i] && increment > 0.0) || (v < umin[i] && increment < 0.0);
            if !deeper {
                self.integral[i] += increment;
            }
        }
        Step::Continue
    }
}

/// A 1-DoF arm: a pendulum driven by a motor torque, with viscous friction.
/// J·q'' = tau − b·q' − m·g·l·sin q, J = m·l² + rotor inertia.
/// Each step integrates over the period with `substeps` RK4 steps (input held)
/// and then outputs the new state: the output of step k is the state at
/// t_(k+1), so the arm has no direct feedthrough (close loops with a delay).
pub struct Arm {
    info: ComponentInfo,
    /// mass, length, gravity, friction, rotor_inertia, q0, qd0 per element.
    params: [Vec<f64>; 7],
    substeps: usize,
    state: Vec<[f64; 2]>,
    period: f64,
}

const ARM_PARAMS: [&str; 7] = ["mass", "length", "gravity", "friction", "rotor_inertia", "q0", "qd0"];

impl Arm {
    /// Kind name in the registry.
    pub const KIND: &'static str = "arm";
    /// Help text: the plant's equation of motion.
    pub const DOC: &'static str = "1-DoF arm plant: pendulum J·q'' = tau − friction·q' − mass·gravity·length·sin q (J = mass·length² + rotor_inertia, q = 0 hanging down), RK4 with `substeps` per period; outputs the state at the end of the step.";

    /// An arm plant with default parameters.
    pub fn new() -> Self {
        Arm {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(real("mass", 1.0).unit("kg").doc("point mass at the link's end"))
                .param(real("length", 0.5).unit("m").doc("link length"))
                .param(real("gravity", 9.81).unit("m/s2").doc("gravitational acceleration"))
                .param(real("friction", 0.1).unit("N.m.s/rad").doc("viscous friction coefficient"))
                .param(real("rotor_inertia", 0.01).unit("kg.m2").doc("motor and gear inertia at the joint"))
                .param(real("q0", 0.0).unit("rad").doc("initial position"))
                .param(real("qd0", 0.0).unit("rad/s").doc("initial velocity"))
                .param(ParamInfo::new("substeps", Value::Integer(1)).doc("RK4 steps per sample period, 1 to 1000"))
                .input(PortInfo::new("tau", ValueType::Real).unit("N.m").doc("motor torque (0 if unconnected)"))
                .output(PortInfo::new("q", ValueType::Real).unit("rad"))
                .output(PortInfo::new("qd", ValueType::Real).unit("rad/s")),
            params: Default::default(),
            substeps: 1,
            state: Vec::new(),
            period: 0.0,
        }
    }
}

impl Default for Arm {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Arm {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        for (values, name) in self.params.iter_mut().zip(ARM_PARAMS) {
            *values = per_element(&self.info, name, n)?;
            check_finite(Self::KIND, name, values)?;
        }
        let [mass, length, _, friction, rotor, _, _] = &self.params;
        for (name, values) in [("mass", mass), ("length", length), ("friction", friction), ("rotor_inertia", rotor)] {
            if let Some(x) = values.iter().find(|x| **x < 0.0) {
                return Err(format!("parameter {name} of arm must be ≥ 0, got {x}"));
            }
        }
        if let Some(i) = (0..n).find(|&i| mass[i] * length[i] * length[i] + rotor[i] <= 0.0) {
            return Err(format!("arm element {i}: the inertia mass·length² + rotor_inertia must be > 0"));
        }
        let substeps = self.info.integer("substeps");
        if !(1..=1000).contains(&substeps) {
            return Err(format!("parameter substeps of arm must be between 1 and 1000, got {substeps}"));
        }
        self.substeps = substeps as usize;
        size_ports(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.period = ctx.period;
        let [.., q0, qd0] = &self.params;
        self.state = q0.iter().zip(qd0).map(|(q, qd)| [*q, *qd]).collect();
        self.write(outputs);
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let tau = inputs[0].as_slice();
        let h = self.period / self.substeps as f64;
        for i in 0..self.state.len() {
            let torque = tau.get(i).copied().unwrap_or(0.0);
            let f = |x: [f64; 2]| self.derivative(i, x, torque);
            let mut x = self.state[i];
            for _ in 0..self.substeps {
                let k1 = f(x);
                let k2 = f([x[0] + 0.5 * h * k1[0], x[1] + 0.5 * h * k1[1]]);
                let k3 = f([x[0] + 0.5 * h * k2[0], x[1] + 0.5 * h * k2[1]]);
                let k4 = f([x[0] + h * k3[0], x[1] + h * k3[1]]);
                for j in 0..2 {
                    x[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
                }
            }
            self.state[i] = x;
        }
        self.write(outputs);
        Step::Continue
    }

    fn ode(&mut self) -> Option<&mut dyn Ode> {
        Some(self)
    }
}

/// States: every element's q, then every element's qd (the order of the outputs).
impl Ode for Arm {
    fn state_count(&self) -> usize {
        2 * self.params[0].len()
    }
    fn state_outputs(&self) -> &[usize] {
        &[0, 1]
    }
    fn states(&self, x: &mut [f64]) {
        let n = self.state.len();
        for (i, s) in self.state.iter().enumerate() {
            x[i] = s[0];
            x[n + i] = s[1];
        }
    }
    fn set_states(&mut self, x: &[f64]) {
        let n = self.state.len();
        for (i, s) in self.state.iter_mut().enumerate() {
            *s = [x[i], x[n + i]];
        }
    }
    fn derivatives(&self, inputs: &[Value], dx: &mut [f64]) {
        let tau = inputs[0].as_slice();
        let n = self.state.len();
        for (i, s) in self.state.iter().enumerate() {
            let d = self.derivative(i, *s, tau.get(i).copied().unwrap_or(0.0));
            dx[i] = d[0];
            dx[n + i] = d[1];
        }
    }
}

impl Arm {
    /// [q', qd'] of element i at state x under `torque`: the one expression
    /// the block's RK4 and the exported ODE share, so both agree to the bit.
    #[inline]
    fn derivative(&self, i: usize, x: [f64; 2], torque: f64) -> [f64; 2] {
        let [mass, length, gravity, friction, rotor, _, _] = &self.params;
        let inertia = mass[i] * length[i] * length[i] + rotor[i];
        let gravity_torque = mass[i] * gravity[i] * length[i];
        [x[1], (torque - friction[i] * x[1] - gravity_torque * x[0].sin()) / inertia]
    }

    fn write(&self, outputs: &mut [Value]) {
        let [q, qd] = outputs else { return };
        for ((q, qd), x) in q.as_mut_slice().iter_mut().zip(qd.as_mut_slice()).zip(&self.state) {
            *q = x[0];
            *qd = x[1];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{assert_close, Harness};
    use crate::value::Value;

    const H: f64 = 1e-3;

    #[test]
    fn trajectory_is_rest_to_rest_and_symmetric() {
        let mut h = Harness::new("trajectory", &[("q0", &1.0), ("q1", &3.0), ("duration", &0.5)], H).unwrap();
        let samples: Vec<Vec<Value>> = (0..=600).map(|_| h.step(&[]).to_vec()).collect();
        assert_eq!(samples[0][0], Value::Real(1.0));
        assert_eq!(samples[500][0], Value::Real(3.0));
        assert_eq!(samples[600][1], Value::Real(0.0));
        assert_close(samples[250][0].real(), 2.0, 1e-12, "midpoint");
        assert_close(samples[250][1].real(), 2.0 * 1.875 / 0.5, 1e-9, "peak velocity 15/8·Δq/T");
        // The velocity is the derivative of the position (central difference).
        let qd = (samples[301][0].real() - samples[299][0].real()) / (2.0 * H);
        assert_close(samples[300][1].real(), qd, 1e-4, "velocity");
    }

    #[test]
    fn ppi_is_a_p_loop_around_a_pi_loop() {
        let r = Value::Real;
        let mut h = Harness::new("ppi", &[("kp", &10.0), ("kv", &2.0), ("ki", &5.0)], H).unwrap();
        // v = 10·(1 − 0.5) + 0.25 = 5.25, e = 5.25 − 1.25 = 4, tau = 2·4 = 8; then I = 5·h·4.
        assert_eq!(h.step(&[r(1.0), r(0.25), r(0.5), r(1.25)])[0], r(8.0));
        assert_close(h.step(&[r(1.0), r(0.25), r(0.5), r(1.25)])[0].real(), 8.0 + 5.0 * H * 4.0, 1e-15, "integral");
    }

    #[test]
    fn arm_swings_with_the_small_angle_period_and_decays() {
        // Small swing, no friction, no rotor: period 2π·sqrt(l/g).
        let params: &super::super::harness::Params = &[("friction", &0.0), ("rotor_inertia", &0.0), ("q0", &0.01), ("length", &1.0), ("substeps", &4.0)];
        let mut h = Harness::new("arm", params, H).unwrap();
        let q: Vec<f64> = (0..4000).map(|_| h.step(&[Value::Real(0.0)])[0].real()).collect();
        let crossing = q.windows(2).position(|w| w[0] > 0.0 && w[1] <= 0.0).unwrap() as f64 * H;
        let quarter = std::f64::consts::FRAC_PI_2 * (1.0 / 9.81_f64).sqrt();
        assert_close(crossing, quarter, 2e-3, "first zero crossing at a quarter period");
        // Held torque balances gravity at q = asin(tau/(m·g·l)).
        let mut h = Harness::new("arm", &[("friction", &2.0)], H).unwrap();
        let tau = 0.5 * 9.81 * 0.5;
        let q = (0..20_000).map(|_| h.step(&[Value::Real(tau)])[0].real()).last().unwrap();
        assert_close(q, std::f64::consts::FRAC_PI_6, 1e-6, "static balance");
    }
}

//! Blocks with state: integrator and unit delay. Neither has direct
//! feedthrough: the output at step n depends only on inputs before n, so
//! either may close a feedback loop.

use super::{check_finite, check_limits, limit, per_element, set_port_types, width, width_param};
use crate::component::*;
use crate::value::{Value, ValueType};

/// Forward-Euler integrator with optional limits:
/// y[n] = x[n], x[n+1] = clamp(x[n] + h·k·u[n], lower, upper), x[0] = x0.
pub struct Integrator {
    info: ComponentInfo,
    k: Vec<f64>,
    x0: Vec<f64>,
    lower: Vec<f64>,
    upper: Vec<f64>,
    /// h·k, per element.
    hk: Vec<f64>,
    state: Vec<f64>,
}

impl Integrator {
    /// Kind name in the registry.
    pub const KIND: &'static str = "integrator";
    /// Help text: the difference equation.
    pub const DOC: &'static str = "Integrator, forward Euler: y[n] = x[n], then x[n+1] = clamp(x[n] + h·k·u[n], lower, upper) with x[0] = x0, h the sample period in s.";

    /// An integrator with default parameters (k = 1 1/s, x0 = 0, unlimited).
    pub fn new() -> Self {
        Integrator {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(ParamInfo::new("k", Value::Real(1.0)).unit("1/s").doc("gain: y' = k·u"))
                .param(ParamInfo::new("x0", Value::Real(0.0)).doc("initial state, within the limits"))
                .param(ParamInfo::new("lower", Value::Real(f64::NEG_INFINITY)).doc("lower limit of the state"))
                .param(ParamInfo::new("upper", Value::Real(f64::INFINITY)).doc("upper limit of the state"))
                .input(PortInfo::new("u", ValueType::Real).required())
                .output(PortInfo::new("y", ValueType::Real)),
            k: Vec::new(),
            x0: Vec::new(),
            lower: Vec::new(),
            upper: Vec::new(),
            hk: Vec::new(),
            state: Vec::new(),
        }
    }
}

impl Default for Integrator {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Integrator {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        self.k = per_element(&self.info, "k", n)?;
        self.x0 = per_element(&self.info, "x0", n)?;
        self.lower = per_element(&self.info, "lower", n)?;
        self.upper = per_element(&self.info, "upper", n)?;
        check_finite(Self::KIND, "k", &self.k)?;
        check_finite(Self::KIND, "x0", &self.x0)?;
        check_limits(Self::KIND, ("lower", &self.lower), ("upper", &self.upper))?;
        for ((x0, lo), hi) in self.x0.iter().zip(&self.lower).zip(&self.upper) {
            if x0 < lo || x0 > hi {
                return Err(format!("parameter x0 of integrator ({x0}) must lie within lower ({lo}) and upper ({hi})"));
            }
        }
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.hk = self.k.iter().map(|k| ctx.period * k).collect();
        self.state.clone_from(&self.x0);
        outputs[0].as_mut_slice().copy_from_slice(&self.state);
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let y = outputs[0].as_mut_slice();
        let limits = self.lower.iter().zip(&self.upper);
        for ((((y, u), x), hk), (lo, hi)) in y.iter_mut().zip(inputs[0].as_slice()).zip(&mut self.state).zip(&self.hk).zip(limits) {
            *y = *x;
            *x = limit(*x + hk * u, *lo, *hi);
        }
        Step::Continue
    }
}

/// y[n] = u[n−1], y[0] = initial.
pub struct UnitDelay {
    info: ComponentInfo,
    initial: Vec<f64>,
    state: Vec<f64>,
}

impl UnitDelay {
    /// Kind name in the registry.
    pub const KIND: &'static str = "unit_delay";
    /// Help text: the difference equation.
    pub const DOC: &'static str = "Unit delay: y[n] = u[n−1] with y[0] = initial, a delay of one sample period of this block.";

    /// A unit delay with default parameters (initial output 0).
    pub fn new() -> Self {
        UnitDelay {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(ParamInfo::new("initial", Value::Real(0.0)).doc("output at the first step"))
                .input(PortInfo::new("u", ValueType::Real).required())
                .output(PortInfo::new("y", ValueType::Real)),
            initial: Vec::new(),
            state: Vec::new(),
        }
    }
}

impl Default for UnitDelay {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for UnitDelay {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        self.initial = per_element(&self.info, "initial", n)?;
        check_finite(Self::KIND, "initial", &self.initial)?;
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, _ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.state.clone_from(&self.initial);
        outputs[0].as_mut_slice().copy_from_slice(&self.state);
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        for ((y, u), x) in outputs[0].as_mut_slice().iter_mut().zip(inputs[0].as_slice()).zip(&mut self.state) {
            *y = *x;
            *x = *u;
        }
        Step::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{assert_close, error, simulate, siso, Harness};
    use crate::value::Value;

    const H: f64 = 1e-3;

    #[test]
    fn integrator_of_a_constant_is_a_ramp() {
        // y' = k·u = 3·2 from x0 = 1: y[n] = 1 + 6·n·h, the state before this step's input.
        let y = siso("integrator", &[("k", &3.0), ("x0", &1.0)], H, &[2.0; 1000]);
        for (n, y) in y.iter().enumerate() {
            assert_close(*y, 1.0 + 6.0 * n as f64 * H, 1e-12, &format!("ramp at {n}"));
        }
        let h = Harness::new("integrator", &[("x0", &1.0)], H).unwrap();
        assert_eq!(h.outputs[0], Value::Real(1.0), "initial output is x0");
    }

    #[test]
    fn integrator_follows_forward_euler_on_varying_input() {
        let u = [1.0, -2.0, 0.5, 4.0];
        let y = siso("integrator", &[("k", &2.0)], 0.1, &u);
        assert_close(y[0], 0.0, 0.0, "y0");
        assert_close(y[1], 0.2, 1e-15, "y1");
        assert_close(y[2], 0.2 - 0.4, 1e-15, "y2");
        assert_close(y[3], 0.2 - 0.4 + 0.1, 1e-15, "y3");
    }

    #[test]
    fn integrator_state_stays_within_limits() {
        let params: &[(&str, &dyn super::super::harness::ToValue)] = &[("n", &2.0), ("lower", &[-0.05, -1.0]), ("upper", &[0.01, 1.0])];
        let inputs: Vec<Vec<Value>> = (0..100).map(|_| vec![Value::Vector(vec![1.0, -1.0])]).collect();
        let out = simulate("integrator", params, H, &inputs);
        let y = out[99][0].as_slice();
        assert_eq!(y[0], 0.01);
        assert_close(y[1], -0.099, 1e-12, "free element");
        // And leaves the limit as soon as the input reverses.
        let y = siso("integrator", &[("upper", &0.002)], H, &[1.0, 1.0, 1.0, 1.0, -1.0, -1.0]);
        assert_close(y[5], 0.001, 1e-15, "leaves upper limit at once");
    }

    #[test]
    fn integrator_rejects_x0_outside_limits() {
        let e = error("integrator", &[("x0", &2.0), ("upper", &1.0)], H);
        assert_eq!(e, "parameter x0 of integrator (2) must lie within lower (-inf) and upper (1)");
        assert!(error("integrator", &[("lower", &1.0), ("upper", &0.0), ("x0", &0.5)], H).contains("must not exceed"));
    }

    #[test]
    fn unit_delay_shifts_by_one_sample() {
        assert_eq!(siso("unit_delay", &[("initial", &7.0)], H, &[1.0, 2.0, 3.0]), [7.0, 1.0, 2.0]);
        let inputs = vec![vec![Value::Vector(vec![1.0, 2.0])], vec![Value::Vector(vec![3.0, 4.0])]];
        let out = simulate("unit_delay", &[("n", &2.0), ("initial", &[-1.0, -2.0])], H, &inputs);
        assert_eq!(out[0][0], Value::Vector(vec![-1.0, -2.0]));
        assert_eq!(out[1][0], Value::Vector(vec![1.0, 2.0]));
    }
}

//! Static and rate nonlinearities.

use super::{check_finite, check_limits, limit, per_element, set_port_types, width, width_param};
use crate::component::*;
use crate::value::{Value, ValueType};

/// y = min(max(u, lower), upper), element-wise.
pub struct Saturation {
    info: ComponentInfo,
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl Saturation {
    /// Kind name in the registry.
    pub const KIND: &'static str = "saturation";
    /// Help text: the formula.
    pub const DOC: &'static str = "Saturation: y = min(max(u, lower), upper) element-wise, limits in the signal's unit (NaN passes through).";

    /// A saturation with default limits.
    pub fn new() -> Self {
        Saturation {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(ParamInfo::new("lower", Value::Real(-1.0)).doc("lower limit (may be -inf)"))
                .param(ParamInfo::new("upper", Value::Real(1.0)).doc("upper limit (may be inf), at least lower"))
                .input(PortInfo::new("u", ValueType::Real).required())
                .output(PortInfo::new("y", ValueType::Real)),
            lower: Vec::new(),
            upper: Vec::new(),
        }
    }
}

impl Default for Saturation {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Saturation {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        let lower = per_element(&self.info, "lower", n)?;
        let upper = per_element(&self.info, "upper", n)?;
        check_limits(Self::KIND, ("lower", &lower), ("upper", &upper))?;
        (self.lower, self.upper) = (lower, upper);
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, _ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let y = outputs[0].as_mut_slice();
        for (((y, u), lo), hi) in y.iter_mut().zip(inputs[0].as_slice()).zip(&self.lower).zip(&self.upper) {
            *y = limit(*u, *lo, *hi);
        }
        Step::Continue
    }
}

/// y follows u with its rate of change limited to [−falling, rising] per second.
pub struct RateLimiter {
    info: ComponentInfo,
    rising: Vec<f64>,
    falling: Vec<f64>,
    initial: Vec<f64>,
    /// Largest rise and fall per sample: rate · h.
    max_rise: Vec<f64>,
    max_fall: Vec<f64>,
    /// The previous output.
    previous: Vec<f64>,
}

impl RateLimiter {
    /// Kind name in the registry.
    pub const KIND: &'static str = "rate_limiter";
    /// Help text: the difference equation.
    pub const DOC: &'static str = "Rate limiter: y[k] = y[k−1] + clamp(u[k] − y[k−1], −falling·h, rising·h), rates in units/s, y[−1] = initial.";

    /// A rate limiter with default rates.
    pub fn new() -> Self {
        RateLimiter {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(ParamInfo::new("rising", Value::Real(1.0)).doc("largest rate of increase, signal units per second, ≥ 0 (may be inf)"))
                .param(ParamInfo::new("falling", Value::Real(1.0)).doc("largest rate of decrease as a positive magnitude, signal units per second (may be inf)"))
                .param(ParamInfo::new("initial", Value::Real(0.0)).doc("output before the first step"))
                .input(PortInfo::new("u", ValueType::Real).required())
                .output(PortInfo::new("y", ValueType::Real)),
            rising: Vec::new(),
            falling: Vec::new(),
            initial: Vec::new(),
            max_rise: Vec::new(),
            max_fall: Vec::new(),
            previous: Vec::new(),
        }
    }
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for RateLimiter {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        self.rising = per_element(&self.info, "rising", n)?;
        self.falling = per_element(&self.info, "falling", n)?;
        self.initial = per_element(&self.info, "initial", n)?;
        for (name, rates) in [("rising", &self.rising), ("falling", &self.falling)] {
            if let Some(r) = rates.iter().find(|r| r.is_nan() || **r < 0.0) {
                return Err(format!("parameter {name} of rate_limiter must be a rate ≥ 0 (a magnitude: falling = 2 allows −2 units/s), got {r}"));
            }
        }
        check_finite(Self::KIND, "initial", &self.initial)?;
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.max_rise = self.rising.iter().map(|r| r * ctx.period).collect();
        self.max_fall = self.falling.iter().map(|r| r * ctx.period).collect();
        self.previous.clone_from(&self.initial);
        outputs[0].as_mut_slice().copy_from_slice(&self.previous);
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let y = outputs[0].as_mut_slice();
        let limits = self.max_rise.iter().zip(&self.max_fall);
        for (((y, u), previous), (rise, fall)) in y.iter_mut().zip(inputs[0].as_slice()).zip(&mut self.previous).zip(limits) {
            let change = u - *previous;
            // Within the limits the output is u itself, not previous + (u − previous),
            // which can be off by a rounding error.
            *y = if change > *rise {
                *previous + rise
            } else if change < -fall {
                *previous - fall
            } else {
                *u
            };
            *previous = *y;
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
    fn saturation_clamps_and_passes_nan() {
        let y = siso("saturation", &[("lower", &-0.5), ("upper", &2.0)], H, &[-3.0, 0.25, 5.0, f64::NAN]);
        assert_eq!(y[..3], [-0.5, 0.25, 2.0]);
        assert!(y[3].is_nan());
        let params: &[(&str, &dyn super::super::harness::ToValue)] = &[("n", &2.0), ("lower", &[-1.0, 0.0]), ("upper", &f64::INFINITY)];
        let out = simulate("saturation", params, H, &[vec![Value::Vector(vec![-5.0, -5.0])]]);
        assert_eq!(out[0][0], Value::Vector(vec![-1.0, 0.0]));
    }

    #[test]
    fn saturation_rejects_crossed_limits() {
        let e = error("saturation", &[("lower", &1.0), ("upper", &0.0)], H);
        assert_eq!(e, "parameters of saturation: lower (1) must not exceed upper (0)");
        assert!(error("saturation", &[("lower", &f64::NAN)], H).contains("must not exceed"));
    }

    #[test]
    fn rate_limiter_ramps_at_the_limits() {
        // 10 units/s at 1 ms: 0.01 per step, reaching 1 after 100 steps, then exactly 1.
        let y = siso("rate_limiter", &[("rising", &10.0), ("falling", &5.0)], H, &[1.0; 120]);
        for (k, y) in y.iter().enumerate() {
            assert_close(*y, (0.01 * (k + 1) as f64).min(1.0), 1e-12, &format!("rise at {k}"));
        }
        assert_eq!(y[119], 1.0);
        // Falling from the initial output 1 towards −1 at 5 units/s.
        let y = siso("rate_limiter", &[("falling", &5.0), ("initial", &1.0)], H, &[-1.0; 3]);
        assert_close(y[2], 1.0 - 3.0 * 0.005, 1e-15, "fall");
        // Small changes pass unchanged.
        assert_eq!(siso("rate_limiter", &[("rising", &10.0), ("falling", &10.0)], H, &[0.004, 0.001]), [0.004, 0.001]);
    }

    #[test]
    fn rate_limiter_starts_at_initial_and_checks_rates() {
        let h = Harness::new("rate_limiter", &[("initial", &3.0)], H).unwrap();
        assert_eq!(h.outputs[0], Value::Real(3.0));
        let e = error("rate_limiter", &[("falling", &-2.0)], H);
        assert!(e.contains("parameter falling of rate_limiter must be a rate ≥ 0"), "{e}");
        assert!(siso("rate_limiter", &[("rising", &f64::INFINITY)], H, &[1e9])[0] == 1e9);
    }
}

//! Discrete PID controller with filtered derivative, output limits and anti-windup.
//!
//! Discretisation (Åström & Wittenmark, Computer-Controlled Systems, ch. 8),
//! with e = r − y and h the sample period:
//! - P[k] = kp·e[k]
//! - I: forward Euler, so the integral has no direct feedthrough:
//!   I[k+1] = I[k] + ki·h·e[k] (+ anti-windup term); I[0] = 0.
//! - D: kd·s/(tf·s + 1) by backward Euler, which stays stable and free of
//!   ringing for any tf ≥ 0 (Tustin rings at Nyquist when tf → 0):
//!   D[k] = tf/(tf + h)·D[k−1] + kd/(tf + h)·(e[k] − e[k−1]); tf = 0 gives kd·Δe/h.
//!   On the first step e[k−1] = e[k], so a standing error gives no derivative kick.
//! - v = P + I + D + ff, u = clamp(v, umin, umax).
//! - Anti-windup: "backcalc" adds kt·h·(u − v) to the integral update (tracking
//!   time 1/kt); "clamp" (conditional integration) freezes the integral while the
//!   output is saturated and the error would drive it further; "none" does neither.

use super::{check_finite, check_limits, limit, per_element, set_port_types, width, width_param};
use crate::component::*;
use crate::value::{Value, ValueType};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AntiWindup {
    BackCalculation,
    ConditionalIntegration,
    None,
}

impl AntiWindup {
    fn parse(text: &str) -> Result<Self, String> {
        match text {
            "backcalc" => Ok(AntiWindup::BackCalculation),
            "clamp" => Ok(AntiWindup::ConditionalIntegration),
            "none" => Ok(AntiWindup::None),
            _ => Err(format!("parameter antiwindup of pid must be \"backcalc\" (back-calculation with tracking gain kt), \"clamp\" (conditional integration) or \"none\", got {text:?}")),
        }
    }
}

/// One element's coefficients (per sample) and state.
#[derive(Clone, Copy, Debug, Default)]
struct Element {
    kp: f64,
    /// ki·h
    ki_h: f64,
    /// tf/(tf + h)
    derivative_pole: f64,
    /// kd/(tf + h)
    derivative_gain: f64,
    /// kt·h
    kt_h: f64,
    umin: f64,
    umax: f64,
    integral: f64,
    derivative: f64,
    previous_error: f64,
}

/// PID controller with derivative filter, feed-forward, output limits and anti-windup.
pub struct Pid {
    info: ComponentInfo,
    anti_windup: AntiWindup,
    /// Per-element parameters as configured: kp, ki, kd, tf, umin, umax, kt.
    gains: [Vec<f64>; 7],
    elements: Vec<Element>,
    started: bool,
}

const GAIN_NAMES: [&str; 7] = ["kp", "ki", "kd", "tf", "umin", "umax", "kt"];

impl Pid {
    /// Kind name in the registry.
    pub const KIND: &'static str = "pid";
    /// Help text: the control law.
    pub const DOC: &'static str =
        "PID: u = clamp(kp·e + ki·∫e dt + kd·s/(tf·s + 1)·e + ff, umin, umax), e = r − y, integral forward Euler, derivative backward Euler, anti-windup backcalc | clamp | none.";

    /// A PID with default gains.
    pub fn new() -> Self {
        let real = |name: &str, x: f64| ParamInfo::new(name, Value::Real(x));
        Pid {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(real("kp", 1.0).doc("proportional gain"))
                .param(real("ki", 0.0).unit("1/s").doc("integral gain: ki = kp/Ti"))
                .param(real("kd", 0.0).unit("s").doc("derivative gain: kd = kp·Td"))
                .param(real("tf", 0.0).unit("s").doc("time constant of the derivative's first-order filter (0: unfiltered)"))
                .param(real("umin", f64::NEG_INFINITY).doc("lower output limit"))
                .param(real("umax", f64::INFINITY).doc("upper output limit"))
                .param(ParamInfo::new("antiwindup", Value::String("backcalc".into())).doc("\"backcalc\", \"clamp\" (conditional integration) or \"none\""))
                .param(
                    real("kt", 0.0)
                        .unit("1/s")
                        .doc("back-calculation tracking gain, kt·h ≤ 1; 0 chooses |ki/kp| (tracking time = integral time), at most 1/h; unused when ki = 0"),
                )
                .input(PortInfo::new("r", ValueType::Real).required().doc("reference"))
                .input(PortInfo::new("y", ValueType::Real).required().doc("measurement"))
                .input(PortInfo::new("ff", ValueType::Real).doc("feed-forward added before the limits (0 if unconnected)"))
                .output(PortInfo::new("u", ValueType::Real).doc("control output")),
            anti_windup: AntiWindup::BackCalculation,
            gains: Default::default(),
            elements: Vec::new(),
            started: false,
        }
    }
}

impl Default for Pid {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Pid {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        for (values, name) in self.gains.iter_mut().zip(GAIN_NAMES) {
            *values = per_element(&self.info, name, n)?;
        }
        let [kp, ki, kd, tf, umin, umax, kt] = &self.gains;
        for (name, values) in [("kp", kp), ("ki", ki), ("kd", kd), ("tf", tf), ("kt", kt)] {
            check_finite(Self::KIND, name, values)?;
        }
        for (name, values) in [("tf", tf), ("kt", kt)] {
            if let Some(x) = values.iter().find(|x| **x < 0.0) {
                return Err(format!("parameter {name} of pid must be ≥ 0, got {x}"));
            }
        }
        check_limits(Self::KIND, ("umin", umin), ("umax", umax))?;
        self.anti_windup = AntiWindup::parse(self.info.param_value("antiwindup").map_or("", Value::str))?;
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        let h = ctx.period;
        let [kp, ki, kd, tf, umin, umax, kt] = &self.gains;
        let mut elements = Vec::with_capacity(kp.len());
        for i in 0..kp.len() {
            // Beyond kt·h = 1 the back-calculation overshoots the limit it tracks.
            if kt[i] * h > 1.0 + 1e-12 {
                return Err(format!("parameter kt of pid must be at most 1/h = {} 1/s (sample period {} s), got {}", 1.0 / h, h, kt[i]));
            }
            let kt = if ki[i] == 0.0 {
                // No integral action, nothing to wind up: tracking would only add a spurious integral.
                0.0
            } else if kt[i] > 0.0 {
                kt[i]
            } else if kp[i] != 0.0 {
                (ki[i] / kp[i]).abs().min(1.0 / h)
            } else {
                1.0 / h
            };
            elements.push(Element {
                kp: kp[i],
                ki_h: ki[i] * h,
                derivative_pole: tf[i] / (tf[i] + h),
                derivative_gain: kd[i] / (tf[i] + h),
                kt_h: kt * h,
                umin: umin[i],
                umax: umax[i],
                ..Element::default()
            });
        }
        // Before the first step the output is what zero error gives.
        for (u, e) in outputs[0].as_mut_slice().iter_mut().zip(&elements) {
            *u = limit(0.0, e.umin, e.umax);
        }
        self.elements = elements;
        self.started = false;
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let (r, y, ff) = (inputs[0].as_slice(), inputs[1].as_slice(), inputs[2].as_slice());
        let u = outputs[0].as_mut_slice();
        for (i, ((el, u), (r, y))) in self.elements.iter_mut().zip(u).zip(r.iter().zip(y)).enumerate() {
            let e = r - y;
            if !self.started {
                el.previous_error = e;
            }
            el.derivative = el.derivative_pole * el.derivative + el.derivative_gain * (e - el.previous_error);
            let v = el.kp * e + el.integral + el.derivative + ff.get(i).copied().unwrap_or(0.0);
            *u = limit(v, el.umin, el.umax);
            let increment = el.ki_h * e;
            el.integral += match self.anti_windup {
                AntiWindup::None => increment,
                AntiWindup::BackCalculation => increment + el.kt_h * (*u - v),
                AntiWindup::ConditionalIntegration => {
                    let deeper = (v > el.umax && increment > 0.0) || (v < el.umin && increment < 0.0);
                    if deeper {
                        0.0
                    } else {
                        increment
                    }
                }
            };
            el.previous_error = e;
        }
        self.started = true;
        Step::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{assert_close, error, Harness, Params};
    use crate::value::Value;

    const H: f64 = 1e-3;

    fn r(x: f64) -> Value {
        Value::Real(x)
    }

    /// The controller output for a sequence of errors (r = e, y = 0).
    fn response(params: &Params, errors: &[f64]) -> Vec<f64> {
        let mut h = Harness::new("pid", params, H).unwrap();
        errors.iter().map(|&e| h.step(&[r(e), r(0.0)])[0].real()).collect()
    }

    #[test]
    fn proportional_acts_on_r_minus_y() {
        let mut h = Harness::new("pid", &[("kp", &2.0)], H).unwrap();
        assert_eq!(h.step(&[r(3.0), r(1.0)])[0], r(4.0));
        assert_eq!(h.step(&[r(-1.0), r(1.0)])[0], r(-4.0));
    }

    #[test]
    fn integral_is_forward_euler() {
        // u[k] = ki·h·k·e: the error at step k shows from step k + 1.
        let u = response(&[("kp", &0.0), ("ki", &2.0)], &[1.0; 500]);
        for (k, u) in u.iter().enumerate() {
            assert_close(*u, 2.0 * H * k as f64, 1e-12, &format!("integral at {k}"));
        }
    }

    #[test]
    fn filtered_derivative_of_a_step() {
        // A unit step in e at step 5: D = kd/(tf + h)·(tf/(tf + h))^j, whose
        // sum·h is exactly kd (the integral of kd·δ), like the continuous filter.
        let (kd, tf) = (0.5, 0.01);
        let mut e = vec![0.0; 5];
        e.extend([1.0; 2000]);
        let u = response(&[("kp", &0.0), ("kd", &kd), ("tf", &tf)], &e);
        assert!(u[..5].iter().all(|u| *u == 0.0));
        for j in 0..50 {
            let expected = kd / (tf + H) * (tf / (tf + H)).powi(j as i32);
            assert_close(u[5 + j], expected, 1e-12, &format!("derivative {j} steps after the step"));
        }
        assert_close(u.iter().sum::<f64>() * H, kd, 1e-9, "area of the derivative impulse");
        // Compared with the continuous kd/tf·exp(−t/tf): close once t ≫ h.
        let t = 0.02;
        assert_close(u[5 + 20], kd / tf * (-t / tf).exp(), 0.1 * kd / tf * (-t / tf).exp(), "vs continuous");
        // Unfiltered: a backward difference.
        let u = response(&[("kp", &0.0), ("kd", &0.5)], &[0.0, 0.0, 1.0, 1.0]);
        assert_eq!(u, [0.0, 0.0, 0.5 / H, 0.0]);
    }

    #[test]
    fn no_derivative_kick_on_first_step() {
        let u = response(&[("kp", &1.0), ("kd", &1.0)], &[2.0, 2.0]);
        assert_eq!(u, [2.0, 2.0]);
    }

    #[test]
    fn feed_forward_adds_before_limits_and_defaults_to_zero() {
        let mut h = Harness::new("pid", &[("kp", &1.0), ("umax", &1.5)], H).unwrap();
        assert_eq!(h.step(&[r(1.0), r(0.0), r(0.25)])[0], r(1.25));
        assert_eq!(h.step(&[r(1.0), r(0.0), r(2.0)])[0], r(1.5));
        assert_eq!(h.step(&[r(1.0), r(0.0)])[0], r(1.0), "unconnected ff is 0, and no integral without ki");
    }

    /// Steps until the output leaves umax after the error reverses, having been saturated for `seconds`.
    fn recovery_steps(antiwindup: &str, seconds: f64) -> usize {
        let params: &Params = &[("kp", &1.0), ("ki", &10.0), ("umin", &-1.0), ("umax", &1.0), ("antiwindup", &antiwindup)];
        let mut h = Harness::new("pid", params, H).unwrap();
        for _ in 0..(seconds / H) as usize {
            assert_eq!(h.step(&[r(5.0), r(0.0)])[0], r(1.0));
        }
        (0..100_000).find(|_| h.step(&[r(-0.5), r(0.0)])[0].real() < 1.0).expect("never recovered")
    }

    #[test]
    fn anti_windup_keeps_integral_bounded_and_recovers_at_once() {
        for mode in ["backcalc", "clamp"] {
            // Recovery does not depend on how long the output was saturated: the integral is bounded.
            assert!(recovery_steps(mode, 1.0) <= 1, "{mode}");
            assert!(recovery_steps(mode, 5.0) <= 1, "{mode}");
        }
        // Without anti-windup the integral grows to ki·5·T = 50·T and unwinds at ki·0.5 = 5 /s
        // until kp·e + I < umax: 10·T − 0.3 s.
        let windup = recovery_steps("none", 1.0);
        assert!((9_690..9_710).contains(&windup), "none: {windup}");
        assert!(recovery_steps("none", 2.0) > 19_000);
    }

    #[test]
    fn backcalc_integral_settles_where_tracking_balances_integration() {
        // While saturated: ki·e + kt·(umax − kp·e − I) = 0 → I = ki·e/kt − kp·e + umax;
        // with e = 5, kt = 20: I = 2.5 − 5 + 1 = −1.5, seen as u once the error is zero.
        let params: &Params = &[("kp", &1.0), ("ki", &10.0), ("kt", &20.0), ("umax", &1.0)];
        let mut h = Harness::new("pid", params, H).unwrap();
        for _ in 0..2000 {
            h.step(&[r(5.0), r(0.0)]);
        }
        let u = h.step(&[r(0.0), r(0.0)])[0].real();
        assert_close(u, -1.5, 1e-9, "integral after long saturation");
    }

    /// Closed loop on y' = −y + u (forward Euler at h): the overshoot of a PI
    /// controller saturating on the way to r.
    fn closed_loop_overshoot(antiwindup: &str) -> f64 {
        let params: &Params = &[("kp", &2.0), ("ki", &8.0), ("umin", &-1.0), ("umax", &1.0), ("antiwindup", &antiwindup)];
        let mut h = Harness::new("pid", params, H).unwrap();
        let (reference, mut y, mut peak) = (0.8, 0.0_f64, 0.0_f64);
        for _ in 0..20_000 {
            let u = h.step(&[r(reference), r(y)])[0].real();
            y += H * (-y + u);
            peak = peak.max(y);
        }
        assert_close(y, reference, 1e-6, &format!("{antiwindup} settles"));
        (peak - reference) / reference
    }

    #[test]
    fn anti_windup_reduces_overshoot_in_closed_loop() {
        let none = closed_loop_overshoot("none");
        let backcalc = closed_loop_overshoot("backcalc");
        let clamp = closed_loop_overshoot("clamp");
        assert!(none > 0.05, "windup overshoot {none}");
        assert!(backcalc < none / 2.0, "backcalc {backcalc} vs none {none}");
        assert!(clamp < none / 2.0, "clamp {clamp} vs none {none}");
    }

    #[test]
    fn vector_pid_has_per_element_gains() {
        let params: &Params = &[("n", &2.0), ("kp", &[1.0, 3.0])];
        let mut h = Harness::new("pid", params, H).unwrap();
        let v = |a: f64, b: f64| Value::Vector(vec![a, b]);
        assert_eq!(h.step(&[v(1.0, 1.0), v(0.0, 0.5), v(0.0, 0.0)])[0], v(1.0, 1.5));
    }

    #[test]
    fn pid_rejects_bad_parameters() {
        assert!(error("pid", &[("umin", &1.0), ("umax", &0.0)], H).contains("umin (1) must not exceed umax (0)"));
        assert!(error("pid", &[("antiwindup", &"yes")], H).starts_with("parameter antiwindup of pid must be"));
        assert!(error("pid", &[("tf", &-0.1)], H).contains("tf of pid must be ≥ 0"));
        let e = error("pid", &[("kt", &2000.0)], H);
        assert!(e.contains("kt of pid must be at most 1/h = 1000 1/s"), "{e}");
        let h = Harness::new("pid", &[("umin", &0.5), ("umax", &2.0)], H).unwrap();
        assert_eq!(h.outputs[0], r(0.5), "initial output is the limited zero");
    }
}

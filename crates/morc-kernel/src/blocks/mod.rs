//! The first native control blocks: sources, arithmetic, nonlinearities,
//! dynamics and filters. Every block works on a signal of width `n`
//! (parameter `n`, default 1): a real port when n = 1, a vector port otherwise.
//! Other real parameters may be a scalar (broadcast) or one value per element.
//!
//! Conventions shared by all blocks:
//! - `step` never allocates, locks or panics: everything is sized in
//!   `configure` and `initialize`; NaN and infinite inputs simply propagate.
//! - Parameters that only make sense against the sample period h (frequencies
//!   below Nyquist, tracking gains) are checked in `initialize`, where h is known.
//! - Time comes from [`StepContext`](crate::component::StepContext)
//!   (integer ticks), never from a running sum.

mod dynamic;
mod filters;
mod math;
mod motion;
mod nonlinear;
mod pid;
mod sources;

use crate::component::{ComponentInfo, ParamInfo, PortInfo};
use crate::registry::{KindRegistry, MakeFn, NATIVE};
use crate::value::{Value, ValueType};

pub use dynamic::{Integrator, UnitDelay};
pub use filters::{bessel_sections, Bessel, Biquad, Lowpass, MAX_BESSEL_ORDER};
pub use math::{Gain, Product, Sum};
pub use motion::{Arm, PPi, QuinticPtp};
pub use nonlinear::{RateLimiter, Saturation};
pub use pid::Pid;
pub use sources::{Source, SourceSpec, CHIRP, CONSTANT, RAMP, SINE, STEP};

/// Registers the native blocks, in the order `morc.components()` lists them.
pub fn register(registry: &mut KindRegistry) -> Result<(), String> {
    let blocks: [(&str, &str, MakeFn); 18] = [
        (CONSTANT.kind, CONSTANT.doc, || Box::new(Source::new(&CONSTANT))),
        (STEP.kind, STEP.doc, || Box::new(Source::new(&STEP))),
        (RAMP.kind, RAMP.doc, || Box::new(Source::new(&RAMP))),
        (SINE.kind, SINE.doc, || Box::new(Source::new(&SINE))),
        (CHIRP.kind, CHIRP.doc, || Box::new(Source::new(&CHIRP))),
        (Gain::KIND, Gain::DOC, || Box::new(Gain::new())),
        (Sum::KIND, Sum::DOC, || Box::new(Sum::new())),
        (Product::KIND, Product::DOC, || Box::new(Product::new())),
        (Saturation::KIND, Saturation::DOC, || Box::new(Saturation::new())),
        (RateLimiter::KIND, RateLimiter::DOC, || Box::new(RateLimiter::new())),
        (Integrator::KIND, Integrator::DOC, || Box::new(Integrator::new())),
        (UnitDelay::KIND, UnitDelay::DOC, || Box::new(UnitDelay::new())),
        (Pid::KIND, Pid::DOC, || Box::new(Pid::new())),
        (Lowpass::KIND, Lowpass::DOC, || Box::new(Lowpass::new())),
        (Bessel::KIND, Bessel::DOC, || Box::new(Bessel::new())),
        (QuinticPtp::KIND, QuinticPtp::DOC, || Box::new(QuinticPtp::new())),
        (PPi::KIND, PPi::DOC, || Box::new(PPi::new())),
        (Arm::KIND, Arm::DOC, || Box::new(Arm::new())),
    ];
    for (name, doc, make) in blocks {
        registry.register_fn(name, doc, NATIVE, make)?;
    }
    Ok(())
}

/// The port type of a block signal of width n.
pub(crate) fn width_type(n: i64) -> ValueType {
    if n == 1 {
        ValueType::Real
    } else {
        ValueType::Vector(n as usize)
    }
}

/// Reads and checks the width parameter `n`.
pub(crate) fn width(info: &ComponentInfo) -> Result<usize, String> {
    let n = info.integer("n");
    if !(1..=4096).contains(&n) {
        return Err(format!("parameter n (signal width) must be between 1 and 4096, got {n}"));
    }
    Ok(n as usize)
}

/// The `n` parameter every block has.
pub(crate) fn width_param() -> ParamInfo {
    ParamInfo::new("n", Value::Integer(1)).doc("signal width")
}

/// A real parameter as one value per element (a scalar is broadcast), with
/// an error that names the block and the parameter.
pub(crate) fn per_element(info: &ComponentInfo, name: &str, n: usize) -> Result<Vec<f64>, String> {
    info.vector(name, n).map_err(|e| format!("parameter {name} of {} must be a scalar or {n} values (one per element): {e}", info.kind))
}

/// Gives every port of the block the signal type of width n.
pub(crate) fn set_port_types(info: &mut ComponentInfo, n: usize) {
    let ty = width_type(n as i64);
    info.inputs.iter_mut().chain(info.outputs.iter_mut()).for_each(|p: &mut PortInfo| p.ty = ty);
}

/// Clamps u into [lower, upper] but lets NaN through (unlike `f64::max`,
/// which would silently replace it by a limit). Never panics.
#[inline]
pub(crate) fn limit(u: f64, lower: f64, upper: f64) -> f64 {
    if u < lower {
        lower
    } else if u > upper {
        upper
    } else {
        u
    }
}

/// Checks that every value of `values` is finite.
pub(crate) fn check_finite(kind: &str, name: &str, values: &[f64]) -> Result<(), String> {
    match values.iter().find(|x| !x.is_finite()) {
        Some(x) => Err(format!("parameter {name} of {kind} must be finite, got {x}")),
        None => Ok(()),
    }
}

/// Checks lower ≤ upper element-wise (NaN limits are rejected too).
pub(crate) fn check_limits(kind: &str, (lower_name, lower): (&str, &[f64]), (upper_name, upper): (&str, &[f64])) -> Result<(), String> {
    for (lo, hi) in lower.iter().zip(upper) {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Err(format!("parameters of {kind}: {lower_name} ({lo}) must not exceed {upper_name} ({hi})"));
        }
    }
    Ok(())
}

/// Checks that frequencies (Hz) are below the Nyquist frequency of sample
/// period `h`, and positive (or, with `allow_zero`, non-negative).
pub(crate) fn check_below_nyquist(kind: &str, name: &str, values: &[f64], h: f64, allow_zero: bool) -> Result<(), String> {
    let nyquist = 0.5 / h;
    for &f in values {
        let low_ok = if allow_zero { f >= 0.0 } else { f > 0.0 };
        if !(low_ok && f < nyquist) {
            return Err(format!(
                "parameter {name} of {kind} must be {} and below the Nyquist frequency {} Hz (sample period {} ms), got {f}",
                if allow_zero { "non-negative" } else { "positive" },
                short(nyquist),
                short(h * 1e3),
            ));
        }
    }
    Ok(())
}

/// A number for messages: up to 6 significant digits, no trailing zeros,
/// so that 1e-3 s · 1e3 prints as 1 and not 1.0000000000000002.
fn short(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
pub(crate) mod harness;

#[cfg(test)]
mod tests {
    use super::harness::Harness;
    use super::*;

    #[test]
    fn every_kind_documents_itself_and_runs_with_defaults() {
        let mut blocks = KindRegistry::new();
        register(&mut blocks).unwrap();
        assert_eq!(blocks.len(), 18);
        for kind in blocks.kinds() {
            let block = (kind.make)().unwrap();
            assert_eq!(block.info().kind, kind.name);
            assert_eq!(block.info().doc, kind.doc, "{}: KINDS doc and info doc differ", kind.name);
            assert!(kind.doc.len() > 20, "{}: doc too short", kind.name);
            for n in [1.0, 3.0] {
                let mut h = Harness::new(&kind.name, &[("n", &n)], 1e-3).unwrap_or_else(|e| panic!("{}: {e}", kind.name));
                // Every input at once: NaN, infinities, huge values: no panic, no allocation.
                for x in [0.0, 1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300, 0.0] {
                    let inputs: Vec<Value> = h
                        .block
                        .info()
                        .inputs
                        .iter()
                        .map(|p| Value::zero(p.ty))
                        .map(|mut v| {
                            v.set_real(x);
                            v
                        })
                        .collect();
                    h.step(&inputs);
                }
            }
        }
    }

    #[test]
    fn limit_propagates_nan() {
        assert_eq!(limit(2.0, -1.0, 1.0), 1.0);
        assert_eq!(limit(-2.0, -1.0, 1.0), -1.0);
        assert_eq!(limit(0.5, -1.0, 1.0), 0.5);
        assert!(limit(f64::NAN, -1.0, 1.0).is_nan());
    }

    #[test]
    fn nyquist_message_names_everything() {
        let e = check_below_nyquist("bessel", "fc", &[800.0], 1e-3, false).unwrap_err();
        assert_eq!(e, "parameter fc of bessel must be positive and below the Nyquist frequency 500 Hz (sample period 1 ms), got 800");
        assert!(check_below_nyquist("sine", "frequency", &[0.0, 499.0], 1e-3, true).is_ok());
        assert!(check_below_nyquist("x", "f", &[f64::NAN], 1e-3, true).is_err());
    }
}

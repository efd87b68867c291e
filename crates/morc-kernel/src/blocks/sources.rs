//! Signal sources: no inputs, one output `y` that is a function of time only.
//! All five kinds share one component, [`Source`], told apart by a [`Waveform`].

use std::f64::consts::TAU;

use super::{check_below_nyquist, check_finite, per_element, set_port_types, width, width_param};
use crate::component::*;
use crate::value::{Value, ValueType};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waveform {
    Constant,
    Step,
    Ramp,
    Sine,
    Chirp,
}

/// Most parameters a waveform has (besides `n`).
const MAX_PARAMS: usize = 5;

/// A parameter of a waveform: name, default, unit, doc.
type ParamSpec = (&'static str, f64, &'static str, &'static str);

/// What distinguishes one source kind from another.
pub struct SourceSpec {
    /// Kind name in the registry.
    pub kind: &'static str,
    /// Help text: the waveform's formula.
    pub doc: &'static str,
    waveform: Waveform,
    /// In the order the waveform's formula reads them.
    params: &'static [ParamSpec],
}

/// The "constant" kind.
pub const CONSTANT: SourceSpec = SourceSpec {
    kind: "constant",
    doc: "Constant source: y = value for all t (value in the signal's unit).",
    waveform: Waveform::Constant,
    params: &[("value", 0.0, "", "the output value")],
};

/// The "step" kind.
pub const STEP: SourceSpec = SourceSpec {
    kind: "step",
    doc: "Step source: y = initial before `time` (s), y = final from the first sample at t ≥ time.",
    waveform: Waveform::Step,
    params: &[("initial", 0.0, "", "output before the step"), ("final", 1.0, "", "output from the step on"), ("time", 1.0, "s", "when the step happens")],
};

/// The "ramp" kind.
pub const RAMP: SourceSpec = SourceSpec {
    kind: "ramp",
    doc: "Ramp source: y = initial + slope·max(0, t − start), slope in units/s, start in s.",
    waveform: Waveform::Ramp,
    params: &[("slope", 1.0, "", "rate of change after the start, in signal units per second"), ("start", 0.0, "s", "when the ramp starts"), ("initial", 0.0, "", "output before the start")],
};

/// The "sine" kind.
pub const SINE: SourceSpec = SourceSpec {
    kind: "sine",
    doc: "Sine source: y = offset + amplitude·sin(2π·frequency·t + phase), frequency in Hz, phase in rad.",
    waveform: Waveform::Sine,
    params: &[
        ("amplitude", 1.0, "", "peak deviation from the offset"),
        ("frequency", 1.0, "Hz", "frequency, below the Nyquist frequency 1/(2h)"),
        ("phase", 0.0, "rad", "phase at t = 0"),
        ("offset", 0.0, "", "mean value"),
    ],
};

/// The "chirp" kind.
pub const CHIRP: SourceSpec = SourceSpec {
    kind: "chirp",
    doc: "Linear chirp: y = offset + amplitude·sin(2π·(f0·t + (f1 − f0)·t²/(2·duration))), sweeping f0 → f1 Hz over duration s, then continuing at f1.",
    waveform: Waveform::Chirp,
    params: &[
        ("amplitude", 1.0, "", "peak deviation from the offset"),
        ("f0", 0.1, "Hz", "frequency at t = 0"),
        ("f1", 10.0, "Hz", "frequency at t = duration and after"),
        ("duration", 10.0, "s", "length of the sweep"),
        ("offset", 0.0, "", "mean value"),
    ],
};

/// A source of one of the [`Waveform`]s.
pub struct Source {
    info: ComponentInfo,
    waveform: Waveform,
    /// Per element, the waveform's parameters in [`SourceSpec::params`] order.
    params: Vec<[f64; MAX_PARAMS]>,
    /// Step only: per element, the first tick at which the output is `final`.
    /// Compared with the integer tick so that a step at t = 3 ms with h = 1 ms
    /// happens at tick 3 whatever 3·0.001 rounds to.
    switch_tick: Vec<f64>,
}

impl Source {
    /// A source of the kind `spec` describes, with that kind's default parameters.
    pub fn new(spec: &SourceSpec) -> Self {
        let mut info = ComponentInfo::new(spec.kind, spec.doc).param(width_param());
        for &(name, default, unit, doc) in spec.params {
            info = info.param(ParamInfo::new(name, Value::Real(default)).unit(unit).doc(doc));
        }
        info = info.output(PortInfo::new("y", ValueType::Real));
        Source { info, waveform: spec.waveform, params: Vec::new(), switch_tick: Vec::new() }
    }

    /// The value of element `i` at tick `tick`, time `t`.
    #[inline]
    fn value(&self, i: usize, tick: f64, t: f64) -> f64 {
        let p = &self.params[i];
        match self.waveform {
            Waveform::Constant => p[0],
            Waveform::Step => {
                if tick >= self.switch_tick[i] {
                    p[1]
                } else {
                    p[0]
                }
            }
            Waveform::Ramp => p[2] + p[0] * (t - p[1]).max(0.0),
            Waveform::Sine => {
                let [amplitude, frequency, phase, offset, _] = *p;
                offset + amplitude * (TAU * cycles_fraction(frequency * t) + phase).sin()
            }
            Waveform::Chirp => {
                let [amplitude, f0, f1, duration, offset] = *p;
                let sweep = t.min(duration);
                // Cycles completed: ∫ f dt with f rising linearly, then constant at f1.
                let cycles = f0 * sweep + 0.5 * (f1 - f0) * sweep * sweep / duration + f1 * (t - sweep);
                offset + amplitude * (TAU * cycles_fraction(cycles)).sin()
            }
        }
    }

    fn param_names(&self) -> impl Iterator<Item = &str> {
        // Every parameter after `n`, in declaration order.
        self.info.params[1..].iter().map(|p| p.name.as_str())
    }
}

/// The fractional part of a number of cycles: keeps the sine's argument small
/// so that precision does not decay as t grows.
#[inline]
fn cycles_fraction(cycles: f64) -> f64 {
    cycles - cycles.floor()
}

impl Component for Source {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        let kind = self.info.kind.clone();
        let mut params = vec![[0.0; MAX_PARAMS]; n];
        let names: Vec<String> = self.param_names().map(str::to_string).collect();
        for (j, name) in names.iter().enumerate() {
            let values = per_element(&self.info, name, n)?;
            check_finite(&kind, name, &values)?;
            for (p, v) in params.iter_mut().zip(values) {
                p[j] = v;
            }
        }
        if self.waveform == Waveform::Chirp {
            if let Some(p) = params.iter().find(|p| p[3] <= 0.0) {
                return Err(format!("parameter duration of chirp must be positive, got {}", p[3]));
            }
        }
        self.params = params;
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        let h = ctx.period;
        let column = |j: usize| self.params.iter().map(|p| p[j]).collect::<Vec<f64>>();
        match self.waveform {
            Waveform::Sine => check_below_nyquist(&self.info.kind, "frequency", &column(1), h, true)?,
            Waveform::Chirp => {
                check_below_nyquist(&self.info.kind, "f0", &column(1), h, true)?;
                check_below_nyquist(&self.info.kind, "f1", &column(2), h, true)?;
            }
            Waveform::Step => {
                // The tolerance absorbs rounding in time/h (0.003/0.001 = 2.9999999999999996).
                self.switch_tick = self.params.iter().map(|p| (p[2] / h - 1e-9).ceil().max(0.0)).collect();
            }
            Waveform::Constant | Waveform::Ramp => {}
        }
        // Readers that see this block before its first step get the value at t = 0.
        for (i, y) in outputs[0].as_mut_slice().iter_mut().enumerate() {
            *y = self.value(i, 0.0, 0.0);
        }
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, _inputs: &[Value], outputs: &mut [Value]) -> Step {
        let tick = ctx.step as f64;
        for (i, y) in outputs[0].as_mut_slice().iter_mut().enumerate().take(self.params.len()) {
            *y = self.value(i, tick, ctx.time);
        }
        Step::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{assert_close, error, simulate, source, Harness};
    use crate::value::Value;
    use std::f64::consts::TAU;

    const H: f64 = 1e-3;

    #[test]
    fn constant_holds_its_value_per_element() {
        assert_eq!(source("constant", &[("value", &2.5)], H, 3), [2.5; 3]);
        let out = simulate("constant", &[("n", &2.0), ("value", &[1.0, -1.0])], H, &[vec![], vec![]]);
        assert_eq!(out[1][0], Value::Vector(vec![1.0, -1.0]));
        // The initial output is there before the first step.
        let h = Harness::new("constant", &[("value", &4.0)], H).unwrap();
        assert_eq!(h.outputs[0], Value::Real(4.0));
    }

    #[test]
    fn step_switches_at_the_exact_tick() {
        let y = source("step", &[("initial", &-1.0), ("final", &2.0), ("time", &0.003)], H, 6);
        assert_eq!(y, [-1.0, -1.0, -1.0, 2.0, 2.0, 2.0]);
        // Between samples: the first sample at or after the step time.
        let y = source("step", &[("time", &0.0025)], H, 4);
        assert_eq!(y, [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(source("step", &[("time", &0.0)], H, 2), [1.0, 1.0]);
    }

    #[test]
    fn ramp_rises_after_start() {
        let y = source("ramp", &[("slope", &2.0), ("start", &0.002), ("initial", &1.0)], H, 5);
        for (k, y) in y.iter().enumerate() {
            let t = k as f64 * H;
            assert_close(*y, 1.0 + 2.0 * (t - 0.002).max(0.0), 1e-15, "ramp");
        }
    }

    #[test]
    fn sine_matches_formula_and_hits_its_peaks() {
        let params: &[(&str, &dyn super::super::harness::ToValue)] = &[("amplitude", &2.0), ("frequency", &5.0), ("phase", &0.3), ("offset", &1.0)];
        let y = source("sine", params, H, 1000);
        for (k, y) in y.iter().enumerate() {
            let t = k as f64 * H;
            assert_close(*y, 1.0 + 2.0 * (TAU * 5.0 * t + 0.3).sin(), 1e-12, "sine");
        }
        // 5 Hz, no phase: quarter period is 50 ms = tick 50.
        let y = source("sine", &[("frequency", &5.0)], H, 51);
        assert_close(y[50], 1.0, 1e-12, "sine peak");
        assert_close(y[0], 0.0, 0.0, "sine at 0");
    }

    #[test]
    fn sine_stays_accurate_after_a_long_run() {
        // At t = 10^6 s a naive sin(2π f t) has lost ~1e-10 rad; the cycle fraction keeps it exact.
        let mut h = Harness::new("sine", &[("frequency", &0.25)], 1.0).unwrap();
        let ctx = crate::component::StepContext { step: 1_000_001, time: 1_000_001.0, period: 1.0 };
        let mut out = [Value::Real(0.0)];
        h.block.step(&ctx, &[], &mut out);
        assert_close(out[0].real(), 1.0, 1e-15, "sin(2π·0.25·1000001)");
    }

    #[test]
    fn chirp_sweeps_linearly_then_holds_f1() {
        let (f0, f1, duration) = (1.0, 21.0, 2.0);
        let y = source("chirp", &[("f0", &f0), ("f1", &f1), ("duration", &duration)], H, 3000);
        for (k, y) in y.iter().enumerate().step_by(7) {
            let t = k as f64 * H;
            let phase = if t <= duration { TAU * (f0 * t + (f1 - f0) * t * t / (2.0 * duration)) } else { TAU * (f0 * duration + (f1 - f0) * duration / 2.0 + f1 * (t - duration)) };
            assert_close(*y, phase.sin(), 1e-9, &format!("chirp at t = {t}"));
        }
        // A chirp with f0 = f1 is a sine.
        let chirp = source("chirp", &[("f0", &3.0), ("f1", &3.0), ("offset", &0.5)], H, 500);
        let sine = source("sine", &[("frequency", &3.0), ("offset", &0.5)], H, 500);
        for (c, s) in chirp.iter().zip(&sine) {
            assert_close(*c, *s, 1e-12, "chirp vs sine");
        }
    }

    #[test]
    fn sources_reject_bad_parameters() {
        let e = error("sine", &[("frequency", &600.0)], H);
        assert!(e.contains("frequency of sine must be non-negative and below the Nyquist frequency 500 Hz"), "{e}");
        assert!(error("chirp", &[("f1", &500.0)], H).contains("f1 of chirp"));
        assert!(error("chirp", &[("duration", &0.0)], H).contains("duration of chirp must be positive"));
        assert!(error("constant", &[("value", &f64::NAN)], H).contains("must be finite"));
        assert!(error("ramp", &[("n", &2.0), ("slope", &[1.0, 2.0, 3.0])], H).contains("2 values"));
    }
}

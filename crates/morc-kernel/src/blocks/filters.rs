//! Low-pass filters. Both start at steady state for their first input, so a
//! signal that is already non-zero passes without a start-up transient.

use std::f64::consts::TAU;

use super::{check_below_nyquist, per_element, set_port_types, width, width_param};
use crate::component::*;
use crate::value::{Value, ValueType};

/// First-order low-pass, discretised exactly for a zero-order-hold input:
/// y[k] = x[k], x[k+1] = a·x[k] + (1 − a)·u[k], a = exp(−2π·fc·h).
pub struct Lowpass {
    info: ComponentInfo,
    fc: Vec<f64>,
    /// 1 − a per element.
    gain: Vec<f64>,
    state: Vec<f64>,
    started: bool,
}

impl Lowpass {
    /// Kind name in the registry.
    pub const KIND: &'static str = "lowpass";
    /// Help text: the transfer function and its discretisation.
    pub const DOC: &'static str = "First-order low-pass Y/U = 1/(1 + s/(2π·fc)), fc in Hz, discretised exactly for inputs held over each period (y[k+1] = a·y[k] + (1 − a)·u[k], a = exp(−2π·fc·h)), starting at the first input.";

    /// A low-pass filter with default parameters.
    pub fn new() -> Self {
        Lowpass {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(ParamInfo::new("fc", Value::Real(10.0)).unit("Hz").doc("cutoff (−3 dB) frequency, below Nyquist"))
                .input(PortInfo::new("u", ValueType::Real).required())
                .output(PortInfo::new("y", ValueType::Real)),
            fc: Vec::new(),
            gain: Vec::new(),
            state: Vec::new(),
            started: false,
        }
    }
}

impl Default for Lowpass {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Lowpass {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        self.fc = per_element(&self.info, "fc", n)?;
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        check_below_nyquist(Self::KIND, "fc", &self.fc, ctx.period, false)?;
        // 1 − exp(−x) without cancellation for small x = 2π·fc·h.
        self.gain = self.fc.iter().map(|fc| -(-TAU * fc * ctx.period).exp_m1()).collect();
        self.state = vec![0.0; self.fc.len()];
        self.started = false;
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let u = inputs[0].as_slice();
        if !self.started {
            self.state.iter_mut().zip(u).for_each(|(x, u)| *x = *u);
            self.started = true;
        }
        for (((y, u), x), gain) in outputs[0].as_mut_slice().iter_mut().zip(u).zip(&mut self.state).zip(&self.gain) {
            *y = *x;
            // x + g·(u − x) rather than a·x + g·u: stays exactly at a constant input.
            *x += gain * (u - *x);
        }
        Step::Continue
    }
}

/// Highest Bessel filter order offered.
pub const MAX_BESSEL_ORDER: usize = 8;

/// One second-order section y/u = (b0 + b1·z⁻¹ + b2·z⁻²)/(1 + a1·z⁻¹ + a2·z⁻²);
/// first-order sections have b2 = a2 = 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Biquad {
    /// Numerator coefficients b0, b1, b2.
    pub b: [f64; 3],
    /// Denominator coefficients a1, a2 (a0 = 1).
    pub a: [f64; 2],
}

impl Biquad {
    /// Gain at z = 1.
    fn dc_gain(&self) -> f64 {
        (self.b[0] + self.b[1] + self.b[2]) / (1.0 + self.a[0] + self.a[1])
    }

    /// One step in transposed direct form II; `s` is the section's state.
    #[inline]
    pub fn step(&self, s: &mut [f64; 2], u: f64) -> f64 {
        let y = self.b[0] * u + s[0];
        s[0] = self.b[1] * u - self.a[0] * y + s[1];
        s[1] = self.b[2] * u - self.a[1] * y;
        y
    }

    /// The state in which a constant input u gives a constant output; returns that output.
    pub fn rest_at(&self, s: &mut [f64; 2], u: f64) -> f64 {
        let y = self.dc_gain() * u;
        s[1] = self.b[2] * u - self.a[1] * y;
        s[0] = self.b[1] * u - self.a[0] * y + s[1];
        y
    }

    /// The frequency response at z = e^{jθ}.
    #[cfg(test)]
    fn response(&self, theta: f64) -> Complex {
        let z1 = Complex::expj(-theta);
        let z2 = z1 * z1;
        let num = Complex::real(self.b[0]) + z1.scale(self.b[1]) + z2.scale(self.b[2]);
        let den = Complex::real(1.0) + z1.scale(self.a[0]) + z2.scale(self.a[1]);
        num / den
    }
}

/// Bessel low-pass of order 1..8 as cascaded biquads.
pub struct Bessel {
    info: ComponentInfo,
    fc: Vec<f64>,
    /// Poles of the analog prototype with −3 dB at 1 rad/s, one per
    /// section: the upper of each conjugate pair, or the real pole.
    prototype: Vec<Complex>,
    /// Per element, its sections one after the other.
    sections: Vec<Biquad>,
    states: Vec<[f64; 2]>,
    started: bool,
}

impl Bessel {
    /// Kind name in the registry.
    pub const KIND: &'static str = "bessel";
    /// Help text: the filter and its discretisation.
    pub const DOC: &'static str = "Bessel low-pass of order 1–8 (maximally flat group delay, step overshoot < 1%): −3 dB at fc Hz, bilinear transform prewarped at fc, starting at the first input.";

    /// A Bessel filter with default parameters.
    pub fn new() -> Self {
        Bessel {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(ParamInfo::new("fc", Value::Real(10.0)).unit("Hz").doc("−3 dB frequency, below Nyquist"))
                .param(ParamInfo::new("order", Value::Integer(2)).doc("filter order, 1 to 8"))
                .input(PortInfo::new("u", ValueType::Real).required())
                .output(PortInfo::new("y", ValueType::Real)),
            fc: Vec::new(),
            prototype: Vec::new(),
            sections: Vec::new(),
            states: Vec::new(),
            started: false,
        }
    }

    /// The per-element section slices, for tests.
    #[cfg(test)]
    fn element_sections(&self, i: usize) -> &[Biquad] {
        let m = self.prototype.len();
        &self.sections[i * m..(i + 1) * m]
    }
}

impl Default for Bessel {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Bessel {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        let order = self.info.integer("order");
        if !(1..=MAX_BESSEL_ORDER as i64).contains(&order) {
            return Err(format!("parameter order of bessel must be between 1 and {MAX_BESSEL_ORDER}, got {order}"));
        }
        self.fc = per_element(&self.info, "fc", n)?;
        self.prototype = section_poles(&bessel_prototype(order as usize));
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        check_below_nyquist(Self::KIND, "fc", &self.fc, ctx.period, false)?;
        self.sections = self.fc.iter().flat_map(|fc| bilinear_sections(&self.prototype, *fc, ctx.period)).collect();
        self.states = vec![[0.0; 2]; self.sections.len()];
        self.started = false;
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let m = self.prototype.len();
        let u = inputs[0].as_slice();
        let per_element = self.sections.chunks_exact(m).zip(self.states.chunks_exact_mut(m));
        for ((y, u), (sections, states)) in outputs[0].as_mut_slice().iter_mut().zip(u).zip(per_element) {
            let mut signal = *u;
            for (section, state) in sections.iter().zip(states) {
                signal = if self.started { section.step(state, signal) } else { section.rest_at(state, signal) };
            }
            *y = signal;
        }
        self.started = true;
        Step::Continue
    }
}

/// The sections of a Bessel low-pass of `order` (1..=8) with −3 dB at `fc` Hz, sampled every
/// `period` s: run a signal through them one after the other with [`Biquad::step`].
pub fn bessel_sections(order: usize, fc: f64, period: f64) -> Vec<Biquad> {
    bilinear_sections(&section_poles(&bessel_prototype(order)), fc, period)
}

/// Coefficients a_0..a_N of the reverse Bessel polynomial θ_N(s) = Σ a_k·s^k,
/// a_k = (2N − k)! / (2^(N−k)·k!·(N − k)!). θ_N(0)/θ_N(s) is the Bessel
/// low-pass with unit group delay at DC.
fn reverse_bessel_polynomial(order: usize) -> Vec<f64> {
    let factorial = |m: usize| (1..=m).map(|i| i as f64).product::<f64>();
    (0..=order).map(|k| factorial(2 * order - k) / (2f64.powi((order - k) as i32) * factorial(k) * factorial(order - k))).collect()
}

/// Roots of a polynomial given by coefficients c_0..c_N (c_N ≠ 0), by
/// Durand–Kerner iteration; well conditioned enough for Bessel orders ≤ 8.
fn polynomial_roots(c: &[f64]) -> Vec<Complex> {
    let order = c.len() - 1;
    let monic: Vec<f64> = c.iter().map(|x| x / c[order]).collect();
    let eval = |s: Complex| monic.iter().rev().fold(Complex::real(0.0), |acc, &x| acc * s + Complex::real(x));
    // Start on a circle of the roots' geometric-mean radius, off the real axis.
    let radius = monic[0].abs().powf(1.0 / order as f64);
    let mut roots: Vec<Complex> = (0..order).map(|k| Complex::expj(0.4 + TAU * k as f64 / order as f64).scale(radius)).collect();
    for _ in 0..1000 {
        let mut largest_change: f64 = 0.0;
        for i in 0..order {
            let others = (0..order).filter(|&j| j != i).fold(Complex::real(1.0), |acc, j| acc * (roots[i] - roots[j]));
            let change = eval(roots[i]) / others;
            roots[i] = roots[i] - change;
            largest_change = largest_change.max(change.abs() / radius);
        }
        if largest_change < 1e-15 {
            break;
        }
    }
    roots
}

/// Poles of the Bessel prototype of `order` with its −3 dB point at 1 rad/s.
fn bessel_prototype(order: usize) -> Vec<Complex> {
    let theta = reverse_bessel_polynomial(order);
    let poles = polynomial_roots(&theta);
    // |H(jω)|² with H = θ(0)/θ(s) falls monotonically: bisect for |H|² = 1/2.
    let gain_squared = |w: f64| {
        let s = Complex::new(0.0, w);
        let value = theta.iter().rev().fold(Complex::real(0.0), |acc, &x| acc * s + Complex::real(x));
        (theta[0] / value.abs()).powi(2)
    };
    let (mut low, mut high) = (0.0, 2.0 * order as f64 + 2.0);
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if gain_squared(mid) > 0.5 {
            low = mid;
        } else {
            high = mid;
        }
    }
    let w3db = 0.5 * (low + high);
    poles.into_iter().map(|p| p.scale(1.0 / w3db)).collect()
}

/// One pole per section: the upper pole of each conjugate pair, then the real
/// pole (odd orders). Sorted for a fixed section order (least damped last,
/// so that its peaking acts on an already smoothed signal).
fn section_poles(poles: &[Complex]) -> Vec<Complex> {
    let scale = poles.iter().map(|p| p.abs()).fold(0.0, f64::max);
    let mut sections: Vec<Complex> = poles
        .iter()
        .filter(|p| p.im > 1e-9 * scale)
        .copied()
        .chain(poles.iter().filter(|p| p.im.abs() <= 1e-9 * scale).map(|p| Complex::real(p.re)))
        .collect();
    sections.sort_by(|a, b| (a.re / a.abs()).total_cmp(&(b.re / b.abs())));
    sections
}

/// Discretises prototype sections (−3 dB at 1 rad/s) for cutoff `fc` Hz at
/// sample period `h` by the bilinear transform s = K·(z − 1)/(z + 1),
/// K = ωc / tan(ωc·h/2), which maps the analog ωc onto the digital ωc exactly.
fn bilinear_sections(prototype: &[Complex], fc: f64, h: f64) -> Vec<Biquad> {
    let wc = TAU * fc;
    let k = wc / (0.5 * wc * h).tan();
    prototype
        .iter()
        .map(|p| {
            // Pole of the analog filter relative to K, so that the terms stay O(1).
            let q = p.scale(wc / k);
            if p.im == 0.0 {
                // w/(s + w), w = −q (relative to K).
                let w = -q.re;
                let a1 = (w - 1.0) / (1.0 + w);
                // b0 = w/(1 + w), written as (1 + a1)/2 so the DC gain is exactly 1
                // for the rounded a1 (a1 → −1 as fc·h → 0, and 1 + a1 cancels).
                let b0 = 0.5 * (1.0 + a1);
                Biquad { b: [b0, b0, 0.0], a: [a1, 0.0] }
            } else {
                // w0²/(s² + a·s + w0²) with a = −2·Re q, w0² = |q|².
                let (a, w0_squared) = (-2.0 * q.re, q.re * q.re + q.im * q.im);
                let d0 = 1.0 + a + w0_squared;
                let denominator = [2.0 * (w0_squared - 1.0) / d0, (1.0 - a + w0_squared) / d0];
                // b0 = w0²/d0, written as (1 + a1 + a2)/4 so the DC gain is exactly 1
                // for the rounded denominator.
                let b0 = 0.25 * (1.0 + denominator[0] + denominator[1]);
                Biquad { b: [b0, 2.0 * b0, b0], a: denominator }
            }
        })
        .collect()
}

/// Just enough complex arithmetic for filter design (no dependency needed).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex {
    pub re: f64,
    pub im: f64,
}

impl Complex {
    pub fn new(re: f64, im: f64) -> Self {
        Complex { re, im }
    }
    pub fn real(re: f64) -> Self {
        Complex { re, im: 0.0 }
    }
    /// e^{jθ}
    pub fn expj(theta: f64) -> Self {
        Complex { re: theta.cos(), im: theta.sin() }
    }
    pub fn scale(self, x: f64) -> Self {
        Complex { re: self.re * x, im: self.im * x }
    }
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
    #[cfg(test)]
    pub fn arg(self) -> f64 {
        self.im.atan2(self.re)
    }
}

impl std::ops::Add for Complex {
    type Output = Complex;
    fn add(self, o: Complex) -> Complex {
        Complex::new(self.re + o.re, self.im + o.im)
    }
}
impl std::ops::Sub for Complex {
    type Output = Complex;
    fn sub(self, o: Complex) -> Complex {
        Complex::new(self.re - o.re, self.im - o.im)
    }
}
impl std::ops::Mul for Complex {
    type Output = Complex;
    fn mul(self, o: Complex) -> Complex {
        Complex::new(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)
    }
}
impl std::ops::Div for Complex {
    type Output = Complex;
    fn div(self, o: Complex) -> Complex {
        let d = o.re * o.re + o.im * o.im;
        Complex::new((self.re * o.re + self.im * o.im) / d, (self.im * o.re - self.re * o.im) / d)
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{assert_close, error, simulate, siso, Harness, Params};
    use super::*;
    use std::f64::consts::FRAC_1_SQRT_2;

    const H: f64 = 1e-3;

    #[test]
    fn lowpass_step_response_is_exact_at_the_samples() {
        // Zero, then a unit step at tick 3: y = 1 − exp(−(t − t_step)/τ), τ = 1/(2π·fc).
        let fc = 5.0;
        let tau = 1.0 / (TAU * fc);
        let mut u = vec![0.0; 3];
        u.extend([1.0; 500]);
        let y = siso("lowpass", &[("fc", &fc)], H, &u);
        for (k, y) in y.iter().enumerate() {
            let t = (k as f64 - 3.0) * H;
            let expected = if t <= 0.0 { 0.0 } else { 1.0 - (-t / tau).exp() };
            assert_close(*y, expected, 1e-13, &format!("step response at tick {k}"));
        }
    }

    #[test]
    fn lowpass_starts_at_the_first_input_per_element() {
        assert!(siso("lowpass", &[("fc", &1.0)], H, &[2.5; 50]).iter().all(|y| *y == 2.5));
        let inputs: Vec<Vec<Value>> = (0..3).map(|_| vec![Value::Vector(vec![-1.0, 4.0])]).collect();
        let out = simulate("lowpass", &[("n", &2.0), ("fc", &[1.0, 100.0])], H, &inputs);
        assert_eq!(out[2][0], Value::Vector(vec![-1.0, 4.0]));
    }

    #[test]
    fn lowpass_checks_fc_against_nyquist() {
        let e = error("lowpass", &[("fc", &800.0)], H);
        assert_eq!(e, "parameter fc of lowpass must be positive and below the Nyquist frequency 500 Hz (sample period 1 ms), got 800");
        assert!(error("lowpass", &[("fc", &0.0)], H).contains("must be positive"));
    }

    #[test]
    fn reverse_bessel_polynomials_match_the_tables() {
        assert_eq!(reverse_bessel_polynomial(1), [1.0, 1.0]);
        assert_eq!(reverse_bessel_polynomial(2), [3.0, 3.0, 1.0]);
        assert_eq!(reverse_bessel_polynomial(3), [15.0, 15.0, 6.0, 1.0]);
        assert_eq!(reverse_bessel_polynomial(4), [105.0, 105.0, 45.0, 10.0, 1.0]);
    }

    /// Prototype poles sorted by imaginary part, for comparison with tables.
    fn sorted_roots(order: usize) -> Vec<Complex> {
        let mut r = polynomial_roots(&reverse_bessel_polynomial(order));
        r.sort_by(|a, b| a.im.total_cmp(&b.im));
        r
    }

    #[test]
    fn bessel_poles_match_the_unit_delay_tables() {
        // Tables of Bessel poles normalised to unit group delay (e.g. Williams & Taylor).
        let near = |p: Complex, re: f64, im: f64| (p.re - re).abs() < 1e-4 && (p.im - im).abs() < 1e-4;
        let r3 = sorted_roots(3);
        assert!(near(r3[0], -1.8389, -1.7544) && near(r3[1], -2.3222, 0.0) && near(r3[2], -1.8389, 1.7544), "{r3:?}");
        let r4 = sorted_roots(4);
        assert!(near(r4[2], -2.8962, 0.8672) && near(r4[3], -2.1038, 2.6574), "{r4:?}");
        // Every root is a root: θ(p) ≈ 0 relative to the coefficients.
        for order in 1..=MAX_BESSEL_ORDER {
            let theta = reverse_bessel_polynomial(order);
            for p in polynomial_roots(&theta) {
                let value = theta.iter().rev().fold(Complex::real(0.0), |acc, &x| acc * p + Complex::real(x));
                assert!(value.abs() < 1e-9 * theta[0], "order {order}: θ({p:?}) = {value:?}");
            }
        }
    }

    #[test]
    fn bessel_prototype_is_normalised_to_minus_3_db_at_1_rad_per_s() {
        // Order 2 in closed form: |3/(3 − ω² + 3jω)|² = 1/2 ⇔ ω⁴ + 3ω² − 9 = 0.
        let w3 = ((45f64.sqrt() - 3.0) / 2.0).sqrt();
        let poles = section_poles(&bessel_prototype(2));
        assert_close(poles[0].re, -1.5 / w3, 1e-12, "order 2 pole, real part");
        assert_close(poles[0].im, 0.75f64.sqrt() / w3, 1e-12, "order 2 pole, imaginary part");
        for order in 1..=MAX_BESSEL_ORDER {
            let poles = bessel_prototype(order);
            let gain = poles.iter().fold(1.0, |g, p| g * p.abs() / (Complex::new(0.0, 1.0) - *p).abs());
            assert_close(gain, FRAC_1_SQRT_2, 1e-12, &format!("order {order} prototype gain at 1 rad/s"));
            let sections = section_poles(&poles);
            assert_eq!(sections.len(), order.div_ceil(2));
        }
    }

    /// The configured block's digital sections for one element.
    fn designed(order: i64, fc: f64, h: f64) -> Vec<Biquad> {
        let params: &Params = &[("order", &order), ("fc", &fc)];
        let mut block = Bessel::new();
        for (name, value) in params {
            block.set_parameter(name, &value.to_value()).unwrap();
        }
        block.configure().unwrap();
        let data = crate::data::AssemblyData::new();
        let ctx = InitContext { name: "test", period: h, base_period: h, data: &data, thread: &Default::default(), base_latency: 0 };
        block.initialize(&ctx, &mut [Value::Real(0.0)]).unwrap();
        block.element_sections(0).to_vec()
    }

    fn response(sections: &[Biquad], f: f64, h: f64) -> Complex {
        sections.iter().fold(Complex::real(1.0), |acc, s| acc * s.response(TAU * f * h))
    }

    #[test]
    fn bessel_digital_gain_is_1_at_dc_and_minus_3_db_at_fc() {
        for order in 1..=MAX_BESSEL_ORDER as i64 {
            for (fc, h) in [(10.0, H), (200.0, H), (1.0, 1e-4)] {
                let sections = designed(order, fc, h);
                assert_eq!(sections.len(), (order as usize).div_ceil(2));
                let dc = sections.iter().map(Biquad::dc_gain).product::<f64>();
                assert_close(dc, 1.0, 1e-12, &format!("order {order} DC gain"));
                let at_fc = response(&sections, fc, h).abs();
                // The brief asks for 1%; prewarping makes it exact.
                assert_close(at_fc, FRAC_1_SQRT_2, 1e-9, &format!("order {order}, fc {fc} Hz, gain at fc"));
                assert!(response(&sections, 0.5 / h * 0.999, h).abs() < at_fc, "order {order} low-pass");
            }
        }
    }

    #[test]
    fn bessel_step_response_barely_overshoots() {
        for order in 1..=MAX_BESSEL_ORDER as i64 {
            let mut u = vec![0.0; 2];
            u.extend([1.0; 2000]);
            let y = siso("bessel", &[("order", &order), ("fc", &10.0)], H, &u);
            let peak = y.iter().copied().fold(f64::MIN, f64::max);
            assert!(peak - 1.0 < 0.01, "order {order}: overshoot {:.3}%", 100.0 * (peak - 1.0));
            assert_close(y[u.len() - 1], 1.0, 1e-6, &format!("order {order} settles"));
        }
    }

    #[test]
    fn bessel_group_delay_is_flat_in_the_passband() {
        // Group delay −dφ/dω at f, from the phase of H(f + δ)/H(f − δ) (no unwrapping needed).
        let group_delay = |sections: &[Biquad], f: f64| {
            let df = 1e-3;
            let ratio = response(sections, f + df, H) / response(sections, f - df, H);
            -ratio.arg() / (TAU * 2.0 * df)
        };
        for order in 2..=MAX_BESSEL_ORDER as i64 {
            let sections = designed(order, 10.0, H);
            let at_dc = group_delay(&sections, 0.01);
            for f in [1.0, 2.0, 3.0, 4.0, 5.0] {
                let relative = group_delay(&sections, f) / at_dc;
                assert!((relative - 1.0).abs() < 0.03, "order {order}: delay at {f} Hz is {relative:.4} of DC");
            }
            // Higher orders stay flat up to fc: Bessel's hallmark.
            if order >= 4 {
                let relative = group_delay(&sections, 10.0) / at_dc;
                assert!((relative - 1.0).abs() < 0.1, "order {order}: delay at fc is {relative:.4} of DC");
            }
        }
    }

    #[test]
    fn bessel_starts_at_the_first_input() {
        for order in 1..=MAX_BESSEL_ORDER as i64 {
            let y = siso("bessel", &[("order", &order), ("fc", &3.0)], H, &[3.7; 200]);
            for y in y {
                // Rounding in the chained sections only.
                assert_close(y, 3.7, 1e-11, &format!("order {order} at rest"));
            }
        }
        let inputs: Vec<Vec<Value>> = (0..100).map(|_| vec![Value::Vector(vec![-2.0, 5.0])]).collect();
        let out = simulate("bessel", &[("n", &2.0), ("fc", &[1.0, 50.0]), ("order", &4.0)], H, &inputs);
        let y = out[99][0].as_slice();
        assert_close(y[0], -2.0, 1e-12, "element 0");
        assert_close(y[1], 5.0, 1e-12, "element 1");
    }

    #[test]
    fn bessel_rejects_bad_parameters() {
        let e = error("bessel", &[("fc", &800.0)], H);
        assert_eq!(e, "parameter fc of bessel must be positive and below the Nyquist frequency 500 Hz (sample period 1 ms), got 800");
        assert!(error("bessel", &[("order", &9.0)], H).contains("order of bessel must be between 1 and 8, got 9"));
        assert!(error("bessel", &[("order", &0.0)], H).contains("got 0"));
        assert!(Harness::new("bessel", &[("fc", &499.0)], H).is_ok());
    }
}

//! The exciting motion of a dynamic identification as a reference: morc-model's Fourier series
//! per joint ([`FourierTrajectory`], what `BaseParameters::excite` optimises) run for `periods`
//! periods, then held where it ended:
//!
//! ```text
//! q_j(t) = q0_j + Σ_{l=1..N} a_jl/(l·ω)·sin(l·ω·t) − b_jl/(l·ω)·cos(l·ω·t),   0 ≤ t ≤ periods·2π/ω
//! ```
//!
//! with q̇ and q̈ its analytic derivatives; after the last period q stays at its value there and
//! q̇ = q̈ = 0. A series from `excite` is at rest at t = 0 and so at every period's end, so a run of
//! whole periods ends at rest where it started. Before t = 0 it is at its start.
//!
//! Built off the real-time path ([`FourierExcitation::new`] checks the coefficients);
//! [`FourierExcitation::sample`] allocates nothing.

use std::f64::consts::PI;

use morc_model::FourierTrajectory;

/// A Fourier excitation run for a number of periods, then held at rest.
#[derive(Clone, Debug, PartialEq)]
pub struct FourierExcitation {
    series: FourierTrajectory,
    periods: f64,
    /// periods·2π/ω, computed as the identify library's Lua component did (the same bits).
    stop: f64,
    /// Where it starts (t = 0) and where it is held (t = stop).
    start: Vec<f64>,
    end: Vec<f64>,
}

impl FourierExcitation {
    /// The series run for `periods` periods (a number > 0; whole periods end at rest). Says what is
    /// wrong otherwise: ω not > 0, coefficients of another count than order × joints, a number
    /// that is not finite.
    pub fn new(series: FourierTrajectory, periods: f64) -> Result<FourierExcitation, String> {
        let (n, order) = (series.q0.len(), series.order());
        if !(series.omega > 0.0 && series.omega.is_finite()) {
            return Err(format!("the base frequency omega must be a finite number > 0 rad/s, is {}", series.omega));
        }
        if !(periods > 0.0 && periods.is_finite()) {
            return Err(format!("periods must be a finite number > 0, is {periods}"));
        }
        if n == 0 || order == 0 {
            return Err("the series needs one offset q0 per joint and order ≥ 1 coefficients a, b per joint".into());
        }
        if series.a.len() != n || series.b.len() != n || series.a.iter().chain(&series.b).any(|c| c.len() != order) {
            return Err(format!("{n} joints of order {order} need {n} × {order} coefficients a and b each"));
        }
        if series.q0.iter().chain(series.a.iter().flatten()).chain(series.b.iter().flatten()).any(|x| !x.is_finite()) {
            return Err("a coefficient or offset is not a finite number".into());
        }
        let stop = periods * 2.0 * PI / series.omega;
        let (mut start, mut end, mut v, mut a) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        series.sample(0.0, &mut start, &mut v, &mut a);
        series.sample(stop, &mut end, &mut v, &mut a);
        Ok(FourierExcitation { series, periods, stop, start, end })
    }

    /// The series of base frequency `omega` from flat coefficients as `id:excite` gives them:
    /// `q0` one per joint, `a` and `b` joint by joint (`a[j·order + l − 1]` = a_jl), the order
    /// being `a.len() / q0.len()`.
    pub fn from_coefficients(omega: f64, q0: &[f64], a: &[f64], b: &[f64], periods: f64) -> Result<FourierExcitation, String> {
        let n = q0.len();
        if n == 0 || a.is_empty() || !a.len().is_multiple_of(n) || a.len() != b.len() {
            return Err(format!("q0 has {n} offsets (one per joint), so a and b need order × {n} coefficients each; a has {}, b has {}", a.len(), b.len()));
        }
        let order = a.len() / n;
        let rows = |c: &[f64]| c.chunks(order).map(<[f64]>::to_vec).collect();
        FourierExcitation::new(FourierTrajectory { omega, q0: q0.to_vec(), a: rows(a), b: rows(b) }, periods)
    }

    /// The Fourier series it runs.
    pub fn series(&self) -> &FourierTrajectory {
        &self.series
    }

    /// Number of joints.
    pub fn dof(&self) -> usize {
        self.start.len()
    }

    /// The series' order N (harmonics per joint).
    pub fn order(&self) -> usize {
        self.series.order()
    }

    /// Number of periods run.
    pub fn periods(&self) -> f64 {
        self.periods
    }

    /// One period, 2π/ω (s).
    pub fn period(&self) -> f64 {
        self.series.period()
    }

    /// Time of the last period's end (s), after which it holds.
    pub fn duration(&self) -> f64 {
        self.stop
    }

    /// Joint positions at t = 0.
    pub fn start(&self) -> &[f64] {
        &self.start
    }

    /// Joint positions where it is held after its last period.
    pub fn end(&self) -> &[f64] {
        &self.end
    }

    /// Position, velocity and acceleration at time `t` (s): the series within [0, duration],
    /// its start before (at rest), its end after (at rest). Slices are `dof` long.
    pub fn sample(&self, t: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        if t >= self.stop {
            q.copy_from_slice(&self.end);
            qd.fill(0.0);
            qdd.fill(0.0);
        } else if t <= 0.0 {
            q.copy_from_slice(&self.start);
            qd.fill(0.0);
            qdd.fill(0.0);
        } else {
            self.series.sample(t, q, qd, qdd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::TAU;

    /// Two joints of order 3 from free parameters: at rest at t = 0 by construction.
    fn excitation(periods: f64) -> FourierExcitation {
        let x = [0.3, -0.2, 0.1, 0.05, -0.4, 0.2, 0.4, 0.1, -0.3, 0.25];
        FourierExcitation::new(FourierTrajectory::from_free(TAU * 0.25, 3, &x), periods).unwrap()
    }

    #[test]
    fn derivatives_are_those_of_the_position() {
        let e = excitation(2.0);
        let (mut q, mut qd, mut qdd) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        let (mut qp, mut qm, mut vp, mut vm, mut scratch) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
        let h = 1e-5;
        for t in [0.3, 1.7, 4.1, 6.9] {
            e.sample(t, &mut q, &mut qd, &mut qdd);
            e.sample(t + h, &mut qp, &mut vp, &mut scratch);
            e.sample(t - h, &mut qm, &mut vm, &mut scratch);
            for j in 0..2 {
                let (dq, dv) = ((qp[j] - qm[j]) / (2.0 * h), (vp[j] - vm[j]) / (2.0 * h));
                assert!((dq - qd[j]).abs() < 1e-8, "joint {j} at {t}: q̇ {} vs dq/dt {dq}", qd[j]);
                assert!((dv - qdd[j]).abs() < 1e-7, "joint {j} at {t}: q̈ {} vs dq̇/dt {dv}", qdd[j]);
            }
        }
        assert!(qd.iter().any(|v| v.abs() > 0.05), "it moves: {qd:?}");
    }

    #[test]
    fn rests_at_its_start_and_after_whole_periods_then_holds() {
        let e = excitation(2.0);
        assert!((e.duration() - 2.0 * e.period()).abs() < 1e-12 && (e.period() - 4.0).abs() < 1e-12);
        let (mut q, mut qd, mut qdd) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        // At rest at t = 0 and at every period's end, where it started.
        for t in [0.0, e.period(), e.duration()] {
            e.series().sample(t, &mut q, &mut qd, &mut qdd);
            for j in 0..2 {
                assert!(qd[j].abs() < 1e-12 && qdd[j].abs() < 1e-12, "rest at {t}: {qd:?} {qdd:?}");
                assert!((q[j] - e.start()[j]).abs() < 1e-12, "back at the start at {t}");
            }
        }
        // Held exactly after the end; before 0 at its start.
        for (t, at) in [(e.duration(), e.end()), (e.duration() + 5.0, e.end()), (-1.0, e.start())] {
            e.sample(t, &mut q, &mut qd, &mut qdd);
            assert_eq!((q.as_slice(), qd, qdd), (at, [0.0; 2], [0.0; 2]), "at {t}");
        }
        // The start is the series at 0: q0 − Σ b_jl/(l·ω).
        let s = e.series();
        let expected = s.q0[1] - (0..3).map(|l| s.b[1][l] / ((l + 1) as f64 * s.omega)).sum::<f64>();
        assert!((e.start()[1] - expected).abs() < 1e-15);
    }

    #[test]
    fn flat_coefficients_and_bad_ones_are_named() {
        let e = excitation(1.0);
        let s = e.series();
        let flat = |c: &Vec<Vec<f64>>| c.iter().flatten().copied().collect::<Vec<f64>>();
        let again = FourierExcitation::from_coefficients(s.omega, &s.q0, &flat(&s.a), &flat(&s.b), 1.0).unwrap();
        assert_eq!(again, e);
        assert_eq!((again.order(), again.dof(), again.periods()), (3, 2, 1.0));
        let err = |r: Result<FourierExcitation, String>| r.unwrap_err();
        assert!(err(FourierExcitation::from_coefficients(1.0, &[0.0, 0.0], &[1.0; 3], &[1.0; 3], 1.0)).contains("a has 3"));
        assert!(err(FourierExcitation::from_coefficients(0.0, &[0.0], &[1.0], &[1.0], 1.0)).contains("omega"));
        assert!(err(FourierExcitation::from_coefficients(1.0, &[0.0], &[1.0], &[1.0], f64::NAN)).contains("periods"));
        assert!(err(FourierExcitation::from_coefficients(1.0, &[f64::INFINITY], &[1.0], &[1.0], 1.0)).contains("not a finite"));
        let ragged = FourierTrajectory { omega: 1.0, q0: vec![0.0; 2], a: vec![vec![1.0, 2.0], vec![1.0]], b: vec![vec![1.0, 2.0]; 2] };
        assert!(err(FourierExcitation::new(ragged, 1.0)).contains("2 × 2 coefficients"));
    }
}

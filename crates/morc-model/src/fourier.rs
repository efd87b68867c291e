//! Finite Fourier series per joint, the exciting trajectories of dynamic identification
//! (Swevers et al. 1997): with a common base frequency ω_f and order N,
//!
//! ```text
//! q_j(t) = q0_j + Σ_{l=1..N} a_jl/(l·ω_f)·sin(l·ω_f·t) − b_jl/(l·ω_f)·cos(l·ω_f·t)
//! ```
//!
//! periodic with period 2π/ω_f, so a run of whole periods averages noise and ends where it
//! started. Rest at t = 0 (and so at every period's end) is built in: `a_j1 = −Σ_{l≥2} a_jl`
//! gives q̇(0) = 0 and `b_j1 = −Σ_{l≥2} l·b_jl` gives q̈(0) = 0, so the free parameters are
//! a_jl, b_jl for l ≥ 2 and the offsets q0_j ([`FourierTrajectory::from_free`]).

use std::f64::consts::TAU;

/// A finite Fourier series trajectory for each joint, starting and ending at rest.
#[derive(Clone, Debug, PartialEq)]
pub struct FourierTrajectory {
    /// Base frequency ω_f (rad/s).
    pub omega: f64,
    /// Offsets q0 (rad or m), one per joint.
    pub q0: Vec<f64>,
    /// Sine coefficients a_jl (velocity units), `a[j][l − 1]`.
    pub a: Vec<Vec<f64>>,
    /// Cosine coefficients b_jl (velocity units), `b[j][l − 1]`.
    pub b: Vec<Vec<f64>>,
}

impl FourierTrajectory {
    /// The number of free parameters of `joints` joints of order `order`: 2·(N − 1) + 1 each.
    pub fn free_count(joints: usize, order: usize) -> usize {
        joints * (2 * (order - 1) + 1)
    }

    /// The trajectory of base frequency `omega` from its free parameters, joint by joint
    /// `[a_2 … a_N, b_2 … b_N, q0]`; `a_1` and `b_1` follow from rest at t = 0.
    ///
    /// # Panics
    /// If `order < 2` (order 1 at rest cannot move) or `x` is not a multiple of a joint's count.
    pub fn from_free(omega: f64, order: usize, x: &[f64]) -> FourierTrajectory {
        assert!(order >= 2, "a Fourier trajectory at rest at t = 0 needs order ≥ 2");
        let per = 2 * (order - 1) + 1;
        assert_eq!(x.len() % per, 0, "free parameters: {per} per joint");
        let (mut q0, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
        for p in x.chunks(per) {
            let (fa, rest) = p.split_at(order - 1);
            let (fb, offset) = rest.split_at(order - 1);
            let mut aj = vec![-fa.iter().sum::<f64>()];
            aj.extend_from_slice(fa);
            let mut bj = vec![-fb.iter().enumerate().map(|(k, x)| (k + 2) as f64 * x).sum::<f64>()];
            bj.extend_from_slice(fb);
            a.push(aj);
            b.push(bj);
            q0.push(offset[0]);
        }
        FourierTrajectory { omega, q0, a, b }
    }

    /// The free parameters (inverse of [`FourierTrajectory::from_free`]).
    pub fn free(&self) -> Vec<f64> {
        let mut x = Vec::new();
        for j in 0..self.q0.len() {
            x.extend_from_slice(&self.a[j][1..]);
            x.extend_from_slice(&self.b[j][1..]);
            x.push(self.q0[j]);
        }
        x
    }

    /// The series' order N.
    pub fn order(&self) -> usize {
        self.a.first().map_or(0, Vec::len)
    }

    /// One period, 2π/ω_f (s).
    pub fn period(&self) -> f64 {
        TAU / self.omega
    }

    /// Position, velocity and acceleration at time `t` (s) into `q`, `qd`, `qdd`.
    pub fn sample(&self, t: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        for j in 0..self.q0.len() {
            let (mut p, mut v, mut acc) = (self.q0[j], 0.0, 0.0);
            for (l, (a, b)) in self.a[j].iter().zip(&self.b[j]).enumerate() {
                let w = (l + 1) as f64 * self.omega;
                let (s, c) = (w * t).sin_cos();
                p += (a * s - b * c) / w;
                v += a * c + b * s;
                acc += w * (b * c - a * s);
            }
            (q[j], qd[j], qdd[j]) = (p, v, acc);
        }
    }

    /// Where it starts (and every period ends), at rest.
    pub fn start(&self) -> Vec<f64> {
        let n = self.q0.len();
        let (mut q, mut v, mut a) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        self.sample(0.0, &mut q, &mut v, &mut a);
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At rest at t = 0 and after a period; q̇ and q̈ are q's derivatives.
    #[test]
    fn starts_and_ends_at_rest_and_differentiates() {
        let x = [0.3, -0.2, 0.1, 0.05, -0.1, 0.2, 0.4, 0.1, 0.2, -0.3, 0.0, 0.1, -0.05, -0.7];
        let f = FourierTrajectory::from_free(TAU * 0.2, 4, &x);
        assert_eq!(f.free(), x.to_vec());
        let (mut q, mut v, mut a) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        for t in [0.0, f.period()] {
            f.sample(t, &mut q, &mut v, &mut a);
            for j in 0..2 {
                assert!(v[j].abs() < 1e-12 && a[j].abs() < 1e-12, "rest at {t}: {v:?} {a:?}");
            }
        }
        assert!((f.start()[1] - q[1]).abs() < 1e-12);
        let h = 1e-6;
        let (mut qp, mut qm, mut vp, mut vm, mut tmp) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
        f.sample(1.3, &mut q, &mut v, &mut a);
        f.sample(1.3 + h, &mut qp, &mut vp, &mut tmp);
        f.sample(1.3 - h, &mut qm, &mut vm, &mut tmp);
        for j in 0..2 {
            assert!(((qp[j] - qm[j]) / (2.0 * h) - v[j]).abs() < 1e-7);
            assert!(((vp[j] - vm[j]) / (2.0 * h) - a[j]).abs() < 1e-7);
        }
        assert!(v.iter().any(|x| x.abs() > 0.01), "it moves");
    }
}

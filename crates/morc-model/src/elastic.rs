//! The inverse of the arm with elastic gears (Spong's flexible-joint model, [`DriveTrain`]'s
//! `stiffness`): given the links' reference up to its 4th derivative, the motors' positions,
//! velocities and torques that make the links follow it — the flatness-based feed-forward that
//! needs a reference smooth to the 4th derivative (a Bessel-filtered one).
//!
//! ```text
//! τ_s = M_l(q)·q̈ + n(q, q̇)                      the springs' torque the links need (M_l: M without
//!                                               the elastic joints' rotor inertia)
//! K·φ + D·φ̇ = τ_s                               the gears' deflection φ = θ − q
//!   φ ≈ τ_s/K − D·τ̇_s/K²,  φ̇ ≈ τ̇_s/K − D·τ̈_s/K²,  φ̈ ≈ τ̈_s/K   (D ≪ K: first order in D/K)
//! θ = q + φ,  θ̇ = q̇ + φ̇,  τ_m = B·(q̈ + φ̈) + f(θ̇) + τ_s
//! ```
//!
//! τ̇_s and τ̈_s are central differences of τ_s along the reference's own Taylor expansion to ±h
//! (h = [`STEP`]), using its 3rd and 4th derivatives: exact to O(h²) without the derivatives of
//! the mass matrix. A rigid joint keeps θ = q and τ_m = RNEA + friction, as the rigid-body
//! feed-forward gives. Nothing allocates after [`ElasticInverse::new`].

use nalgebra::DVector;

use super::{Data, DriveTrain, Model};

/// The time step of the differences along the reference (s).
pub const STEP: f64 = 1e-3;

/// The motors' reference of an elastic arm (results and scratch of [`ElasticInverse::compute`]).
#[derive(Clone, Debug)]
pub struct ElasticInverse {
    /// Motor positions seen at the joints (rad; m).
    pub theta: DVector<f64>,
    /// Motor velocities.
    pub theta_d: DVector<f64>,
    /// Motor torques (N·m; N): inertia, friction and the springs'.
    pub tau: DVector<f64>,
    /// The links' reference at −h, 0, +h: positions, velocities, accelerations; the springs' torques.
    q: [DVector<f64>; 3],
    v: [DVector<f64>; 3],
    a: [DVector<f64>; 3],
    spring: [DVector<f64>; 3],
}

impl ElasticInverse {
    /// Sized for `model`.
    pub fn new(model: &Model) -> Self {
        let n = model.nv();
        let z = || DVector::zeros(n);
        ElasticInverse { theta: z(), theta_d: z(), tau: z(), q: [z(), z(), z()], v: [z(), z(), z()], a: [z(), z(), z()], spring: [z(), z(), z()] }
    }

    /// The motors' positions, velocities and torques for the links' reference `q`, `v`, `a`,
    /// `jerk`, `snap` (written to `theta`, `theta_d`, `tau`).
    ///
    /// # Panics
    /// If a slice is not `model.nv()` long.
    #[allow(clippy::too_many_arguments)]
    pub fn compute(&mut self, model: &Model, data: &mut Data, q: &[f64], v: &[f64], a: &[f64], jerk: &[f64], snap: &[f64]) {
        let h = STEP;
        for (k, s) in [-1.0, 0.0, 1.0].into_iter().enumerate() {
            for i in 0..q.len() {
                let t = s * h;
                let (dt, dt2, dt3, dt4) = (t, t * t / 2.0, t * t * t / 6.0, t * t * t * t / 24.0);
                self.q[k][i] = q[i] + dt * v[i] + dt2 * a[i] + dt3 * jerk[i] + dt4 * snap[i];
                self.v[k][i] = v[i] + dt * a[i] + dt2 * jerk[i] + dt3 * snap[i];
                self.a[k][i] = a[i] + dt * jerk[i] + dt2 * snap[i];
            }
            let tau = super::rnea(model, data, self.q[k].as_slice(), self.v[k].as_slice(), self.a[k].as_slice());
            self.spring[k].copy_from(tau);
            // The links alone: an elastic joint's rotor inertia moves with its motor.
            for (i, d) in model.drive_trains().iter().enumerate() {
                if d.is_elastic() {
                    self.spring[k][i] -= d.armature * self.a[k][i];
                }
            }
        }
        for (i, d) in model.drive_trains().iter().enumerate() {
            let tau_s = self.spring[1][i];
            if !d.is_elastic() {
                self.theta[i] = q[i];
                self.theta_d[i] = v[i];
                self.tau[i] = tau_s + d.friction(v[i]);
                continue;
            }
            let tau_s_d = (self.spring[2][i] - self.spring[0][i]) / (2.0 * h);
            let tau_s_dd = (self.spring[2][i] - 2.0 * tau_s + self.spring[0][i]) / (h * h);
            let DriveTrain { stiffness: k, damping: c, .. } = *d;
            let phi = tau_s / k - c * tau_s_d / (k * k);
            let phi_d = tau_s_d / k - c * tau_s_dd / (k * k);
            let phi_dd = tau_s_dd / k;
            self.theta[i] = q[i] + phi;
            self.theta_d[i] = v[i] + phi_d;
            self.tau[i] = d.armature * (a[i] + phi_dd) + d.friction(self.theta_d[i]) + tau_s;
        }
    }
}

/// Where the links of an arm at rest are, its motors at `theta`: each elastic gear deflected by
/// its spring's share of gravity, `q = θ − g(q)/K` (a fixed point, a few iterations: g changes
/// little with the deflection), written to `q`. Rigid joints are where their motors are.
///
/// # Panics
/// If a slice is not `model.nv()` long.
pub fn links_at_rest(model: &Model, data: &mut Data, theta: &[f64], q: &mut [f64]) {
    q.copy_from_slice(theta);
    for _ in 0..5 {
        let g = super::gravity(model, data, q);
        for (i, d) in model.drive_trains().iter().enumerate() {
            if d.is_elastic() {
                q[i] = theta[i] - g[i] / d.stiffness;
            }
        }
    }
}

/// An elastic gear's stiffness and damping fitted to a run ([`fit_stiffness`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StiffnessFit {
    /// Stiffness (N·m/rad; N/m).
    pub stiffness: f64,
    /// Damping (N·m·s/rad; N·s/m).
    pub damping: f64,
    /// The fit's rms residual, % of the springs' rms torque.
    pub residual: f64,
}

/// The elastic gears' stiffness and damping from a run where the links were measured (a link
/// encoder, a tracker's inverse kinematics): per elastic joint, the least-squares K and D of
/// τ_s = K·φ + D·φ̇, φ = θ − q the measured deflection and τ_s = M_l(q)·q̈ + n(q, q̇) the torque
/// the links' model says the springs passed (velocities and accelerations by central differences,
/// `dt` apart). `q` and `theta` are `samples × nv`, sample after sample. None for a rigid joint,
/// or one whose deflection did not change (nothing to see). The links' model must be right:
/// identify it first.
pub fn fit_stiffness(model: &Model, data: &mut Data, q: &[f64], theta: &[f64], dt: f64) -> Vec<Option<StiffnessFit>> {
    let n = model.nv();
    let samples = q.len() / n;
    // Per joint, the normal equations of [φ φ̇]·[K D]ᵀ = τ_s and the sums for the residual.
    let mut sums = vec![[0.0f64; 6]; n];
    let (mut v, mut a, mut phi_d) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for k in 1..samples.saturating_sub(1) {
        let at = |x: &[f64], k: usize, i: usize| x[k * n + i];
        for i in 0..n {
            v[i] = (at(q, k + 1, i) - at(q, k - 1, i)) / (2.0 * dt);
            a[i] = (at(q, k + 1, i) - 2.0 * at(q, k, i) + at(q, k - 1, i)) / (dt * dt);
            phi_d[i] = (at(theta, k + 1, i) - at(theta, k - 1, i)) / (2.0 * dt) - v[i];
        }
        let tau = super::rnea(model, data, &q[k * n..(k + 1) * n], &v, &a);
        for (i, d) in model.drive_trains().iter().enumerate() {
            if !d.is_elastic() {
                continue;
            }
            let tau_s = tau[i] - d.armature * a[i];
            let phi = at(theta, k, i) - at(q, k, i);
            let s = &mut sums[i];
            s[0] += phi * phi;
            s[1] += phi * phi_d[i];
            s[2] += phi_d[i] * phi_d[i];
            s[3] += phi * tau_s;
            s[4] += phi_d[i] * tau_s;
            s[5] += tau_s * tau_s;
        }
    }
    model
        .drive_trains()
        .iter()
        .zip(&sums)
        .map(|(d, s)| {
            let det = s[0] * s[2] - s[1] * s[1];
            // A deflection that never changed (or NaN sums) leaves K and D unseen.
            let seen = det > 1e-12 * s[0] * s[2];
            if !d.is_elastic() || !seen || s[5] <= 0.0 {
                return None;
            }
            let stiffness = (s[3] * s[2] - s[4] * s[1]) / det;
            let damping = (s[0] * s[4] - s[1] * s[3]) / det;
            // Σ(τ − Kφ − Dφ̇)² expanded in the sums.
            let squared = s[5] - 2.0 * (stiffness * s[3] + damping * s[4]) + stiffness * stiffness * s[0] + 2.0 * stiffness * damping * s[1] + damping * damping * s[2];
            Some(StiffnessFit { stiffness, damping, residual: 100.0 * (squared.max(0.0) / s[5]).sqrt() })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disc of inertia `inertia` turning about the vertical on one revolute joint.
    fn disc(inertia: f64, drive: DriveTrain) -> Model {
        let urdf = format!(
            r#"<robot name="disc"><link name="base"/><link name="disc"><inertial><mass value="1"/><origin xyz="0 0 0"/>
            <inertia ixx="1" iyy="1" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial></link>
            <joint name="j" type="revolute"><parent link="base"/><child link="disc"/><axis xyz="0 0 1"/>
            <limit lower="-3" upper="3" velocity="1" effort="100"/></joint></robot>"#
        );
        let mut model = crate::parse_urdf(&urdf, "test").unwrap();
        model.set_drive_train(1, drive).unwrap();
        model
    }

    /// On a disc q = A·sin(ωt): τ_s = I·q̈, θ = q + τ_s/K, τ_m = B·θ̈ + τ_s + friction(θ̇), in closed form.
    #[test]
    fn a_sine_on_a_disc_matches_the_closed_form() {
        let (inertia, b, k, viscous) = (2.0, 0.5, 1e4, 3.0);
        let model = disc(inertia, DriveTrain { armature: b, stiffness: k, viscous_friction: viscous, ..Default::default() });
        let mut data = Data::new(&model);
        let mut inverse = ElasticInverse::new(&model);
        let (amp, w): (f64, f64) = (0.3, 5.0);
        for t in [0.0f64, 0.1, 0.37, 1.2] {
            let (s, c) = ((w * t).sin(), (w * t).cos());
            let d = [amp * s, amp * w * c, -amp * w * w * s, -amp * w.powi(3) * c, amp * w.powi(4) * s];
            inverse.compute(&model, &mut data, &d[0..1], &d[1..2], &d[2..3], &d[3..4], &d[4..5]);
            let tau_s = inertia * d[2];
            let theta = d[0] + tau_s / k;
            let theta_d = d[1] + inertia * d[3] / k;
            let theta_dd = d[2] + inertia * d[4] / k;
            let tau_m = b * theta_dd + tau_s + viscous * theta_d;
            assert!((inverse.theta[0] - theta).abs() < 1e-12, "θ at {t}: {} vs {theta}", inverse.theta[0]);
            assert!((inverse.theta_d[0] - theta_d).abs() < 1e-9, "θ̇ at {t}: {} vs {theta_d}", inverse.theta_d[0]);
            assert!((inverse.tau[0] - tau_m).abs() < 1e-6 * tau_m.abs().max(1.0), "τ_m at {t}: {} vs {tau_m}", inverse.tau[0]);
        }
    }

    /// A rigid drive gets the rigid-body feed-forward: RNEA (armature in) plus friction.
    #[test]
    fn a_rigid_drive_gets_rnea_and_friction() {
        let model = disc(2.0, DriveTrain { armature: 0.5, viscous_friction: 3.0, ..Default::default() });
        let mut data = Data::new(&model);
        let mut inverse = ElasticInverse::new(&model);
        inverse.compute(&model, &mut data, &[0.1], &[0.2], &[0.3], &[4.0], &[5.0]);
        assert_eq!((inverse.theta[0], inverse.theta_d[0]), (0.1, 0.2));
        assert!((inverse.tau[0] - (2.5 * 0.3 + 3.0 * 0.2)).abs() < 1e-12, "{}", inverse.tau[0]);
    }
}

//! Dynamic identification (Gautier & Khalil; Swevers et al.): the joint torques are linear in
//! the dynamic parameters, `τ = Y(q, q̇, q̈)·π`, with π each body's 10 inertial parameters
//! (as [`dynamic_parameters`]) followed by each joint's drive train: motor inertia `Ia`
//! (armature), viscous `fv` and Coulomb `fc` friction ([`regressor_with_drives`]). Not all of π
//! acts on the torques independently; [`BaseParameters`] finds the base parameters by QR with
//! column pivoting of a regressor stacked over random states: `β = π_b + K·π_d`, the
//! independent columns plus the linear combinations of the dependent ones, so that
//! `τ = Y_b·β`. An exciting trajectory ([`BaseParameters::excite`]) is a Fourier series per
//! joint whose coefficients minimise the condition number of `Y_b` stacked along it within the
//! joints' limits; the estimate ([`BaseParameters::estimate`]) is weighted least squares on
//! measured `(q, q̇, q̈, τ)`, the weights per joint from an ordinary least-squares pass.
//! Off the real-time path: allocates freely.

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};

use super::dense::pivoted_rank;
use super::dynamics::sign;
use super::fourier::FourierTrajectory;
#[cfg(doc)]
use super::regressor::joint_torque_regressor;
use super::regressor::{dynamic_parameters, PARAMETERS_PER_BODY};
use super::spatial::Motion;
use super::spatial::{rotation_from_rpy, Inertia};
use super::structure::FrameKind;
use super::{Data, Model};

/// Drive-train parameters per joint in π: motor inertia `Ia`, viscous `fv`, Coulomb `fc`.
pub const DRIVE_PARAMETERS: usize = 3;

const BODY_NAMES: [&str; PARAMETERS_PER_BODY] = ["m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz"];
const DRIVE_NAMES: [&str; DRIVE_PARAMETERS] = ["Ia", "fv", "fc"];

/// Default relative tolerance on |R_ii| (columns scaled to unit length) below which a
/// parameter does not act on its own.
pub const BASE_TOLERANCE: f64 = 1e-8;

/// The length of π for `model`: 10 per body, 3 per joint.
pub fn parameter_count(model: &Model) -> usize {
    (model.njoints() - 1) * PARAMETERS_PER_BODY + model.nv() * DRIVE_PARAMETERS
}

/// π of `model`: the bodies' [`dynamic_parameters`] joint by joint, then each joint's
/// armature, viscous and Coulomb friction.
pub fn standard_parameters(model: &Model) -> Vec<f64> {
    let mut pi: Vec<f64> = (1..model.njoints()).flat_map(|j| dynamic_parameters(&model.inertias()[j])).collect();
    for d in model.drive_trains() {
        pi.extend([d.armature, d.viscous_friction, d.coulomb_friction]);
    }
    pi
}

/// Readable names of π: `link3.m`, `link2.Ixy` (the body's frame name, or its joint's; the
/// moments about the joint frame's origin and axes), `J1.Ia`, `J1.fv`, `J1.fc` (with
/// `joint_names`, or the model's joint names when it is empty).
pub fn parameter_names(model: &Model, joint_names: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for j in 1..model.njoints() {
        let body = model.frames().iter().find(|f| f.parent_joint == j && f.kind == FrameKind::Body).map_or(model.joint_names()[j].as_str(), |f| f.name.as_str());
        names.extend(BODY_NAMES.iter().map(|p| format!("{body}.{p}")));
    }
    for dof in 0..model.nv() {
        let joint = joint_names.get(dof).cloned().unwrap_or_else(|| model.joint_names()[model.dof_joint(dof)].clone());
        names.extend(DRIVE_NAMES.iter().map(|p| format!("{joint}.{p}")));
    }
    names
}

/// `Y(q, v, a)` with the drive-train columns, into `out` (nv × [`parameter_count`]): the
/// inertial block equals [`joint_torque_regressor`]'s, then per joint `a`, `v`, `sign(v)`, so
/// that `Y·π = rnea(q, v, a) + friction(v)`: the rigid-body torque with armature, plus the
/// drives' friction, as the simulated plant applies them.
///
/// Computed here rather than by [`joint_torque_regressor`], which carries each of a body's 10
/// unit wrenches through every ancestor's transform: each ancestor's joint axis is brought
/// into the body's frame once instead, and the body's 6×10 wrench block is in closed form,
/// several times faster (identification evaluates it along whole trajectories).
///
/// # Panics
/// If a vector's length or `out`'s shape does not match the model.
pub fn regressor_with_drives(model: &Model, data: &mut Data, q: &[f64], v: &[f64], a: &[f64], out: &mut DMatrix<f64>) {
    assert_eq!(out.shape(), (model.nv(), parameter_count(model)), "regressor_with_drives: out must be nv × parameter_count");
    // RNEA's forward pass leaves each body's velocity and acceleration (gravity included) in
    // its frame, and the local placements.
    super::rnea(model, data, q, v, a);
    out.fill(0.0);
    let n = model.njoints();
    // Each joint's placement in the world and its unit motion in world axes.
    for j in 1..n {
        let parent = model.parents[j];
        data.joint_placements[j] = if parent == 0 { data.local_placements[j] } else { data.joint_placements[parent].compose(&data.local_placements[j]) };
    }
    let world_axis: Vec<Motion> = (0..n).map(|j| if j == 0 { Motion::zero() } else { data.joint_placements[j].act_motion(&model.motions[j].motion(1.0)) }).collect();
    for j in 1..n {
        let block = body_wrenches(&data.velocities[j], &data.accelerations[j]);
        let mut i = j;
        while i != 0 {
            let s = if i == j { model.motions[j].motion(1.0) } else { data.joint_placements[j].inv_act_motion(&world_axis[i]) };
            let (sl, sa) = ([s.linear.x, s.linear.y, s.linear.z], [s.angular.x, s.angular.y, s.angular.z]);
            let (row, rows) = (model.idx_v[i], out.nrows());
            let y = out.as_mut_slice();
            for (k, (fl, fa)) in block.iter().enumerate() {
                y[((j - 1) * PARAMETERS_PER_BODY + k) * rows + row] += model.scaling[i] * (dot(&sl, fl) + dot(&sa, fa));
            }
            i = model.parents[i];
        }
    }
    let bodies = (n - 1) * PARAMETERS_PER_BODY;
    for dof in 0..model.nv() {
        let c = bodies + DRIVE_PARAMETERS * dof;
        out[(dof, c)] = a[dof];
        out[(dof, c + 1)] = v[dof];
        out[(dof, c + 2)] = sign(v[dof]);
    }
}

type V3 = [f64; 3];

#[inline]
fn cross(a: &V3, b: &V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

#[inline]
fn dot(a: &V3, b: &V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn add(a: &V3, b: &V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// A body's wrench `I(π)·a + v ×* I(π)·v` for each unit dynamic parameter (in
/// [`dynamic_parameters`]' order), as (linear, angular) pairs. With I(π)x = (m·x_l + x_a × h,
/// Ī·x_a + h × x_l) and ω = v_a:
/// `f_l = m·(a_l + ω × v_l) + α × h + ω × (ω × h)`,
/// `f_a = Ī·α + ω × (Ī·ω) + h × a_l + ω × (h × v_l) + v_l × (ω × h)`.
fn body_wrenches(v: &Motion, acc: &Motion) -> [(V3, V3); PARAMETERS_PER_BODY] {
    let (vl, w) = ([v.linear.x, v.linear.y, v.linear.z], [v.angular.x, v.angular.y, v.angular.z]);
    let (al, alpha) = ([acc.linear.x, acc.linear.y, acc.linear.z], [acc.angular.x, acc.angular.y, acc.angular.z]);
    let mut out = [([0.0; 3], [0.0; 3]); PARAMETERS_PER_BODY];
    out[0].0 = add(&al, &cross(&w, &vl));
    for k in 0..3 {
        let mut h = [0.0; 3];
        h[k] = 1.0;
        let wh = cross(&w, &h);
        out[1 + k] = (add(&cross(&alpha, &h), &cross(&w, &wh)), add(&add(&cross(&h, &al), &cross(&w, &cross(&h, &vl))), &cross(&vl, &wh)));
    }
    // Ī's entries in order Ixx, Ixy, Iyy, Ixz, Iyz, Izz: the unit symmetric matrix E times x.
    let pairs = [(0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2)];
    for (k, &(r, c)) in pairs.iter().enumerate() {
        let e_times = |x: &V3| -> V3 {
            let mut y = [0.0; 3];
            y[r] += x[c];
            if r != c {
                y[c] += x[r];
            }
            y
        };
        out[4 + k].1 = add(&e_times(&alpha), &cross(&w, &e_times(&w)));
    }
    out
}

/// Joint limits the identification keeps to: positions (rad or m), speed, acceleration and
/// torque, one per joint.
#[derive(Clone, Debug, PartialEq)]
pub struct JointBounds {
    /// Lowest positions.
    pub lower: Vec<f64>,
    /// Highest positions.
    pub upper: Vec<f64>,
    /// Largest speeds.
    pub velocity: Vec<f64>,
    /// Largest accelerations.
    pub acceleration: Vec<f64>,
    /// Largest drive torques.
    pub torque: Vec<f64>,
}

/// Reproducible uniform and Gaussian numbers (xorshift64*, Box–Muller).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in [−1, 1).
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// The base parameters of a model's structure: which columns of `Y` are independent and how
/// the others combine into them.
#[derive(Clone, Debug)]
pub struct BaseParameters {
    /// Names of π.
    standard: Vec<String>,
    /// Columns of π kept (ascending).
    independent: Vec<usize>,
    /// Columns combined into the kept ones (ascending), and those with no effect at all.
    dependent: Vec<usize>,
    /// `β = π_b + K·π_d`: independent × dependent.
    k: DMatrix<f64>,
    /// Readable β: "link2.Izz + 0.3906·link3.m".
    names: Vec<String>,
    /// |R_ii| of each dependent column relative to the largest (columns scaled to unit length).
    dependent_r: Vec<f64>,
    nv: usize,
}

/// A coefficient of K below this is rounding (K is in units of m and m², O(1) for robots).
const K_ZERO: f64 = 1e-9;

impl BaseParameters {
    /// The base parameters of `model` from `samples` random states within `bounds` (`seed`
    /// makes them reproducible): QR with column pivoting of `Y` stacked over the states, columns
    /// scaled to unit length; a column whose |R_ii| falls below `tolerance` × the largest
    /// depends on those before it (or acts not at all). `joint_names` name the drive parameters.
    pub fn new(model: &Model, joint_names: &[String], bounds: &JointBounds, samples: usize, seed: u64, tolerance: f64) -> Result<BaseParameters, String> {
        let nv = model.nv();
        if model.has_mimic_joints() {
            return Err(format!("{}: identification of a model with mimic joints is not supported (give the robot's model, whose joints are its drives)", model.name()));
        }
        check_bounds(model, bounds)?;
        let p = parameter_count(model);
        if samples * nv < 2 * p {
            return Err(format!("{samples} samples give {} equations for {p} parameters: use at least {}", samples * nv, (2 * p).div_ceil(nv)));
        }
        let mut rng = Rng::new(seed);
        let mut data = Data::new(model);
        let mut y = DMatrix::zeros(nv, p);
        let mut w = DMatrix::zeros(samples * nv, p);
        let (mut q, mut v, mut a) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
        for s in 0..samples {
            for j in 0..nv {
                let (lo, hi) = (bounds.lower[j].max(-std::f64::consts::PI), bounds.upper[j].min(std::f64::consts::PI));
                q[j] = 0.5 * (lo + hi) + 0.5 * (hi - lo) * rng.uniform();
                v[j] = bounds.velocity[j] * rng.uniform();
                a[j] = bounds.acceleration[j] * rng.uniform();
            }
            regressor_with_drives(model, &mut data, &q, &v, &a, &mut y);
            w.rows_mut(s * nv, nv).copy_from(&y);
        }
        let (mut independent, dependent_r) = pivoted_rank(&w, tolerance);
        independent.sort_unstable();
        let dependent: Vec<usize> = (0..p).filter(|c| !independent.contains(c)).collect();
        let wb = w.select_columns(independent.iter());
        let wd = w.select_columns(dependent.iter());
        let qr = wb.clone().qr();
        let mut qtw = wd.clone();
        qr.q_tr_mul(&mut qtw);
        let r = qr.r();
        let mut k = r.solve_upper_triangular(&qtw.rows(0, independent.len()).into_owned()).ok_or("the kept columns are singular: raise the tolerance")?;
        k.iter_mut().filter(|x| x.abs() < K_ZERO).for_each(|x| *x = 0.0);
        let misfit = (&wd - &wb * &k).norm();
        if misfit > 1e-6 * wd.norm().max(1.0) {
            return Err(format!("the dependent columns are not combinations of the kept ones (misfit {misfit:.3e}): lower the tolerance ({tolerance})"));
        }
        let standard = parameter_names(model, joint_names);
        let names = independent
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let mut s = standard[c].clone();
                for (d, &col) in dependent.iter().enumerate() {
                    let x = k[(i, d)];
                    if x != 0.0 {
                        let sign = if x < 0.0 { " − " } else { " + " };
                        if (x.abs() - 1.0).abs() < 1e-12 {
                            s += &format!("{sign}{}", standard[col]);
                        } else {
                            s += &format!("{sign}{:.4}·{}", x.abs(), standard[col]);
                        }
                    }
                }
                s
            })
            .collect();
        let dependent_r = dependent.iter().map(|c| dependent_r[*c]).collect();
        Ok(BaseParameters { standard, independent, dependent, k, names, dependent_r, nv })
    }

    /// The number of base parameters.
    pub fn count(&self) -> usize {
        self.independent.len()
    }

    /// Readable names of β, e.g. `link2.Izz + 0.3906·link3.m − J2.Ia`.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Names of π ([`parameter_names`]).
    pub fn standard_names(&self) -> &[String] {
        &self.standard
    }

    /// π's dependent parameters, each with its |R_ii| relative to the largest (the columns
    /// scaled to unit length), and whether it combines into a base parameter (false: it acts on
    /// no torque at all).
    pub fn dependent(&self) -> Vec<(&str, f64, bool)> {
        self.dependent
            .iter()
            .enumerate()
            .map(|(d, &c)| (self.standard[c].as_str(), self.dependent_r[d], self.k.column(d).iter().any(|x| *x != 0.0)))
            .collect()
    }

    /// β of a full parameter vector π ([`standard_parameters`]).
    ///
    /// # Panics
    /// If `pi` is not of π's length.
    pub fn base_of(&self, pi: &[f64]) -> Vec<f64> {
        assert_eq!(pi.len(), self.standard.len(), "π has {} entries", self.standard.len());
        let pd = DVector::from_iterator(self.dependent.len(), self.dependent.iter().map(|&c| pi[c]));
        let combined = &self.k * pd;
        self.independent.iter().enumerate().map(|(i, &c)| pi[c] + combined[i]).collect()
    }

    /// The base regressor's rows for one state, written into `out` at `row` (nv rows), using
    /// `full` (nv × [`parameter_count`]) as scratch.
    fn base_rows(&self, model: &Model, data: &mut Data, (q, v, a): (&[f64], &[f64], &[f64]), full: &mut DMatrix<f64>, out: &mut DMatrix<f64>, row: usize) {
        regressor_with_drives(model, data, q, v, a, full);
        // Column-major: a column of `full` is nv contiguous values, as rows row.. of out's.
        let (nv, rows) = (self.nv, out.nrows());
        let (src, dst) = (full.as_slice(), out.as_mut_slice());
        for (i, &c) in self.independent.iter().enumerate() {
            dst[i * rows + row..i * rows + row + nv].copy_from_slice(&src[c * nv..(c + 1) * nv]);
        }
    }

    /// The base regressor `Y_b(q, v, a)` (nv × [`BaseParameters::count`]): `Y_b·β = Y·π`.
    pub fn regressor(&self, model: &Model, q: &[f64], v: &[f64], a: &[f64]) -> DMatrix<f64> {
        let mut data = Data::new(model);
        let mut full = DMatrix::zeros(self.nv, self.standard.len());
        let mut out = DMatrix::zeros(self.nv, self.count());
        self.base_rows(model, &mut data, (q, v, a), &mut full, &mut out, 0);
        out
    }

    /// The base regressor stacked over `m`'s samples (samples·nv × count).
    fn stacked(&self, model: &Model, m: &Measurements) -> DMatrix<f64> {
        let n = m.len();
        let mut data = Data::new(model);
        let mut full = DMatrix::zeros(self.nv, self.standard.len());
        let mut w = DMatrix::zeros(n * self.nv, self.count());
        for s in 0..n {
            let r = s * self.nv..(s + 1) * self.nv;
            self.base_rows(model, &mut data, (&m.q[r.clone()], &m.v[r.clone()], &m.a[r]), &mut full, &mut w, s * self.nv);
        }
        w
    }

    /// The torques `Y_b·β` at `m`'s samples (flat, sample by sample).
    pub fn predict(&self, model: &Model, beta: &[f64], m: &Measurements) -> Vec<f64> {
        let w = self.stacked(model, m);
        (w * DVector::from_column_slice(beta)).as_slice().to_vec()
    }

    /// β from measured samples by least squares: an ordinary pass, then (`weighted`) each
    /// joint's rows divided by its residual standard deviation from that pass and solved again.
    pub fn estimate(&self, model: &Model, m: &Measurements, weighted: bool) -> Result<Estimate, String> {
        let (n, b, nv) = (m.len(), self.count(), self.nv);
        if n * nv < 2 * b {
            return Err(format!("{n} samples give {} equations for {b} base parameters: record a longer run (at least {} samples)", n * nv, (2 * b).div_ceil(nv)));
        }
        let mut w = self.stacked(model, m);
        let mut y = DVector::from_column_slice(&m.tau);
        let ordinary = least_squares(&w, &y, &self.names, MAX_CONDITION)?;
        let residual = &y - &w * &ordinary.0;
        let dof = (n as f64 - b as f64).max(1.0);
        let sigma: Vec<f64> = (0..nv).map(|j| ((0..n).map(|s| residual[s * nv + j].powi(2)).sum::<f64>() / dof).sqrt()).collect();
        let weighted = weighted && sigma.iter().all(|s| *s > 0.0);
        let (beta, cov, condition) = if weighted {
            for s in 0..n {
                for j in 0..nv {
                    w.row_mut(s * nv + j).scale_mut(1.0 / sigma[j]);
                    y[s * nv + j] /= sigma[j];
                }
            }
            // The weights rescale the joints' rows, which may raise the condition number of
            // well-excited data (noise-free: σ differs by orders of magnitude between joints):
            // the unweighted pass has judged the excitation.
            least_squares(&w, &y, &self.names, f64::INFINITY)?
        } else {
            ordinary
        };
        // Cov(β) = s²·(WᵀW)⁻¹ with s² the (weighted) residual variance.
        let residual = &y - &w * &beta;
        let s2 = residual.norm_squared() / (n as f64 * nv as f64 - b as f64).max(1.0);
        let relative_std = (0..b).map(|i| 100.0 * (s2 * cov[(i, i)]).sqrt() / beta[i].abs().max(f64::MIN_POSITIVE)).collect();
        Ok(Estimate { beta: beta.as_slice().to_vec(), sigma, relative_std, condition, samples: n, weighted })
    }

    /// The condition number of the base regressor stacked over `samples` points of one period
    /// of `trajectory`.
    pub fn condition_along(&self, model: &Model, trajectory: &FourierTrajectory, samples: usize) -> f64 {
        let mut e = Evaluator::new(self, model, None, samples, 1.0, None);
        e.condition(trajectory)
    }

    /// An exciting trajectory: the Fourier series of `options` whose coefficients minimise the
    /// condition number of the base regressor stacked along one period, within `bounds`
    /// (positions, speeds, accelerations and the nominal model's torques, each scaled by
    /// `options.margin`) and with every joint origin above `options.floor`. Nelder–Mead from
    /// `options.restarts` random feasible starts, `options.evaluations` cost evaluations in all.
    pub fn excite(&self, model: &Model, bounds: &JointBounds, options: &ExcitationOptions) -> Result<Excitation, String> {
        check_bounds(model, bounds)?;
        let o = options;
        if o.order < 2 || o.order > 20 {
            return Err(format!("order {}: give 2 … 20 harmonics", o.order));
        }
        if !(o.base_frequency > 0.0 && o.base_frequency.is_finite()) {
            return Err(format!("base frequency {} Hz: give a positive frequency", o.base_frequency));
        }
        if !(o.margin > 0.0 && o.margin <= 1.0) {
            return Err(format!("margin {}: give the share of the limits to use, in (0, 1]", o.margin));
        }
        if o.samples * self.nv < 2 * self.count() {
            return Err(format!("{} samples per period are too few for {} base parameters: use at least {}", o.samples, self.count(), (2 * self.count()).div_ceil(self.nv)));
        }
        let omega = std::f64::consts::TAU * o.base_frequency;
        let mut e = Evaluator::new(self, model, Some(bounds), o.samples, o.margin, o.floor);
        let nv = self.nv;
        let per = 2 * (o.order - 1) + 1;
        let mid: Vec<f64> = (0..nv).map(|j| 0.5 * (bounds.lower[j].max(-std::f64::consts::PI) + bounds.upper[j].min(std::f64::consts::PI))).collect();
        let at_rest: Vec<f64> = (0..nv * per).map(|i| if i % per == per - 1 { mid[i / per] } else { 0.0 }).collect();
        let start = FourierTrajectory::from_free(omega, o.order, &at_rest);
        if e.violation(&start) > 0.0 {
            return Err("the robot at rest in the middle of its joint ranges already breaks the torque or floor limits: check the limits and the floor".into());
        }
        let mut rng = Rng::new(o.seed);
        let mut best: Option<(f64, Vec<f64>)> = None;
        let restarts = o.restarts.max(1);
        let budget = (o.evaluations / restarts).max(2 * Self::simplex_size(nv, per));
        for _ in 0..restarts {
            // A random direction from the middle, scaled down until feasible (at scale 0 the
            // arm rests at its offsets); the offsets move within a fifth of the ranges.
            let mut x = vec![0.0; nv * per];
            for j in 0..nv {
                let amplitude = bounds.velocity[j] / o.order as f64;
                for k in 0..per - 1 {
                    x[j * per + k] = amplitude * rng.uniform();
                }
                x[j * per + per - 1] = mid[j] + 0.2 * (bounds.upper[j].min(std::f64::consts::PI) - mid[j]) * rng.uniform();
            }
            let scaled = |s: f64, x: &[f64]| -> Vec<f64> { x.iter().enumerate().map(|(i, v)| if i % per == per - 1 { *v } else { s * v }).collect() };
            if e.violation(&FourierTrajectory::from_free(omega, o.order, &scaled(0.0, &x))) > 0.0 {
                for j in 0..nv {
                    x[j * per + per - 1] = mid[j];
                }
            }
            let (mut lo, mut hi) = (0.0, 1.0);
            if e.violation(&FourierTrajectory::from_free(omega, o.order, &x)) > 0.0 {
                for _ in 0..30 {
                    let s = 0.5 * (lo + hi);
                    if e.violation(&FourierTrajectory::from_free(omega, o.order, &scaled(s, &x))) > 0.0 {
                        hi = s;
                    } else {
                        lo = s;
                    }
                }
                x = scaled(lo, &x);
            }
            let steps: Vec<f64> = (0..x.len()).map(|i| if i % per == per - 1 { 0.05 } else { 0.1 * bounds.velocity[i / per] / o.order as f64 }).collect();
            let (fx, xb) = nelder_mead(|x| e.cost(&FourierTrajectory::from_free(omega, o.order, x)), &x, &steps, budget);
            if best.as_ref().is_none_or(|b| fx < b.0) {
                best = Some((fx, xb));
            }
        }
        let (cost, x) = best.expect("at least one restart");
        let trajectory = FourierTrajectory::from_free(omega, o.order, &x);
        if cost >= INFEASIBLE {
            return Err("no trajectory within the limits was found: lower the base frequency or the order, or raise the margin".into());
        }
        Ok(Excitation { condition: e.condition(&trajectory), trajectory, evaluations: e.evaluations })
    }

    fn simplex_size(nv: usize, per: usize) -> usize {
        nv * per + 1
    }
}

fn check_bounds(model: &Model, b: &JointBounds) -> Result<(), String> {
    let nv = model.nv();
    for (name, v) in [("lower", &b.lower), ("upper", &b.upper), ("velocity", &b.velocity), ("acceleration", &b.acceleration), ("torque", &b.torque)] {
        if v.len() != nv {
            return Err(format!("{name} limits: {} values for {nv} joints", v.len()));
        }
    }
    for j in 0..nv {
        let finite = b.velocity[j].is_finite() && b.acceleration[j].is_finite() && b.velocity[j] > 0.0 && b.acceleration[j] > 0.0 && b.torque[j] > 0.0;
        if !finite || b.lower[j].partial_cmp(&b.upper[j]) != Some(std::cmp::Ordering::Less) {
            return Err(format!("joint {}: give a position range and finite positive velocity, acceleration and torque limits", j + 1));
        }
    }
    Ok(())
}

/// `WᵀW` from contiguous columns (nalgebra's generic product is many times slower in debug
/// builds, where the examples and tests run).
fn gram(w: &DMatrix<f64>) -> DMatrix<f64> {
    let (rows, cols) = w.shape();
    let s = w.as_slice();
    let mut g = DMatrix::zeros(cols, cols);
    for i in 0..cols {
        let ci = &s[i * rows..(i + 1) * rows];
        for k in i..cols {
            let d: f64 = ci.iter().zip(&s[k * rows..(k + 1) * rows]).map(|(a, b)| a * b).sum();
            g[(i, k)] = d;
            g[(k, i)] = d;
        }
    }
    g
}

/// cond(W) from `WᵀW`: √(λmax/λmin), a count × count eigenproblem instead of an SVD of W.
fn condition_of_gram(g: &DMatrix<f64>) -> f64 {
    let eig = g.symmetric_eigenvalues();
    let (lo, hi) = (eig.min(), eig.max());
    if lo <= 0.0 || hi <= 0.0 {
        f64::INFINITY
    } else {
        (hi / lo).sqrt()
    }
}

/// Above this condition number of the (weighted) regressor, the normal equations would lose
/// too many digits (their condition is its square): the data does not excite some parameter.
const MAX_CONDITION: f64 = 1e6;

/// Least squares by the normal equations `WᵀW·x = Wᵀy` (Cholesky): x, `(WᵀW)⁻¹` and cond(W).
/// An exciting run's regressor has a condition number of 10²–10⁴, whose square stays far from
/// double precision's limit; above `max_condition` it is an error naming the base parameter
/// least determined.
fn least_squares(w: &DMatrix<f64>, y: &DVector<f64>, names: &[String], max_condition: f64) -> Result<(DVector<f64>, DMatrix<f64>, f64), String> {
    let g = gram(w);
    let condition = condition_of_gram(&g);
    if condition.is_nan() || condition >= max_condition {
        // The parameter with the largest variance is the one the data says least about.
        let worst = g.clone().pseudo_inverse(1e-300).ok().map_or(0, |inv| (0..inv.nrows()).max_by(|a, b| inv[(*a, *a)].total_cmp(&inv[(*b, *b)])).unwrap_or(0));
        return Err(format!(
            "the data does not excite the base parameters enough (condition number {condition:.3e}; least determined: {}): record a run that moves every joint, e.g. an excitation from id:excite",
            names[worst]
        ));
    }
    let s = y.as_slice();
    let rows = w.nrows();
    let wty = DVector::from_iterator(w.ncols(), (0..w.ncols()).map(|c| w.as_slice()[c * rows..(c + 1) * rows].iter().zip(s).map(|(a, b)| a * b).sum()));
    let chol = g.cholesky().ok_or("the regressor is singular")?;
    Ok((chol.solve(&wty), chol.inverse(), condition))
}

/// Measured samples for estimation: per sample the joint positions, velocities,
/// accelerations and torques (flat, sample by sample, nv each).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measurements {
    /// Joints (nv).
    pub nv: usize,
    /// Positions.
    pub q: Vec<f64>,
    /// Velocities.
    pub v: Vec<f64>,
    /// Accelerations.
    pub a: Vec<f64>,
    /// Torques.
    pub tau: Vec<f64>,
}

impl Measurements {
    /// The number of samples.
    pub fn len(&self) -> usize {
        self.q.len() / self.nv.max(1)
    }

    /// Whether it holds no sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Samples from a drive recording at period `dt`: measured positions `q`, velocities `qd`
    /// and the torques the drives report (flat, nv per sample), every `every`-th sample kept.
    /// A drive reports at sample k the torque it applied over the cycle from sample k − 1 to k
    /// (the simulated robot's `tau`, as a real drive's current of the last cycle), so sample
    /// k − 1's state goes with it and its acceleration is the velocity difference
    /// `(qd_k − qd_{k−1})/dt`: on the simulated plant (semi-implicit Euler) exactly what the
    /// dynamics produced, without filter lag.
    pub fn from_drive_record(nv: usize, q: &[f64], qd: &[f64], tau: &[f64], dt: f64, every: usize) -> Result<Measurements, String> {
        if nv == 0 || !q.len().is_multiple_of(nv) || q.len() != qd.len() || q.len() != tau.len() {
            return Err(format!("q, qd and tau must hold the same number of samples of {nv} joints ({}, {}, {} values)", q.len(), qd.len(), tau.len()));
        }
        if dt.is_nan() || dt <= 0.0 {
            return Err(format!("period {dt} s: give the recording's sample period"));
        }
        let n = q.len() / nv;
        let mut m = Measurements { nv, ..Default::default() };
        for k in (1..n).step_by(every.max(1)) {
            let (now, before) = (k * nv..(k + 1) * nv, (k - 1) * nv..k * nv);
            if q[before.clone()].iter().chain(&qd[before.clone()]).chain(&qd[now.clone()]).chain(&tau[now.clone()]).any(|x| !x.is_finite()) {
                return Err(format!("sample {} or {} holds a value that is not finite", k, k + 1));
            }
            m.q.extend_from_slice(&q[before.clone()]);
            m.v.extend_from_slice(&qd[before.clone()]);
            m.a.extend(qd[now.clone()].iter().zip(&qd[before]).map(|(b, a)| (b - a) / dt));
            m.tau.extend_from_slice(&tau[now]);
        }
        Ok(m)
    }
}

/// What an estimation found.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The base parameters β (SI units).
    pub beta: Vec<f64>,
    /// Each joint's residual standard deviation after the ordinary pass (N·m): the WLS weights.
    pub sigma: Vec<f64>,
    /// Each β's standard deviation in % of |β| (large: the data says little about it).
    pub relative_std: Vec<f64>,
    /// The condition number of the (weighted) stacked base regressor.
    pub condition: f64,
    /// Samples used.
    pub samples: usize,
    /// Whether the weighted pass ran (not when a joint's residual is exactly 0).
    pub weighted: bool,
}

/// How [`BaseParameters::excite`] searches.
#[derive(Clone, Debug, PartialEq)]
pub struct ExcitationOptions {
    /// Harmonics N (≥ 2).
    pub order: usize,
    /// Base frequency f (Hz): the period is 1/f.
    pub base_frequency: f64,
    /// Points per period where the regressor and the limits are evaluated.
    pub samples: usize,
    /// Cost evaluations in all (at least twice the simplex's size per start).
    pub evaluations: usize,
    /// Random starts.
    pub restarts: usize,
    /// Makes the starts reproducible.
    pub seed: u64,
    /// Share of the limits the trajectory may use, (0, 1]: the drives follow with some error.
    pub margin: f64,
    /// Every joint origin stays above this height (m), when given.
    pub floor: Option<f64>,
}

impl Default for ExcitationOptions {
    fn default() -> Self {
        ExcitationOptions { order: 5, base_frequency: 0.1, samples: 60, evaluations: 2000, restarts: 2, seed: 1, margin: 0.8, floor: Some(0.0) }
    }
}

/// An exciting trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct Excitation {
    /// The trajectory.
    pub trajectory: FourierTrajectory,
    /// The condition number of the base regressor along it.
    pub condition: f64,
    /// Cost evaluations made.
    pub evaluations: usize,
}

/// A cost of this or more marks a trajectory outside the limits.
const INFEASIBLE: f64 = 1e10;

/// Evaluates a trajectory's condition number and limit violations, with preallocated scratch.
struct Evaluator<'a> {
    base: &'a BaseParameters,
    model: &'a Model,
    bounds: Option<&'a JointBounds>,
    samples: usize,
    margin: f64,
    floor: Option<f64>,
    data: Data,
    full: DMatrix<f64>,
    w: DMatrix<f64>,
    q: Vec<f64>,
    v: Vec<f64>,
    a: Vec<f64>,
    evaluations: usize,
}

impl<'a> Evaluator<'a> {
    fn new(base: &'a BaseParameters, model: &'a Model, bounds: Option<&'a JointBounds>, samples: usize, margin: f64, floor: Option<f64>) -> Self {
        let nv = base.nv;
        Evaluator {
            base,
            model,
            bounds,
            samples,
            margin,
            floor,
            data: Data::new(model),
            full: DMatrix::zeros(nv, base.standard.len()),
            w: DMatrix::zeros(samples * nv, base.count()),
            q: vec![0.0; nv],
            v: vec![0.0; nv],
            a: vec![0.0; nv],
            evaluations: 0,
        }
    }

    /// Stacks the base regressor along one period; returns the summed relative violation of
    /// the limits (0: within them).
    fn fill(&mut self, t: &FourierTrajectory, check: bool) -> f64 {
        let nv = self.base.nv;
        let period = t.period();
        let mut violation = 0.0;
        for s in 0..self.samples {
            t.sample(period * s as f64 / self.samples as f64, &mut self.q, &mut self.v, &mut self.a);
            self.base.base_rows(self.model, &mut self.data, (&self.q, &self.v, &self.a), &mut self.full, &mut self.w, s * nv);
            let (Some(b), true) = (self.bounds, check) else { continue };
            // The regressor ran RNEA: data.tau is the nominal model's torque here.
            for j in 0..nv {
                let (mid, half) = (0.5 * (b.lower[j] + b.upper[j]), 0.5 * (b.upper[j] - b.lower[j]) * self.margin);
                violation += ((self.q[j] - mid).abs() / half - 1.0).max(0.0);
                violation += (self.v[j].abs() / (b.velocity[j] * self.margin) - 1.0).max(0.0);
                violation += (self.a[j].abs() / (b.acceleration[j] * self.margin) - 1.0).max(0.0);
                violation += (self.data.tau[j].abs() / (b.torque[j] * self.margin) - 1.0).max(0.0);
            }
            if let Some(floor) = self.floor {
                // The regressor left the joints' world placements at this state.
                for p in &self.data.joint_placements[1..] {
                    violation += (floor - p.translation.z).max(0.0);
                }
            }
        }
        violation
    }

    fn violation(&mut self, t: &FourierTrajectory) -> f64 {
        self.fill(t, true)
    }

    fn condition_of_w(&self) -> f64 {
        condition_of_gram(&gram(&self.w))
    }

    fn condition(&mut self, t: &FourierTrajectory) -> f64 {
        self.fill(t, false);
        self.condition_of_w()
    }

    fn cost(&mut self, t: &FourierTrajectory) -> f64 {
        self.evaluations += 1;
        let violation = self.fill(t, true);
        if violation > 0.0 {
            return INFEASIBLE * (1.0 + violation);
        }
        self.condition_of_w().min(INFEASIBLE / 10.0)
    }
}

/// Nelder–Mead with the dimension-adapted coefficients of Gao & Han (2012), from `x0` with an
/// initial simplex of `steps` along each axis, for at most `budget` evaluations: the best point
/// and its value.
fn nelder_mead(mut f: impl FnMut(&[f64]) -> f64, x0: &[f64], steps: &[f64], budget: usize) -> (f64, Vec<f64>) {
    let n = x0.len();
    let nf = n as f64;
    let (alpha, gamma, rho, sigma) = (1.0, 1.0 + 2.0 / nf, 0.75 - 1.0 / (2.0 * nf), 1.0 - 1.0 / nf);
    let mut simplex: Vec<(f64, Vec<f64>)> = Vec::with_capacity(n + 1);
    simplex.push((f(x0), x0.to_vec()));
    for i in 0..n {
        let mut x = x0.to_vec();
        x[i] += steps[i];
        simplex.push((f(&x), x));
    }
    let mut used = n + 1;
    let along = |c: &[f64], x: &[f64], t: f64| -> Vec<f64> { c.iter().zip(x).map(|(c, x)| c + t * (x - c)).collect() };
    while used < budget {
        simplex.sort_by(|a, b| a.0.total_cmp(&b.0));
        if (simplex[n].0 - simplex[0].0).abs() <= 1e-10 * simplex[0].0.abs() {
            break;
        }
        let mut centroid = vec![0.0; n];
        for (_, x) in &simplex[..n] {
            for (c, v) in centroid.iter_mut().zip(x) {
                *c += v / nf;
            }
        }
        let worst = simplex[n].1.clone();
        let reflected = along(&centroid, &worst, -alpha);
        let fr = f(&reflected);
        used += 1;
        if fr < simplex[0].0 {
            let expanded = along(&centroid, &worst, -alpha * gamma);
            let fe = f(&expanded);
            used += 1;
            simplex[n] = if fe < fr { (fe, expanded) } else { (fr, reflected) };
        } else if fr < simplex[n - 1].0 {
            simplex[n] = (fr, reflected);
        } else {
            let (contracted, outside) = if fr < simplex[n].0 { (along(&centroid, &reflected, rho), true) } else { (along(&centroid, &worst, rho), false) };
            let fc = f(&contracted);
            used += 1;
            if (outside && fc <= fr) || (!outside && fc < simplex[n].0) {
                simplex[n] = (fc, contracted);
            } else {
                let best = simplex[0].1.clone();
                for s in simplex.iter_mut().skip(1) {
                    s.1 = along(&best, &s.1, sigma);
                    s.0 = f(&s.1);
                    used += 1;
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.0.total_cmp(&b.0));
    simplex.swap_remove(0)
}

/// `model` with its dynamic parameters changed at random, reproducibly from `seed`: each
/// body's mass and rotational inertia scaled by up to ±`inertial` (a fraction), its centre of
/// mass moved by up to `inertial` × 0.2 m per axis and its principal axes turned by up to
/// `inertial` rad, each drive's armature and friction scaled by up to ±`drive`: a hidden "true"
/// robot for a simulated identification, physically consistent as the nominal one.
pub fn perturbed_dynamics(model: &Model, seed: u64, inertial: f64, drive: f64) -> Model {
    let mut rng = Rng::new(seed);
    let mut out = model.clone();
    for j in 1..out.njoints() {
        let i = out.inertias[j];
        let mass = i.mass * (1.0 + inertial * rng.uniform());
        let com = i.com + Vector3::new(rng.uniform(), rng.uniform(), rng.uniform()) * (0.2 * inertial);
        let turn = rotation_from_rpy(inertial * rng.uniform(), inertial * rng.uniform(), inertial * rng.uniform());
        let rotational: Matrix3<f64> = turn * i.rotational * turn.transpose() * (1.0 + inertial * rng.uniform());
        out.inertias[j] = Inertia::new(mass, com, rotational);
    }
    for d in &mut out.drives {
        d.armature *= 1.0 + drive * rng.uniform();
        d.viscous_friction *= 1.0 + drive * rng.uniform();
        d.coulomb_friction *= 1.0 + drive * rng.uniform();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dh::{DhConvention, DhLink, DhTable};
    use crate::structure::DriveTrain;

    /// A six-axis arm with drive trains and asymmetric bodies.
    fn arm() -> Model {
        let pi2 = std::f64::consts::FRAC_PI_2;
        let mut links = vec![
            DhLink::revolute(0.0, -pi2, 0.55, 0.0),
            DhLink::revolute(0.625, 0.0, 0.0, -pi2),
            DhLink::revolute(0.0, pi2, 0.0, pi2),
            DhLink::revolute(0.0, -pi2, 0.9, 0.0),
            DhLink::revolute(0.0, pi2, 0.0, 0.0),
            DhLink::revolute(0.0, 0.0, 0.11, 0.0),
        ];
        for (k, l) in links.iter_mut().enumerate() {
            let m = [70.0, 45.0, 25.0, 22.0, 4.0, 1.0][k];
            l.inertia = Some(Inertia::new(m, Vector3::new(0.01, 0.05, -0.02 * k as f64), Matrix3::from_diagonal(&Vector3::new(0.1, 0.12, 0.08)) * m * 0.05));
            l.drive = DriveTrain { armature: 1.0 / (k + 1) as f64, viscous_friction: 5.0 / (k + 1) as f64, coulomb_friction: 3.0 / (k + 1) as f64, ..Default::default() };
        }
        let identity = crate::Se3::from_translation(Vector3::zeros());
        DhTable { name: "arm".into(), convention: DhConvention::Standard, base: identity, tool: identity, links, gravity: Vector3::new(0.0, 0.0, -9.81) }
            .to_model()
            .unwrap()
    }

    fn bounds() -> JointBounds {
        JointBounds {
            lower: vec![-2.5; 6],
            upper: vec![2.5; 6],
            velocity: vec![3.0; 6],
            acceleration: vec![8.0; 6],
            torque: vec![3000.0, 3000.0, 1500.0, 300.0, 300.0, 100.0],
        }
    }

    /// What the simulated plant's drives need: the rigid-body torque plus the drives' friction.
    fn drive_torque(model: &Model, data: &mut Data, q: &[f64], v: &[f64], a: &[f64]) -> DVector<f64> {
        crate::rnea(model, data, q, v, a).clone() + crate::friction(model, data, v)
    }

    fn names() -> Vec<String> {
        (1..=6).map(|j| format!("J{j}")).collect()
    }

    /// Y·π with the drive columns is RNEA (armature included) plus the drives' friction, to rounding.
    #[test]
    fn regressor_with_drives_reproduces_rnea() {
        let model = arm();
        let mut data = Data::new(&model);
        let mut y = DMatrix::zeros(6, parameter_count(&model));
        let pi = DVector::from_vec(standard_parameters(&model));
        // The second state at rest: sign(0) = 0, as the plant's Coulomb friction.
        for (q, v, a) in
            [([0.3, -0.5, 0.9, 1.2, -0.4, 2.0], [0.5, -1.0, 0.2, 0.0, 1.5, -2.0], [1.0, 2.0, -3.0, 0.5, -1.0, 4.0]), ([-1.0, 0.2, 0.4, 0.0, 0.9, -0.3], [0.0; 6], [0.3, 0.0, -0.2, 0.1, 0.0, 0.0])]
        {
            regressor_with_drives(&model, &mut data, &q, &v, &a, &mut y);
            let tau = drive_torque(&model, &mut data, &q, &v, &a);
            assert!((&y * &pi - &tau).amax() < 1e-9 * tau.amax(), "{} vs {}", &y * &pi, tau);
            let inertial = crate::joint_torque_regressor(&model, &mut data, &q, &v, &a).clone();
            assert!((y.columns(0, 60) - inertial).amax() < 1e-12 * y.amax(), "the inertial block is joint_torque_regressor's");
        }
        let names = parameter_names(&model, &names());
        assert_eq!((names[0].as_str(), names[25].as_str(), names[60].as_str(), names[62].as_str()), ("link1.m", "link3.Ixy", "J1.Ia", "J1.fc"));
    }

    /// The base parameters reproduce the torques of every state; the known regroupings of a
    /// serial arm show up (link1 only about its axis: its mass and first moments drop).
    #[test]
    fn base_parameters_reproduce_torques_and_name_the_dropped() {
        let model = arm();
        let base = BaseParameters::new(&model, &names(), &bounds(), 60, 3, BASE_TOLERANCE).unwrap();
        let dropped: Vec<&str> = base.dependent().iter().map(|d| d.0).collect();
        for p in ["link1.m", "link1.mx", "link1.Ixx"] {
            assert!(dropped.contains(&p), "{p} dropped: {dropped:?}");
        }
        assert!(base.count() > 30 && base.count() < 60, "{} base parameters", base.count());
        let pi = standard_parameters(&model);
        let beta = base.base_of(&pi);
        let mut data = Data::new(&model);
        let (q, v, a) = ([-0.7, 0.4, 1.3, -2.0, 0.8, 0.3], [1.0, -0.5, 2.0, 0.3, -1.2, 0.0], [-2.0, 1.0, 0.5, 3.0, -4.0, 1.0]);
        let yb = base.regressor(&model, &q, &v, &a);
        let tau = drive_torque(&model, &mut data, &q, &v, &a);
        assert!((yb * DVector::from_vec(beta) - tau).amax() < 1e-8);
        assert!(base.names().iter().any(|n| n.contains(" + ") || n.contains(" − ")), "combined names: {:?}", base.names());
    }

    /// Noise-free samples of a perturbed arm give its base parameters back.
    #[test]
    fn estimate_recovers_the_truth_from_noise_free_samples() {
        let model = arm();
        let truth = perturbed_dynamics(&model, 7, 0.1, 0.2);
        let base = BaseParameters::new(&model, &names(), &bounds(), 60, 3, BASE_TOLERANCE).unwrap();
        let options = ExcitationOptions { order: 3, samples: 30, evaluations: 150, restarts: 1, floor: None, ..Default::default() };
        let e = base.excite(&model, &bounds(), &options).unwrap();
        assert!(e.condition.is_finite() && e.evaluations <= 200, "{e:?}");
        let mut data = Data::new(&truth);
        let mut m = Measurements { nv: 6, ..Default::default() };
        let (mut q, mut v, mut a) = (vec![0.0; 6], vec![0.0; 6], vec![0.0; 6]);
        for s in 0..400 {
            e.trajectory.sample(e.trajectory.period() * s as f64 / 400.0, &mut q, &mut v, &mut a);
            let tau = drive_torque(&truth, &mut data, &q, &v, &a);
            m.tau.extend(tau.iter());
            m.q.extend(&q);
            m.v.extend(&v);
            m.a.extend(&a);
        }
        let est = base.estimate(&model, &m, true).unwrap();
        let expected = base.base_of(&standard_parameters(&truth));
        for (i, (x, t)) in est.beta.iter().zip(&expected).enumerate() {
            assert!((x - t).abs() <= 1e-6 * t.abs().max(1e-3), "{}: {x} vs {t}", base.names()[i]);
        }
    }

    /// With each joint's torque noise of its own size, the ordinary pass finds the noise levels
    /// and the weighted pass, trusting the quiet joints more, comes closer to the truth (measured:
    /// 10× closer).
    #[test]
    fn weighted_least_squares_finds_the_noise_and_beats_ordinary() {
        let model = arm();
        let truth = perturbed_dynamics(&model, 3, 0.1, 0.2);
        let base = BaseParameters::new(&model, &names(), &bounds(), 60, 3, BASE_TOLERANCE).unwrap();
        let options = ExcitationOptions { order: 3, samples: 30, evaluations: 150, restarts: 1, floor: None, ..Default::default() };
        let t = base.excite(&model, &bounds(), &options).unwrap().trajectory;
        let noise = [20.0, 20.0, 0.2, 0.2, 0.05, 0.05];
        let mut rng = Rng::new(5);
        let mut data = Data::new(&truth);
        let mut m = Measurements { nv: 6, ..Default::default() };
        let (mut q, mut v, mut a) = (vec![0.0; 6], vec![0.0; 6], vec![0.0; 6]);
        for s in 0..3000 {
            t.sample(t.period() * s as f64 / 3000.0, &mut q, &mut v, &mut a);
            let tau = drive_torque(&truth, &mut data, &q, &v, &a);
            for j in 0..6 {
                // Box–Muller from two uniforms in (0, 1].
                let (u1, u2) = (0.5 * (rng.uniform() + 1.0) + 1e-300, 0.5 * (rng.uniform() + 1.0));
                m.tau.push(tau[j] + noise[j] * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos());
            }
            m.q.extend(&q);
            m.v.extend(&v);
            m.a.extend(&a);
        }
        let expected = base.base_of(&standard_parameters(&truth));
        let error = |e: &Estimate| e.beta.iter().zip(&expected).map(|(x, t)| ((x - t) / t.abs().max(1e-3)).powi(2)).sum::<f64>().sqrt();
        let ordinary = base.estimate(&model, &m, false).unwrap();
        let weighted = base.estimate(&model, &m, true).unwrap();
        assert!(weighted.weighted && !ordinary.weighted);
        // The loud joints' σ is their noise; the quiet ones' also holds what the ordinary fit,
        // pulled by the loud rows, leaves unexplained there (measured 0.26 for 0.2, 0.17 for 0.05).
        for (j, (sigma, noise)) in weighted.sigma.iter().zip(noise).enumerate() {
            let ratio = sigma / noise;
            assert!(ratio > 0.9 && ratio < if j < 2 { 1.1 } else { 4.0 }, "joint {}: σ {sigma} for noise {noise}", j + 1);
        }
        assert!(error(&weighted) < 0.5 * error(&ordinary), "WLS {} against OLS {}", error(&weighted), error(&ordinary));
    }

    /// The excitation keeps to the limits and improves on its start.
    #[test]
    fn excitation_keeps_to_the_limits() {
        let model = arm();
        let base = BaseParameters::new(&model, &names(), &bounds(), 60, 3, BASE_TOLERANCE).unwrap();
        let b = bounds();
        let options = ExcitationOptions { order: 3, samples: 30, evaluations: 120, restarts: 1, margin: 0.5, ..Default::default() };
        let e = base.excite(&model, &b, &options).unwrap();
        let t = &e.trajectory;
        let (mut q, mut v, mut a) = (vec![0.0; 6], vec![0.0; 6], vec![0.0; 6]);
        for s in 0..30 {
            t.sample(t.period() * s as f64 / 30.0, &mut q, &mut v, &mut a);
            for j in 0..6 {
                assert!(v[j].abs() <= 0.5 * b.velocity[j] + 1e-9 && a[j].abs() <= 0.5 * b.acceleration[j] + 1e-9);
                assert!(q[j].abs() <= 0.5 * 2.5 + 1e-9);
            }
        }
        let bad = ExcitationOptions { order: 1, ..options };
        assert!(base.excite(&model, &b, &bad).unwrap_err().contains("order 1"));
    }
}

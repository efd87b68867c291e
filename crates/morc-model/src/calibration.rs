//! Geometric calibration of a robot model from measured tool positions (a laser tracker's): the
//! error model puts a small rigid error on every joint placement — translation δp and rotation
//! δφ in the parent's frame, six per joint, so the encoder offsets (rotation about a revolute
//! axis), length errors, misaligned joint axes and the base placement (the first joint's) are
//! all in it — and three on the measured frame's position in its joint (the tool or target
//! mount): 39 parameters for a six-axis arm. Many are not identifiable from positions (a
//! translation along a joint axis followed by the next, the same rotation twice): the QR
//! decomposition with column pivoting of the scaled identification Jacobian keeps the
//! identifiable ones and names the others ([`Identification::dropped`]). The kept ones are
//! estimated by Levenberg–Marquardt, and [`GeometricCalibration::apply`] gives the model with
//! them, which forward and inverse kinematics then use like any model.
//! Off the real-time path: allocates freely.

use nalgebra::{DMatrix, DVector, Vector3};

use super::dense::pivoted_rank;
use super::kinematics::{forward_kinematics_placements, frame_placement};
use super::spatial::{rotation_about_axis, Se3};
use super::structure::{FrameIndex, JointIndex, Model};
use super::Data;

/// One error parameter: which placement it moves and how.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrationParameter {
    /// The joint whose placement it moves, or None for the measured frame's position.
    pub joint: Option<JointIndex>,
    /// 0–2: translation along x, y, z of the parent's frame (m); 3–5: rotation about them (rad).
    pub component: usize,
    /// E.g. "A2 placement ry", "tool z".
    pub name: String,
}

/// Which parameters the poses identify, and how well.
#[derive(Clone, Debug)]
pub struct Identification {
    /// Indices (into [`GeometricCalibration::parameters`]) of the identifiable parameters.
    pub kept: Vec<usize>,
    /// The others with their |R_ii| relative to the largest: ~0 means no pose tells them apart
    /// from the kept ones.
    pub dropped: Vec<(usize, f64)>,
    /// Smallest singular value of the scaled Jacobian of the kept parameters (an observability
    /// index of the poses: larger is better).
    pub observability: f64,
}

/// What a calibration found.
#[derive(Clone, Debug)]
pub struct Calibrated {
    /// Every parameter's estimate (m, rad); 0 for the dropped ones.
    pub errors: Vec<f64>,
    /// The identification it was estimated on.
    pub identification: Identification,
    /// RMS of the position residuals with the nominal model (m).
    pub rms_before: f64,
    /// RMS of the position residuals with the calibrated model (m).
    pub rms_after: f64,
    /// Levenberg–Marquardt iterations taken.
    pub iterations: usize,
}

/// The error model of one model and one measured frame.
#[derive(Clone, Debug)]
pub struct GeometricCalibration {
    frame: FrameIndex,
    parameters: Vec<CalibrationParameter>,
}

/// Relative |R_ii| below which a parameter counts as not identifiable.
const RANK_TOLERANCE: f64 = 1e-8;

impl GeometricCalibration {
    /// The 6 parameters of every moving joint's placement and 3 of `frame`'s position.
    pub fn new(model: &Model, frame: FrameIndex) -> GeometricCalibration {
        let axes = ["x", "y", "z", "rx", "ry", "rz"];
        let mut parameters = Vec::new();
        for j in 1..model.njoints() {
            for (component, axis) in axes.iter().enumerate() {
                parameters.push(CalibrationParameter { joint: Some(j), component, name: format!("{} placement {axis}", model.joint_names()[j]) });
            }
        }
        let tool = &model.frames()[frame].name;
        for (component, axis) in axes.iter().take(3).enumerate() {
            parameters.push(CalibrationParameter { joint: None, component, name: format!("{tool} {axis}") });
        }
        GeometricCalibration { frame, parameters }
    }

    /// The parameters, in the order of every error vector.
    pub fn parameters(&self) -> &[CalibrationParameter] {
        &self.parameters
    }

    /// `model` with the placement errors `errors` (one per parameter) applied.
    pub fn apply(&self, model: &Model, errors: &[f64]) -> Model {
        let mut out = model.clone();
        for j in 1..model.njoints() {
            let e = &errors[(j - 1) * 6..j * 6];
            if e.iter().all(|x| *x == 0.0) {
                continue;
            }
            let error = small_motion(&Vector3::new(e[0], e[1], e[2]), &Vector3::new(e[3], e[4], e[5]));
            out.joint_placements[j] = out.joint_placements[j].compose(&error);
        }
        let t = &errors[errors.len() - 3..];
        let mut frame = out.frames[self.frame].clone();
        frame.placement.translation += Vector3::new(t[0], t[1], t[2]);
        out.frames[self.frame] = frame;
        out
    }

    /// The measured frame's position at each pose, for the model with `errors`.
    fn positions(&self, model: &Model, errors: &[f64], poses: &[Vec<f64>]) -> Vec<Vector3<f64>> {
        let m = self.apply(model, errors);
        let mut data = Data::new(&m);
        poses
            .iter()
            .map(|q| {
                forward_kinematics_placements(&m, &mut data, q);
                frame_placement(&m, &data, self.frame).translation
            })
            .collect()
    }

    /// d(positions)/d(errors) at `errors`, by central differences (3 rows per pose).
    fn jacobian(&self, model: &Model, errors: &[f64], poses: &[Vec<f64>]) -> DMatrix<f64> {
        let h = 1e-7;
        let mut j = DMatrix::zeros(3 * poses.len(), self.parameters.len());
        let mut x = errors.to_vec();
        for k in 0..self.parameters.len() {
            x[k] = errors[k] + h;
            let plus = self.positions(model, &x, poses);
            x[k] = errors[k] - h;
            let minus = self.positions(model, &x, poses);
            x[k] = errors[k];
            for (i, (a, b)) in plus.iter().zip(&minus).enumerate() {
                for r in 0..3 {
                    j[(3 * i + r, k)] = (a[r] - b[r]) / (2.0 * h);
                }
            }
        }
        j
    }

    /// Which parameters `poses` identify: QR with column pivoting of the Jacobian with its
    /// columns scaled to unit length (so lengths and angles compare).
    pub fn identify(&self, model: &Model, poses: &[Vec<f64>]) -> Identification {
        let zero = vec![0.0; self.parameters.len()];
        let j = self.jacobian(model, &zero, poses);
        identification_of(&j)
    }

    /// The fewest poses a fit of `identified` parameters takes: three equations each, at least
    /// twice as many as unknowns so that noise averages out (and never fewer than for half of all
    /// the parameters, so that a handful of poses, which identify little, is not mistaken for a
    /// calibration). Checked before the robot moves as well as by [`calibrate`](Self::calibrate).
    pub fn poses_needed(&self, identified: usize) -> usize {
        (2 * identified.max(self.parameters.len() / 2)).div_ceil(3)
    }

    /// Estimates the errors from `measured` positions of the frame at `poses` (m, rad).
    pub fn calibrate(&self, model: &Model, poses: &[Vec<f64>], measured: &[Vector3<f64>]) -> Result<Calibrated, String> {
        if poses.is_empty() {
            return Err(format!(
                "no poses: give the joint positions where the tool was measured and its measured position at each (at least {}, spread over the workspace)",
                self.poses_needed(self.parameters.len())
            ));
        }
        if poses.len() != measured.len() {
            return Err(format!("{} poses but {} measured positions", poses.len(), measured.len()));
        }
        if let Some((i, q)) = poses.iter().enumerate().find(|(_, q)| q.len() != model.nq()) {
            return Err(format!("pose {} has {} joint values, the model {}", i + 1, q.len(), model.nq()));
        }
        // A NaN would reach the SVD and panic there, naming nothing.
        for (i, q) in poses.iter().enumerate() {
            if let Some(j) = q.iter().position(|x| !x.is_finite()) {
                return Err(format!("pose {}: joint {} is {}: give a number", i + 1, j + 1, q[j]));
            }
        }
        if let Some((i, p)) = measured.iter().enumerate().find(|(_, p)| !p.iter().all(|x| x.is_finite())) {
            return Err(format!("measured position {} is {:?}: give three numbers", i + 1, p.as_slice()));
        }
        let identification = self.identify(model, poses);
        let needed = self.poses_needed(identification.kept.len());
        if poses.len() < needed {
            return Err(format!(
                "{} poses give {} equations for {} parameters or more: measure more poses (at least {needed}, spread over the workspace)",
                poses.len(),
                3 * poses.len(),
                identification.kept.len().max(self.parameters.len() / 2),
            ));
        }
        let residual = |x: &[f64]| -> DVector<f64> {
            let p = self.positions(model, x, poses);
            DVector::from_iterator(3 * poses.len(), p.iter().zip(measured).flat_map(|(a, b)| [b.x - a.x, b.y - a.y, b.z - a.z]))
        };
        let rms = |r: &DVector<f64>| (r.norm_squared() / (r.len() as f64 / 3.0)).sqrt();
        let mut x = vec![0.0; self.parameters.len()];
        let mut r = residual(&x);
        let rms_before = rms(&r);
        let mut lambda = 1e-3;
        let mut iterations = 0;
        for _ in 0..50 {
            iterations += 1;
            let full = self.jacobian(model, &x, poses);
            let jk = full.select_columns(identification.kept.iter());
            let jtj = jk.transpose() * &jk;
            let jtr = jk.transpose() * &r;
            let mut improved = false;
            for _ in 0..10 {
                let mut a = jtj.clone();
                for d in 0..a.nrows() {
                    a[(d, d)] += lambda * jtj[(d, d)].max(1e-12);
                }
                let Some(step) = a.lu().solve(&jtr) else { break };
                let mut trial = x.clone();
                for (s, &k) in step.iter().zip(&identification.kept) {
                    trial[k] += s;
                }
                let rt = residual(&trial);
                if rt.norm_squared() < r.norm_squared() {
                    let done = step.norm() < 1e-12 || (r.norm_squared() - rt.norm_squared()) < 1e-14 * r.norm_squared().max(1e-30);
                    x = trial;
                    r = rt;
                    lambda = (lambda / 10.0).max(1e-12);
                    improved = true;
                    if done {
                        return Ok(Calibrated { errors: x, identification, rms_before, rms_after: rms(&r), iterations });
                    }
                    break;
                }
                lambda *= 10.0;
            }
            if !improved {
                break;
            }
        }
        Ok(Calibrated { errors: x, identification, rms_before, rms_after: rms(&r), iterations })
    }
}

/// Observability indices of a set of measurement poses, from the singular values σ₁ ≥ … ≥ σₚ
/// of their scaled identification Jacobian (Sun & Hollerbach's O1–O5); larger is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObservabilityIndex {
    /// O1: (σ₁⋯σₚ)^(1/p) / √N — the volume of the error ellipsoid (Borm and Menq).
    O1,
    /// O2: σₚ / σ₁ — the inverse condition number (Driels and Pathre).
    O2,
    /// O3: σₚ — the smallest singular value (Nahvi and Hollerbach).
    O3,
    /// O4: σₚ² / σ₁ — the noise amplification index (Nahvi and Hollerbach).
    O4,
    /// O5: 1 / Σ 1/σᵢ — the sum of the variances of the estimates, inverted (Sun and Hollerbach).
    O5,
}

impl ObservabilityIndex {
    /// "O1" … "O5".
    pub fn parse(name: &str) -> Option<ObservabilityIndex> {
        Some(match name {
            "O1" | "o1" => ObservabilityIndex::O1,
            "O2" | "o2" => ObservabilityIndex::O2,
            "O3" | "o3" => ObservabilityIndex::O3,
            "O4" | "o4" => ObservabilityIndex::O4,
            "O5" | "o5" => ObservabilityIndex::O5,
            _ => return None,
        })
    }

    /// The index of singular values `sigma` (any order) of `poses` poses.
    pub fn of(self, sigma: &[f64], poses: usize) -> f64 {
        let p = sigma.len() as f64;
        let (min, max) = sigma.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &s| (a.min(s), b.max(s)));
        if min <= 0.0 || sigma.is_empty() {
            return 0.0;
        }
        match self {
            ObservabilityIndex::O1 => (sigma.iter().map(|s| s.ln()).sum::<f64>() / p).exp() / (poses as f64).sqrt(),
            ObservabilityIndex::O2 => min / max,
            ObservabilityIndex::O3 => min,
            ObservabilityIndex::O4 => min * min / max,
            ObservabilityIndex::O5 => 1.0 / sigma.iter().map(|s| 1.0 / s).sum::<f64>(),
        }
    }
}

/// Measurement poses chosen from candidates.
#[derive(Clone, Debug)]
pub struct PoseSelection {
    /// Indices into the candidates, in the order chosen.
    pub chosen: Vec<usize>,
    /// The index of the chosen poses.
    pub index: f64,
    /// The index of as many poses taken evenly from the candidates' order (a linear scan).
    pub linear_scan_index: f64,
    /// Exchange sweeps made.
    pub sweeps: usize,
}

impl GeometricCalibration {
    /// Chooses `n` of `candidates` (joint positions, rad) to measure: the paper's
    /// remove-and-replace exchange — starting from a linear scan of the candidates, each chosen
    /// pose is replaced by the candidate that raises `index` most, sweep after sweep, until no
    /// exchange helps. The identification Jacobian of every candidate is computed once (columns
    /// scaled alike for all, on the parameters the whole candidate set identifies); an exchange
    /// is a rank-3 update of JᵀJ.
    pub fn select_poses(&self, model: &Model, candidates: &[Vec<f64>], n: usize, index: ObservabilityIndex) -> Result<PoseSelection, String> {
        if candidates.is_empty() {
            return Err(format!("no candidates: give poses the tracker sees and the robot reaches to choose {n} from"));
        }
        if n == 0 || n > candidates.len() {
            return Err(format!("choose between 1 and {} poses (the candidates), not {n}", candidates.len()));
        }
        if let Some((i, j)) = candidates.iter().enumerate().find_map(|(i, q)| q.iter().position(|x| !x.is_finite()).map(|j| (i, j))) {
            return Err(format!("candidate {}: joint {} is {}: give a number", i + 1, j + 1, candidates[i][j]));
        }
        let zero = vec![0.0; self.parameters.len()];
        let full = self.jacobian(model, &zero, candidates);
        let identification = identification_of(&full);
        let mut j = full.select_columns(identification.kept.iter());
        for mut c in j.column_iter_mut() {
            let norm = c.norm();
            if norm > 0.0 {
                c /= norm;
            }
        }
        let p = j.ncols();
        // Each candidate's contribution to JᵀJ.
        let blocks: Vec<DMatrix<f64>> = (0..candidates.len())
            .map(|i| {
                let rows = j.rows(3 * i, 3);
                rows.transpose() * rows
            })
            .collect();
        let value = |a: &DMatrix<f64>| {
            let sigma: Vec<f64> = a.clone().symmetric_eigenvalues().iter().map(|e| e.max(0.0).sqrt()).collect();
            index.of(&sigma, n)
        };
        let linear: Vec<usize> = (0..n).map(|k| k * candidates.len() / n).collect();
        let sum = |set: &[usize]| set.iter().fold(DMatrix::zeros(p, p), |a, &i| a + &blocks[i]);
        let linear_scan_index = value(&sum(&linear));
        let mut chosen = linear;
        let mut a = sum(&chosen);
        let mut current = linear_scan_index;
        let mut sweeps = 0;
        loop {
            sweeps += 1;
            let mut improved = false;
            for slot in 0..n {
                let without = &a - &blocks[chosen[slot]];
                let mut best = (current, None);
                for (c, block) in blocks.iter().enumerate() {
                    if chosen.contains(&c) {
                        continue;
                    }
                    let v = value(&(&without + block));
                    if v > best.0 * (1.0 + 1e-12) {
                        best = (v, Some(c));
                    }
                }
                if let (v, Some(c)) = best {
                    chosen[slot] = c;
                    a = without + &blocks[c];
                    current = v;
                    improved = true;
                }
            }
            if !improved || sweeps >= 50 {
                break;
            }
        }
        Ok(PoseSelection { chosen, index: current, linear_scan_index, sweeps })
    }
}

/// A small rigid motion: translation `p`, rotation `phi` (axis × angle).
fn small_motion(p: &Vector3<f64>, phi: &Vector3<f64>) -> Se3 {
    let angle = phi.norm();
    let rotation = if angle > 0.0 { rotation_about_axis(&(phi / angle), angle.sin(), angle.cos()) } else { nalgebra::Matrix3::identity() };
    Se3::new(rotation, *p)
}

/// The identifiable columns of `j`: QR with column pivoting ([`pivoted_rank`]) on unit-scaled
/// columns; a column whose remaining norm — its |R_ii| — falls below [`RANK_TOLERANCE`] of the
/// first is dropped, and so is one that is rounding noise to begin with (a parameter that moves
/// no measured point, which unit scaling would turn into a column of noise).
fn identification_of(j: &DMatrix<f64>) -> Identification {
    let (mut kept, r) = pivoted_rank(j, RANK_TOLERANCE);
    kept.sort_unstable();
    let dropped: Vec<(usize, f64)> = (0..j.ncols()).filter(|c| kept.binary_search(c).is_err()).map(|c| (c, r[c])).collect();
    let mut scaled = j.select_columns(kept.iter());
    for mut c in scaled.column_iter_mut() {
        let norm = c.norm();
        if norm > 0.0 {
            c /= norm;
        }
    }
    // No poses (no rows) or nothing identified: nothing is observable.
    let observability = if scaled.is_empty() { 0.0 } else { scaled.singular_values().min() };
    Identification { kept, dropped, observability }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dh::{DhConvention, DhLink, DhTable};

    /// A six-axis arm (PUMA-like standard DH) with a tool frame.
    fn arm() -> Model {
        let pi2 = std::f64::consts::FRAC_PI_2;
        let links = vec![
            DhLink::revolute(0.0, pi2, 0.67, 0.0),
            DhLink::revolute(0.43, 0.0, 0.0, 0.0),
            DhLink::revolute(0.02, -pi2, 0.15, 0.0),
            DhLink::revolute(0.0, pi2, 0.43, 0.0),
            DhLink::revolute(0.0, -pi2, 0.0, 0.0),
            DhLink::revolute(0.0, 0.0, 0.1, 0.0),
        ];
        let table = DhTable {
            name: "arm".into(),
            convention: DhConvention::Standard,
            base: Se3::identity(),
            tool: Se3::identity(),
            links,
            gravity: Vector3::new(0.0, 0.0, -9.81),
        };
        table.to_model().unwrap()
    }

    /// Deterministic pseudo-random numbers in [-1, 1).
    fn noise(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    #[test]
    fn calibration_recovers_a_perturbed_arm_from_tool_positions() {
        let nominal = arm();
        let tool = nominal.frames().iter().position(|f| f.name == "tool").unwrap_or(nominal.frames().len() - 1);
        let cal = GeometricCalibration::new(&nominal, tool);
        assert_eq!(cal.parameters().len(), 39, "6 × 6 placement parameters and the tool's 3");
        // The "true" robot: every parameter off by up to 2 mm or 0.2°.
        let mut seed = 7;
        let truth: Vec<f64> = cal.parameters().iter().map(|p| if p.component < 3 { 2e-3 } else { 0.2f64.to_radians() } * noise(&mut seed)).collect();
        let real = cal.apply(&nominal, &truth);
        let pose = |seed: &mut u64| (0..6).map(|_| 1.5 * noise(seed)).collect::<Vec<f64>>();
        let poses: Vec<Vec<f64>> = (0..60).map(|_| pose(&mut seed)).collect();
        // A tracker with 10 µm noise.
        let measured: Vec<Vector3<f64>> = cal
            .positions(&real, &vec![0.0; 39], &poses)
            .into_iter()
            .map(|p| p + Vector3::new(noise(&mut seed), noise(&mut seed), noise(&mut seed)) * 1e-5)
            .collect();
        let c = cal.calibrate(&nominal, &poses, &measured).unwrap();
        eprintln!(
            "kept {}, dropped {:?}; rms {:.3e} → {:.3e} m in {} iterations; observability {:.3e}",
            c.identification.kept.len(),
            c.identification.dropped.iter().map(|d| cal.parameters()[d.0].name.as_str()).collect::<Vec<_>>(),
            c.rms_before,
            c.rms_after,
            c.iterations,
            c.identification.observability
        );
        assert!(!c.identification.dropped.is_empty(), "some parameters are not identifiable from positions");
        assert!(c.identification.kept.len() < 39 && c.identification.kept.len() > 20, "kept {}", c.identification.kept.len());
        assert!(c.rms_before > 1e-3, "nominal error {} m", c.rms_before);
        assert!(c.rms_after < 2e-5, "calibrated residual {} m", c.rms_after);
        // On poses it has not seen, the calibrated model predicts the real robot's tool.
        let calibrated = cal.apply(&nominal, &c.errors);
        let check: Vec<Vec<f64>> = (0..30).map(|_| pose(&mut seed)).collect();
        let zero = vec![0.0; 39];
        let (real_p, cal_p, nom_p) = (cal.positions(&real, &zero, &check), cal.positions(&calibrated, &zero, &check), cal.positions(&nominal, &zero, &check));
        let worst = |a: &[Vector3<f64>]| a.iter().zip(&real_p).map(|(x, y)| (x - y).norm()).fold(0.0, f64::max);
        assert!(worst(&nom_p) > 2e-3, "nominal off by {} m", worst(&nom_p));
        assert!(worst(&cal_p) < 1e-4, "calibrated off by {} m at new poses", worst(&cal_p));
    }

    #[test]
    fn remove_and_replace_beats_a_linear_scan() {
        let nominal = arm();
        let tool = nominal.frames().len() - 1;
        let cal = GeometricCalibration::new(&nominal, tool);
        // A grid over the first three joints, wrist varied along with them.
        let mut candidates = Vec::new();
        for a in 0..6 {
            for b in 0..6 {
                for c in 0..6 {
                    let (x, y, z) = (a as f64 / 5.0 - 0.5, b as f64 / 5.0 - 0.5, c as f64 / 5.0 - 0.5);
                    candidates.push(vec![2.0 * x, 1.5 * y, 1.5 * z, x + y, y - z, z + x]);
                }
            }
        }
        // The smallest singular value gains most (the paper's figure); the geometric mean less.
        for (index, gain) in [(ObservabilityIndex::O1, 1.2), (ObservabilityIndex::O3, 2.0)] {
            let s = cal.select_poses(&nominal, &candidates, 25, index).unwrap();
            eprintln!("{index:?}: {:.4e} vs linear scan {:.4e} ({:.1}×) in {} sweeps", s.index, s.linear_scan_index, s.index / s.linear_scan_index, s.sweeps);
            assert!(s.index > gain * s.linear_scan_index, "{index:?}: {} vs {}", s.index, s.linear_scan_index);
            let mut unique = s.chosen.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), 25, "25 different poses");
        }
        assert!(cal.select_poses(&nominal, &candidates, 0, ObservabilityIndex::O1).is_err());
    }

    #[test]
    fn a_pose_that_is_not_a_number_is_named_not_a_panic() {
        let nominal = arm();
        let tool = nominal.frames().len() - 1;
        let cal = GeometricCalibration::new(&nominal, tool);
        let mut poses: Vec<Vec<f64>> = (0..20).map(|k| (0..6).map(|j| 0.1 * (k * (j + 1)) as f64 % 1.0).collect()).collect();
        poses[4][2] = f64::NAN;
        let measured = vec![Vector3::zeros(); poses.len()];
        assert_eq!(cal.calibrate(&nominal, &poses, &measured).unwrap_err(), "pose 5: joint 3 is NaN: give a number");
        assert_eq!(cal.select_poses(&nominal, &poses, 10, ObservabilityIndex::O1).unwrap_err(), "candidate 5: joint 3 is NaN: give a number");
    }

    #[test]
    fn a_parameter_no_position_can_see_is_dropped_and_named() {
        let nominal = arm();
        let tool = nominal.frames().len() - 1;
        let cal = GeometricCalibration::new(&nominal, tool);
        let mut seed = 3;
        let poses: Vec<Vec<f64>> = (0..40).map(|_| (0..6).map(|_| noise(&mut seed)).collect()).collect();
        let id = cal.identify(&nominal, &poses);
        // The first joint's rotation about its own axis and a turn of the base about the same
        // (vertical) axis are one and the same: of such pairs one is dropped.
        assert!(id.dropped.len() >= 6, "dropped {:?}", id.dropped.iter().map(|d| &cal.parameters()[d.0].name).collect::<Vec<_>>());
        for (k, rii) in &id.dropped {
            assert!(*rii < 1e-6, "{} dropped with |R_ii| {rii}", cal.parameters()[*k].name);
        }
        assert!(id.observability > 0.0);
    }
}

//! A wrist force/torque sensor's own load: the bias (the reading with nothing attached) and the
//! weight of the tool between the sensor and the hand, which turns with the sensor's orientation.
//!
//! A sensor at orientation `R` (its frame's axes in the base frame) reads
//! `w_raw = w_ext + w_load(R) + bias`, where the tool's weight gives, in the sensor frame,
//! `f_load = m·Rᵀg` and `t_load = c × f_load` (`g = (0, 0, −9.81)` m/s², `c` the tool's centre of
//! mass in the sensor frame). [`FtLoad::compensate`] removes the load and the bias from a reading;
//! [`FtLoad::identify`] finds them from a few static poses (nothing touching the tool), by linear
//! least squares: the force rows are linear in `(m, f_bias)`, the torque rows in `(m·c, t_bias)`.
//!
//! Units are SI throughout: kg, m, N, N·m. Wrenches are `[fx, fy, fz, tx, ty, tz]`.

use std::fmt;

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};

/// Gravity in the base frame (m/s²): the base's z axis points up.
pub const GRAVITY: [f64; 3] = [0.0, 0.0, -9.81];

/// Fewest poses [`FtLoad::identify`] takes: two gravity directions separate the mass from the force
/// bias, but the centre of mass along the difference of two directions stays unobservable.
pub const MIN_POSES: usize = 3;

/// Smallest ratio of the least and the greatest singular value of a block of the fit before the
/// block counts as rank-deficient: poses whose gravity directions in the sensor frame differ by
/// less than about 0.1° cannot tell the load from the bias.
pub const RANK_TOLERANCE: f64 = 1e-4;

/// How far `RᵀR` may be from the identity for `R` to count as a rotation (rounded entries, as a
/// person types them, pass).
const ORTHONORMAL_TOLERANCE: f64 = 1e-3;

/// The load on a force/torque sensor: the tool's mass and centre of mass, and the sensor's bias.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FtLoad {
    /// The tool's mass (kg).
    pub mass: f64,
    /// The tool's centre of mass in the sensor frame (m).
    pub com: [f64; 3],
    /// The reading with no load and no contact, `[fx, fy, fz, tx, ty, tz]` (N, N·m).
    pub bias: [f64; 6],
}

/// What [`FtLoad::identify`] found: the load and how well it explains the poses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FtIdentification {
    /// The identified load.
    pub load: FtLoad,
    /// Root mean square of the force residuals over all poses and axes (N).
    pub force_rms: f64,
    /// Root mean square of the torque residuals over all poses and axes (N·m).
    pub torque_rms: f64,
}

/// Why poses do not determine a load.
#[derive(Clone, Debug, PartialEq)]
pub enum FtLoadError {
    /// Fewer than [`MIN_POSES`] poses.
    TooFewPoses {
        /// How many were given.
        given: usize,
    },
    /// A pose's orientation is not a rotation matrix, or a number is not finite.
    BadPose {
        /// The pose's index (0-based).
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// The poses leave a quantity undetermined: their gravity directions in the sensor frame are
    /// (nearly) the same, or lie on one line.
    Unobservable {
        /// The quantities the poses cannot tell apart ("mass", "force bias x", "centre of mass y"…).
        quantities: Vec<&'static str>,
        /// The least over the greatest singular value of the block concerned.
        ratio: f64,
    },
}

impl fmt::Display for FtLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FtLoadError::TooFewPoses { given } => {
                write!(f, "load identification needs at least {MIN_POSES} static poses with different orientations of the sensor, got {given}")
            }
            FtLoadError::BadPose { index, message } => write!(f, "pose {}: {message}", index + 1),
            FtLoadError::Unobservable { quantities, ratio } => write!(
                f,
                "the poses cannot determine the {} (singular value ratio {ratio:.1e} < {RANK_TOLERANCE:.0e}): gravity points the same way, or along one line, \
                 in the sensor frame in all of them; tilt the sensor about two different horizontal axes between poses (turning it about the vertical changes nothing)",
                quantities.join(" and ")
            ),
        }
    }
}

impl std::error::Error for FtLoadError {}

/// Gravity in the sensor frame: `Rᵀg`.
#[inline]
fn gravity_in_sensor(rot: &Matrix3<f64>) -> Vector3<f64> {
    rot.transpose() * Vector3::from(GRAVITY)
}

impl FtLoad {
    /// The load's own wrench in the sensor frame at orientation `rot`, bias not included.
    pub fn load_wrench(&self, rot: &Matrix3<f64>) -> [f64; 6] {
        let f = gravity_in_sensor(rot) * self.mass;
        let t = Vector3::from(self.com).cross(&f);
        [f.x, f.y, f.z, t.x, t.y, t.z]
    }

    /// The external wrench from a raw reading at orientation `rot` (the sensor's axes in the base
    /// frame): `raw − bias − w_load(rot)`. Allocates nothing.
    pub fn compensate(&self, rot: &Matrix3<f64>, raw: &[f64; 6]) -> [f64; 6] {
        let load = self.load_wrench(rot);
        std::array::from_fn(|i| raw[i] - self.bias[i] - load[i])
    }

    /// The load from static poses `(orientation, raw reading)` with nothing touching the tool, by
    /// linear least squares; at least [`MIN_POSES`] poses whose gravity directions in the sensor
    /// frame differ (tilts about two horizontal axes, not turns about the vertical).
    pub fn identify(poses: &[(Matrix3<f64>, [f64; 6])]) -> Result<FtIdentification, FtLoadError> {
        if poses.len() < MIN_POSES {
            return Err(FtLoadError::TooFewPoses { given: poses.len() });
        }
        let n = poses.len();
        // Force rows: f = g_s·m + f_bias; torque rows: t = (m·c) × g_s + t_bias = −[g_s]ₓ·(m·c) + t_bias.
        let mut af = DMatrix::zeros(3 * n, 4);
        let mut bf = DVector::zeros(3 * n);
        let mut at = DMatrix::zeros(3 * n, 6);
        let mut bt = DVector::zeros(3 * n);
        for (index, (rot, raw)) in poses.iter().enumerate() {
            check_pose(index, rot, raw)?;
            let g = gravity_in_sensor(rot);
            let skew = g.cross_matrix();
            for r in 0..3 {
                let row = 3 * index + r;
                af[(row, 0)] = g[r];
                af[(row, 1 + r)] = 1.0;
                bf[row] = raw[r];
                for c in 0..3 {
                    at[(row, c)] = -skew[(r, c)];
                }
                at[(row, 3 + r)] = 1.0;
                bt[row] = raw[3 + r];
            }
        }
        const FORCE: [&str; 4] = ["mass", "force bias x", "force bias y", "force bias z"];
        const TORQUE: [&str; 6] = ["centre of mass x", "centre of mass y", "centre of mass z", "torque bias x", "torque bias y", "torque bias z"];
        let (xf, force_rms) = solve(&af, &bf, &FORCE)?;
        let (xt, torque_rms) = solve(&at, &bt, &TORQUE)?;
        let mass = xf[0];
        // m·c is what the torques determine; with no mass there is no centre of mass to find.
        let com = if mass.abs() > f64::EPSILON { [xt[0] / mass, xt[1] / mass, xt[2] / mass] } else { [0.0; 3] };
        let load = FtLoad { mass, com, bias: [xf[1], xf[2], xf[3], xt[3], xt[4], xt[5]] };
        Ok(FtIdentification { load, force_rms, torque_rms })
    }
}

fn check_pose(index: usize, rot: &Matrix3<f64>, raw: &[f64; 6]) -> Result<(), FtLoadError> {
    let bad = |message: String| Err(FtLoadError::BadPose { index, message });
    if !rot.iter().chain(raw.iter()).all(|x| x.is_finite()) {
        return bad("the orientation or the wrench has a number that is not finite".into());
    }
    let error = (rot.transpose() * rot - Matrix3::identity()).abs().max();
    if error > ORTHONORMAL_TOLERANCE {
        return bad(format!("the orientation is not a rotation matrix (RᵀR differs from the identity by {error:.2e}); give the sensor frame's axes in the base frame"));
    }
    Ok(())
}

/// Least squares `a·x ≈ b` with a rank check; the solution and the residuals' RMS. On a
/// rank-deficient `a`, names the quantities (`names`, one per column) in its null space.
fn solve(a: &DMatrix<f64>, b: &DVector<f64>, names: &[&'static str]) -> Result<(DVector<f64>, f64), FtLoadError> {
    // Columns scaled to unit norm, so that kg·(m/s²) and N columns weigh alike in the rank check
    // and in the null direction that names the free quantities.
    let scale = DVector::from_iterator(a.ncols(), a.column_iter().map(|c| if c.norm() > 0.0 { 1.0 / c.norm() } else { 1.0 }));
    let scaled = a * DMatrix::from_diagonal(&scale);
    let svd = scaled.svd(true, true);
    let s = &svd.singular_values;
    let (max, min_index) = s.iter().enumerate().fold((0.0f64, 0), |(max, at), (i, &v)| (max.max(v), if v < s[at] { i } else { at }));
    let ratio = s[min_index] / max;
    if ratio.is_nan() || ratio < RANK_TOLERANCE {
        let v_t = svd.v_t.as_ref().expect("computed with V");
        let null = v_t.row(min_index);
        let largest = null.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        // The quantities that move along the null direction: what the poses leave free.
        let quantities = names.iter().zip(null.iter()).filter(|(_, x)| x.abs() >= 0.3 * largest).map(|(n, _)| *n).collect();
        return Err(FtLoadError::Unobservable { quantities, ratio });
    }
    let x = svd.solve(b, 0.0).expect("computed with U and V").component_mul(&scale);
    let residual = a * &x - b;
    let rms = (residual.norm_squared() / residual.len() as f64).sqrt();
    Ok((x, rms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rotation_from_rpy;

    const LOAD: FtLoad = FtLoad { mass: 1.7, com: [0.012, -0.021, 0.085], bias: [1.5, -2.0, 0.7, 0.11, -0.05, 0.02] };

    /// Deterministic noise in [−1, 1] (a linear congruential generator), so a failure reproduces.
    struct Noise(u64);
    impl Noise {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        }
    }

    fn reading(load: &FtLoad, rot: &Matrix3<f64>, ext: [f64; 6]) -> [f64; 6] {
        let w = load.load_wrench(rot);
        std::array::from_fn(|i| ext[i] + w[i] + load.bias[i])
    }

    fn poses() -> Vec<Matrix3<f64>> {
        [(0.0, 0.0, 0.0), (0.6, 0.0, 0.3), (0.0, -0.7, 1.0), (1.2, 0.4, -0.5), (-0.5, 1.0, 2.0), (std::f64::consts::PI, 0.2, 0.0)]
            .iter()
            .map(|&(r, p, y)| rotation_from_rpy(r, p, y))
            .collect()
    }

    #[test]
    fn compensation_leaves_the_external_wrench_at_any_orientation() {
        let ext = [3.0, -1.0, 10.0, 0.2, 0.3, -0.4];
        for rot in poses() {
            let out = LOAD.compensate(&rot, &reading(&LOAD, &rot, ext));
            for i in 0..6 {
                assert!((out[i] - ext[i]).abs() < 1e-12, "{out:?} vs {ext:?}");
            }
        }
        // Hanging straight down (sensor z up), the tool pulls −z with m·g, and its offset com
        // along x gives a torque about y: c × f = (cx, 0, 0) × (0, 0, −mg) = (0, cx·mg, 0).
        let hang = FtLoad { mass: 2.0, com: [0.1, 0.0, 0.0], bias: [0.0; 6] };
        let w = hang.load_wrench(&Matrix3::identity());
        assert!((w[2] + 2.0 * 9.81).abs() < 1e-12 && (w[4] - 0.1 * 2.0 * 9.81).abs() < 1e-12, "{w:?}");
    }

    #[test]
    fn identifies_a_known_load_exactly_and_within_the_noise() {
        let exact: Vec<_> = poses().into_iter().map(|r| (r, reading(&LOAD, &r, [0.0; 6]))).collect();
        let fit = FtLoad::identify(&exact).unwrap();
        assert!((fit.load.mass - LOAD.mass).abs() < 1e-9, "{fit:?}");
        for i in 0..3 {
            assert!((fit.load.com[i] - LOAD.com[i]).abs() < 1e-9, "{fit:?}");
        }
        for i in 0..6 {
            assert!((fit.load.bias[i] - LOAD.bias[i]).abs() < 1e-9, "{fit:?}");
        }
        assert!(fit.force_rms < 1e-9 && fit.torque_rms < 1e-9, "{fit:?}");

        // Noise of 0.1 N and 0.005 N·m on every reading, 10 readings a pose.
        let mut noise = Noise(7);
        let mut noisy = Vec::new();
        for r in poses() {
            for _ in 0..10 {
                let w = reading(&LOAD, &r, [0.0; 6]);
                noisy.push((r, std::array::from_fn(|i| w[i] + if i < 3 { 0.1 } else { 0.005 } * noise.next())));
            }
        }
        let fit = FtLoad::identify(&noisy).unwrap();
        assert!((fit.load.mass - LOAD.mass).abs() < 0.02, "mass {fit:?}");
        for i in 0..3 {
            assert!((fit.load.com[i] - LOAD.com[i]).abs() < 2e-3, "com {fit:?}");
        }
        // Uniform noise of half-width a has an RMS of a/√3.
        assert!((fit.force_rms - 0.1 / 3f64.sqrt()).abs() < 0.02, "force rms {}", fit.force_rms);
        assert!((fit.torque_rms - 0.005 / 3f64.sqrt()).abs() < 1e-3, "torque rms {}", fit.torque_rms);
    }

    #[test]
    fn degenerate_poses_name_what_they_cannot_determine() {
        let r = rotation_from_rpy(0.3, 0.2, 0.0);
        let same: Vec<_> = (0..5).map(|_| (r, reading(&LOAD, &r, [0.0; 6]))).collect();
        let e = FtLoad::identify(&same).unwrap_err();
        match &e {
            FtLoadError::Unobservable { quantities, .. } => assert!(quantities.contains(&"mass"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("cannot determine the mass") && e.to_string().contains("tilt the sensor"), "{e}");

        // Turning about the vertical does not change where gravity points in the sensor frame.
        let turns: Vec<_> = (0..4).map(|k| rotation_from_rpy(0.0, 0.0, k as f64)).map(|r| (r, reading(&LOAD, &r, [0.0; 6]))).collect();
        assert!(matches!(FtLoad::identify(&turns), Err(FtLoadError::Unobservable { .. })));

        // Two gravity directions fix the mass but not the centre of mass along their difference.
        let two: Vec<_> = [0.0, 0.0, 0.0, 0.8, 0.8].iter().map(|&roll| rotation_from_rpy(roll, 0.0, 0.0)).map(|r| (r, reading(&LOAD, &r, [0.0; 6]))).collect();
        let e = FtLoad::identify(&two).unwrap_err();
        assert!(e.to_string().contains("centre of mass"), "{e}");

        assert_eq!(FtLoad::identify(&same[..2]).unwrap_err(), FtLoadError::TooFewPoses { given: 2 });
        let mut skewed = same.clone();
        skewed[1].0[(0, 0)] = 2.0;
        assert!(FtLoad::identify(&skewed).unwrap_err().to_string().starts_with("pose 2: the orientation is not a rotation matrix"));
        let mut nan = same;
        nan[2].1[4] = f64::NAN;
        assert!(FtLoad::identify(&nan).unwrap_err().to_string().contains("not finite"));
    }
}

//! The model layer against Pinocchio 4.1.0 (UR5 from URDF; Panda and xArm7 with their
//! `<dynamics>` and a mimic finger, at test time) and against itself (KR5 from DH).

#[path = "pinocchio_peer/mod.rs"]
mod pinocchio_peer;

use std::path::PathBuf;

use morc_model::{aba, compute_frame_jacobian, crba, forward_kinematics, forward_kinematics_placements, frame_placement, friction, gravity, nle, rnea, Data, DhTable, DlsIk, Inertia, Model, Se3};
use nalgebra::{DMatrix, Matrix3, Vector3};
use serde_json::Value;

fn reference_path(file: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference/dynamics").join(file);
    assert!(path.exists(), "reference file missing: expected {} (the reference data lives in tests/data/reference/, see its README)", path.display());
    path
}

fn numbers(value: &Value) -> Vec<f64> {
    value.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

fn matrix(value: &Value) -> DMatrix<f64> {
    let rows: Vec<Vec<f64>> = value.as_array().expect("rows").iter().map(numbers).collect();
    DMatrix::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

/// Tracks the largest error of one quantity; the bound is 1e-9 absolute, relaxed to 1e-9
/// relative for entries larger than 1 in magnitude.
struct Worst {
    name: &'static str,
    absolute: f64,
    scaled: f64,
}

impl Worst {
    fn new(name: &'static str) -> Self {
        Worst { name, absolute: 0.0, scaled: 0.0 }
    }
    fn check(&mut self, got: &[f64], expected: &[f64]) {
        assert_eq!(got.len(), expected.len(), "{}: length", self.name);
        for (g, e) in got.iter().zip(expected) {
            let err = (g - e).abs();
            self.absolute = self.absolute.max(err);
            self.scaled = self.scaled.max(err / e.abs().max(1.0));
        }
    }
    fn report(&self) {
        println!("{:<16} max abs error {:.3e}   max error/max(1,|ref|) {:.3e}", self.name, self.absolute, self.scaled);
        assert!(self.scaled <= 1e-9, "{}: error {:.3e} exceeds 1e-9", self.name, self.scaled);
    }
}

fn load_ur5() -> (Model, Value) {
    let robot = morc_model::load_urdf(reference_path("ur5_robot.urdf")).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(reference_path("ur5_reference.json")).unwrap();
    (robot, serde_json::from_str(&text).unwrap())
}

#[test]
fn ur5_matches_pinocchio() {
    let (robot, reference) = load_ur5();
    let names: Vec<String> = reference["joint_names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect();
    assert_eq!(robot.nv(), 6);
    assert_eq!(&robot.joint_names()[1..], names.as_slice());
    assert_eq!(robot.lower_position_limit().as_slice(), numbers(&reference["lower_position_limit"]).as_slice());
    assert_eq!(robot.upper_position_limit().as_slice(), numbers(&reference["upper_position_limit"]).as_slice());
    assert_eq!(robot.velocity_limit().as_slice(), numbers(&reference["velocity_limit"]).as_slice());
    assert_eq!(robot.effort_limit().as_slice(), numbers(&reference["effort_limit"]).as_slice());
    assert_eq!(robot.gravity().as_slice(), numbers(&reference["gravity"]).as_slice());
    let ee = robot.frame_index(reference["ee_frame"].as_str().unwrap()).expect("tool0 frame");
    assert_eq!(robot.joint_names()[robot.frames()[ee].parent_joint], reference["ee_parent_joint"].as_str().unwrap());

    let mut data = Data::new(&robot);
    let mut worst = [Worst::new("tau (rnea)"), Worst::new("gravity"), Worst::new("nle"), Worst::new("mass_matrix"), Worst::new("ee_placement"), Worst::new("ee_jacobian_lwa"), Worst::new("aba_ddq")];
    let samples = reference["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 20);
    for sample in samples {
        let (q, v, a) = (numbers(&sample["q"]), numbers(&sample["v"]), numbers(&sample["a"]));
        worst[0].check(rnea(&robot, &mut data, &q, &v, &a).as_slice(), &numbers(&sample["tau"]));
        worst[1].check(gravity(&robot, &mut data, &q).as_slice(), &numbers(&sample["gravity"]));
        worst[2].check(nle(&robot, &mut data, &q, &v).as_slice(), &numbers(&sample["nle"]));
        // nalgebra is column-major, the reference row-major: compare transposes (M is symmetric anyway).
        let m = crba(&robot, &mut data, &q).clone();
        worst[3].check(m.transpose().as_slice(), matrix(&sample["mass_matrix"]).transpose().as_slice());
        forward_kinematics_placements(&robot, &mut data, &q);
        let placement = data.frame_placements[ee].to_homogeneous();
        worst[4].check(placement.as_slice(), matrix(&sample["ee_placement"]).as_slice());
        let jacobian = compute_frame_jacobian(&robot, &mut data, &q, ee).clone();
        worst[5].check(jacobian.as_slice(), matrix(&sample["ee_jacobian_lwa"]).as_slice());
        let ddq = aba(&robot, &mut data, &q, &v, &numbers(&sample["aba_tau"])).clone();
        worst[6].check(ddq.as_slice(), &numbers(&sample["aba_ddq"]));
    }
    for w in &worst {
        w.report();
    }
}

/// A small deterministic generator for test inputs.
struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        low + (high - low) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn vector(&mut self, n: usize, low: f64, high: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(low, high)).collect()
    }
}

/// KR5 from the Robotics Toolbox's DH table, with made-up but plausible link inertias
/// (the toolbox carries none for it) and drive trains, so the dynamics can be exercised.
fn kr5(with_drives: bool) -> Model {
    let mut table = DhTable::load_rtb_json(reference_path("kr5_dh.json"), "KR5").unwrap_or_else(|e| panic!("{e}"));
    for (j, link) in table.links.iter_mut().enumerate() {
        let k = j as f64 + 1.0;
        link.inertia = Some(Inertia::new(12.0 / k, Vector3::new(0.05 * k, -0.02 * k, 0.03), Matrix3::new(0.3 / k, 0.01, 0.0, 0.01, 0.25 / k, 0.005, 0.0, 0.005, 0.2 / k)));
        if with_drives {
            link.drive.armature = 0.1 * k;
            link.drive.viscous_friction = 0.5;
            link.drive.coulomb_friction = 0.2;
        }
    }
    table.to_model().unwrap()
}

#[test]
fn kr5_forward_kinematics_matches_robotics_toolbox() {
    let text = std::fs::read_to_string(reference_path("kr5_dh.json")).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let robot = kr5(false);
    let tool = robot.frame_index("tool").unwrap();
    let mut data = Data::new(&robot);
    let poses = reference["models"]["KR5"]["fkine_reference"].as_object().unwrap();
    assert!(poses.len() >= 5);
    for (name, pose) in poses {
        forward_kinematics_placements(&robot, &mut data, &numbers(&pose["q"]));
        let error = (data.frame_placements[tool].to_homogeneous() - matrix(&pose["T"])).amax();
        assert!(error < 1e-12, "pose {name}: error {error:e}");
    }
}

fn fk_pose(robot: &Model, data: &mut Data, q: &[f64], frame: usize) -> Se3 {
    forward_kinematics_placements(robot, data, q);
    data.frame_placements[frame]
}

#[test]
fn kr5_jacobian_matches_finite_differences() {
    let robot = kr5(false);
    let tool = robot.frame_index("tool").unwrap();
    let mut data = Data::new(&robot);
    let mut rng = Lcg(7);
    let h = 1e-6;
    for _ in 0..10 {
        let q = rng.vector(6, -2.5, 2.5);
        let jacobian = compute_frame_jacobian(&robot, &mut data, &q, tool).clone();
        let pose = fk_pose(&robot, &mut data, &q, tool);
        for j in 0..6 {
            let (mut plus, mut minus) = (q.clone(), q.clone());
            plus[j] += h;
            minus[j] -= h;
            let (p, m) = (fk_pose(&robot, &mut data, &plus, tool), fk_pose(&robot, &mut data, &minus, tool));
            let linear = (p.translation - m.translation) / (2.0 * h);
            // Angular velocity in world axes: log(R(q+h) R(q-h)ᵀ) / 2h.
            let angular = morc_model::log3(&(p.rotation * m.rotation.transpose())) / (2.0 * h);
            let column = jacobian.column(j);
            assert!((column.fixed_rows::<3>(0) - linear).amax() < 1e-8, "linear column {j}");
            assert!((column.fixed_rows::<3>(3) - angular).amax() < 1e-8, "angular column {j}");
        }
        // The frame's own placement agrees with the one the frame update computes.
        assert!((frame_placement(&robot, &data, tool).to_homogeneous() - pose.to_homogeneous()).amax() < 1e-6);
    }
}

#[test]
fn kr5_dynamics_are_consistent() {
    for with_drives in [false, true] {
        let robot = kr5(with_drives);
        let mut data = Data::new(&robot);
        let mut rng = Lcg(11);
        for _ in 0..10 {
            let q = rng.vector(6, -2.5, 2.5);
            let v = rng.vector(6, -1.0, 1.0);
            let a = rng.vector(6, -1.0, 1.0);
            let zero = vec![0.0; 6];
            // tau(q, 0, a) − g(q) = M(q) a
            let tau_static = rnea(&robot, &mut data, &q, &zero, &a).clone();
            let g = gravity(&robot, &mut data, &q).clone();
            let m = crba(&robot, &mut data, &q).clone();
            assert!((m.clone() - m.transpose()).amax() < 1e-14, "M symmetric");
            let ma = &m * nalgebra::DVector::from_column_slice(&a);
            assert!((tau_static - &g - ma).amax() < 1e-10, "RNEA vs CRBA (drives {with_drives})");
            // ABA ∘ RNEA = identity
            let tau = rnea(&robot, &mut data, &q, &v, &a).clone();
            let ddq = aba(&robot, &mut data, &q, &v, tau.as_slice()).clone();
            assert!((ddq - nalgebra::DVector::from_column_slice(&a)).amax() < 1e-9, "ABA∘RNEA (drives {with_drives})");
            // nle = rnea(q, v, 0), and rnea = M a + nle
            let n = nle(&robot, &mut data, &q, &v).clone();
            let full = m * nalgebra::DVector::from_column_slice(&a) + n;
            assert!((full - tau).amax() < 1e-10);
        }
    }
}

#[test]
fn kr5_gravity_is_the_gradient_of_potential_energy() {
    let robot = kr5(false);
    let mut data = Data::new(&robot);
    let potential = |data: &mut Data, q: &[f64]| -> f64 {
        forward_kinematics_placements(&robot, data, q);
        (1..robot.njoints())
            .map(|i| {
                let inertia = &robot.inertias()[i];
                -inertia.mass * robot.gravity().dot(&data.joint_placements[i].act_point(&inertia.com))
            })
            .sum()
    };
    let mut rng = Lcg(3);
    let h = 1e-6;
    for _ in 0..10 {
        let q = rng.vector(6, -2.5, 2.5);
        let g = gravity(&robot, &mut data, &q).clone();
        for j in 0..6 {
            let (mut plus, mut minus) = (q.clone(), q.clone());
            plus[j] += h;
            minus[j] -= h;
            let derivative = (potential(&mut data, &plus) - potential(&mut data, &minus)) / (2.0 * h);
            assert!((derivative - g[j]).abs() < 1e-7, "joint {j}: {derivative} vs {}", g[j]);
        }
    }
}

#[test]
fn forward_kinematics_velocity_matches_jacobian() {
    let (robot, _) = load_ur5();
    let tool = robot.frame_index("tool0").unwrap();
    let parent = robot.frames()[tool].parent_joint;
    let mut data = Data::new(&robot);
    let mut rng = Lcg(5);
    let q = rng.vector(6, -3.0, 3.0);
    let v = rng.vector(6, -1.0, 1.0);
    forward_kinematics(&robot, &mut data, &q, &v, &[0.0; 6]);
    let placement = data.joint_placements[parent];
    let body_velocity = data.velocities[parent];
    // World-aligned velocity of the joint frame's origin, shifted to the tool frame origin.
    let angular = placement.rotation * body_velocity.angular;
    let offset = data.frame_placements[tool].translation - placement.translation;
    let linear = placement.rotation * body_velocity.linear + angular.cross(&offset);
    let jacobian = compute_frame_jacobian(&robot, &mut data, &q, tool).clone();
    let twist = jacobian * nalgebra::DVector::from_column_slice(&v);
    assert!((twist.fixed_rows::<3>(0) - linear).amax() < 1e-12);
    assert!((twist.fixed_rows::<3>(3) - angular).amax() < 1e-12);
}

#[test]
fn ur5_dls_ik_round_trips() {
    let (robot, _) = load_ur5();
    let tool = robot.frame_index("tool0").unwrap();
    let mut data = Data::new(&robot);
    let mut ik = DlsIk::new(&robot);
    let mut rng = Lcg(2024);
    for trial in 0..100 {
        let q = rng.vector(6, -3.0, 3.0);
        let target = fk_pose(&robot, &mut data, &q, tool);
        let seed: Vec<f64> = q.iter().map(|x| x + rng.uniform(-0.4, 0.4)).collect();
        let outcome = ik.solve(&robot, &mut data, tool, &target, &seed);
        assert!(outcome.converged, "trial {trial}: {outcome:?} q {q:?} seed {seed:?} solution {:?}", ik.solution());
        let reached = fk_pose(&robot, &mut data, ik.solution(), tool);
        let error = (reached.to_homogeneous() - target.to_homogeneous()).amax();
        assert!(error < 1e-9, "trial {trial}: pose error {error:e}");
    }
}

#[test]
fn kr5_analytic_ik_round_trips() {
    let robot = kr5(false);
    let tool = robot.frame_index("tool").unwrap();
    let ik = morc_model::AnalyticIk::new(&robot, tool).unwrap_or_else(|e| panic!("{e}"));
    let mut data = Data::new(&robot);
    let mut rng = Lcg(99);
    let lower = robot.lower_position_limit();
    let upper = robot.upper_position_limit();
    let mut total = 0;
    for trial in 0..200 {
        let q: Vec<f64> = (0..6).map(|i| rng.uniform(lower[i].max(-3.1), upper[i].min(3.1))).collect();
        let target = fk_pose(&robot, &mut data, &q, tool);
        let mut solutions = [[0.0; 6]; 8];
        let count = ik.solve(&target, &mut solutions);
        assert!(count >= 2, "trial {trial}: only {count} solutions");
        total += count;
        for solution in &solutions[..count] {
            let reached = fk_pose(&robot, &mut data, solution, tool);
            let error = (reached.to_homogeneous() - target.to_homogeneous()).amax();
            assert!(error < 1e-9, "trial {trial}: pose error {error:e} for {solution:?}");
        }
        let seed: [f64; 6] = std::array::from_fn(|i| q[i]);
        let nearest = ik.nearest(&target, &seed).expect("a solution within limits");
        let distance = nearest.iter().zip(&q).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(distance < 1e-7, "trial {trial}: nearest solution {nearest:?} is not the original {q:?}");
    }
    println!("analytic IK: {total} solutions over 200 poses");
}

#[test]
fn analytic_ik_refuses_arms_without_spherical_wrist() {
    let (robot, _) = load_ur5();
    let error = morc_model::AnalyticIk::new(&robot, robot.frame_index("tool0").unwrap()).unwrap_err().to_string();
    assert!(error.contains("spherical wrist"), "{error}");
}

/// Writing a model to URDF and reading it back keeps its frames, kinematics and dynamics.
#[test]
fn urdf_writer_round_trips() {
    let (ur5, _) = load_ur5();
    for original in [ur5, kr5(false)] {
        let text = morc_model::to_urdf(&original);
        let copy = morc_model::parse_urdf(&text, "written.urdf").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(copy.joint_names(), original.joint_names());
        // Unbounded velocity and effort come back as f64::MAX (URDF needs a number), so compare positions.
        assert_eq!(copy.lower_position_limit(), original.lower_position_limit());
        assert_eq!(copy.upper_position_limit(), original.upper_position_limit());
        let mut original_data = Data::new(&original);
        let mut copy_data = Data::new(&copy);
        let mut rng = Lcg(7);
        for _ in 0..5 {
            let (q, v, a) = (rng.vector(6, -3.0, 3.0), rng.vector(6, -2.0, 2.0), rng.vector(6, -5.0, 5.0));
            let tau = rnea(&original, &mut original_data, &q, &v, &a).clone();
            let tau_copy = rnea(&copy, &mut copy_data, &q, &v, &a).clone();
            assert!((tau - tau_copy).norm() < 1e-9, "{}: rnea differs after the round trip", original.name());
            forward_kinematics_placements(&original, &mut original_data, &q);
            forward_kinematics_placements(&copy, &mut copy_data, &q);
            for (f, frame) in original.frames().iter().enumerate().skip(1) {
                let g = copy.frame_index(&frame.name).unwrap_or_else(|| panic!("frame '{}' lost:\n{text}", frame.name));
                let (a, b) = (original_data.frame_placements[f], copy_data.frame_placements[g]);
                assert!((a.to_homogeneous() - b.to_homogeneous()).norm() < 1e-12, "frame '{}' moved", frame.name);
            }
        }
    }
}

/// `rnea`, `nle`, `gravity`, `crba` and `aba` are Pinocchio's on public arms whose URDFs carry
/// `<dynamics damping friction>` (the Franka Panda with its mimic finger, as `mimic=True`; the
/// xArm7), with armature set on both sides: rigid-body only, armature in, friction out. The
/// drives' friction is `friction(v)`, Pinocchio's `model.damping·v + model.friction·sign(v)`
/// from the same URDF. (Pinocchio 4.1's `aba` refuses mimic joints: there its M⁻¹(τ − nle).)
#[test]
fn damped_and_mimic_urdfs_match_pinocchio_at_test_time() {
    for file in ["panda.urdf", "xarm7.urdf"] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(file);
        let mut robot = morc_model::load_urdf(&path).unwrap_or_else(|e| panic!("{e}"));
        let n = robot.nv();
        let armature: Vec<f64> = (0..n).map(|k| 0.05 * (k + 1) as f64).collect();
        for (dof, ia) in armature.iter().enumerate() {
            let drive = morc_model::DriveTrain { armature: *ia, ..robot.drive_trains()[dof] };
            robot.set_drive_train(robot.dof_joint(dof), drive).unwrap();
        }
        assert!(robot.drive_trains().iter().all(|d| d.viscous_friction > 0.0), "{file}: every joint is damped");
        let mut rng = Lcg(7);
        let (lower, upper) = (robot.lower_position_limit(), robot.upper_position_limit());
        let samples: Vec<[Vec<f64>; 4]> = (0..5)
            .map(|s| {
                let q = (0..n).map(|k| rng.uniform(lower[k], upper[k])).collect();
                let mut v = rng.vector(n, -1.5, 1.5);
                // At rest on one joint: no Coulomb torque there (sign(0) = 0).
                v[s % n] = 0.0;
                [q, v, rng.vector(n, -3.0, 3.0), rng.vector(n, -20.0, 20.0)]
            })
            .collect();
        let script = format!(
            r#"
import json, numpy as np, pinocchio as pin
m = pin.buildModelFromUrdf({path:?}, mimic=True); d = m.createData()
m.armature = np.array({armature:?})
mimic = any(j.shortname() == "JointModelMimic" for j in m.joints)
out = []
for q, v, a, tau in {samples:?}:
    q, v, a, tau = (np.array(x) for x in (q, v, a, tau))
    M = pin.crba(m, d, q); M = np.triu(M) + np.triu(M, 1).T
    nle = pin.nonLinearEffects(m, d, q, v).copy()
    ddq = np.linalg.solve(M, tau - nle) if mimic else pin.aba(m, d, q, v, tau)
    out.append({{"rnea": pin.rnea(m, d, q, v, a).tolist(), "nle": nle.tolist(), "gravity": pin.computeGeneralizedGravity(m, d, q).tolist(),
                "crba": M.tolist(), "aba": ddq.tolist(), "friction": (m.damping * v + m.friction * np.sign(v)).tolist()}})
print(json.dumps({{"names": list(m.names)[1:], "nv": m.nv, "samples": out}}))
"#,
            path = path.display().to_string(),
            samples = samples.iter().map(|s| s.to_vec()).collect::<Vec<_>>()
        );
        let Some(output) = pinocchio_peer::run(&script) else { return };
        let theirs: Value = serde_json::from_slice(&output).unwrap();
        assert_eq!(theirs["nv"], n, "{file}: nv");
        let names: Vec<&str> = theirs["names"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
        assert_eq!(&robot.joint_names()[1..], names.as_slice(), "{file}: joints");
        let mut data = Data::new(&robot);
        let mut worst = ["rnea", "nle", "gravity", "crba", "aba", "friction"].map(Worst::new);
        for ([q, v, a, tau], expected) in samples.iter().zip(theirs["samples"].as_array().unwrap()) {
            worst[0].check(rnea(&robot, &mut data, q, v, a).as_slice(), &numbers(&expected["rnea"]));
            worst[1].check(nle(&robot, &mut data, q, v).as_slice(), &numbers(&expected["nle"]));
            worst[2].check(gravity(&robot, &mut data, q).as_slice(), &numbers(&expected["gravity"]));
            worst[3].check(crba(&robot, &mut data, q).transpose().as_slice(), matrix(&expected["crba"]).transpose().as_slice());
            worst[4].check(aba(&robot, &mut data, q, v, tau).as_slice(), &numbers(&expected["aba"]));
            worst[5].check(friction(&robot, &mut data, v).as_slice(), &numbers(&expected["friction"]));
        }
        println!("{file} (nv = {n}) against Pinocchio:");
        for w in &worst {
            w.report();
        }
    }
}

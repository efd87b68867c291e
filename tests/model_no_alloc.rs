//! Proves the model algorithms allocate nothing once `Data::new` (and the IK workspace) exist.
//! A single test in its own binary, so no other test allocates concurrently.

use morc_test_support::alloc::{allocates_nothing, CountingAllocator};
use std::path::PathBuf;

use morc_model::{Data, DlsIk};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn algorithms_do_not_allocate_after_data_new() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference/dynamics/ur5_robot.urdf");
    assert!(path.exists(), "reference URDF missing: expected {}", path.display());
    let mut robot = morc_model::load_urdf(&path).unwrap();
    // Exercise the friction and armature branches too.
    for joint in 1..robot.njoints() {
        let drive = morc_model::DriveTrain { armature: 0.1, viscous_friction: 0.2, coulomb_friction: 0.3, ..Default::default() };
        robot.set_drive_train(joint, drive).unwrap();
    }
    let tool = robot.frame_index("tool0").unwrap();
    let mut data = Data::new(&robot);
    let mut ik = DlsIk::new(&robot);
    let q = [0.3, -1.1, 1.4, -0.5, 0.9, 0.2];
    let v = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6];
    let a = [1.0, 0.5, -0.5, 0.25, -1.0, 2.0];
    morc_model::forward_kinematics_placements(&robot, &mut data, &q);
    let target = data.frame_placements[tool];
    let seed = [0.5, -1.0, 1.2, -0.3, 1.0, 0.0];

    allocates_nothing("the model algorithms and DLS IK", || {
        morc_model::forward_kinematics(&robot, &mut data, &q, &v, &a);
        morc_model::forward_kinematics_placements(&robot, &mut data, &q);
        morc_model::compute_frame_jacobian(&robot, &mut data, &q, tool);
        morc_model::frame_jacobian(&robot, &mut data, tool);
        morc_model::rnea(&robot, &mut data, &q, &v, &a);
        morc_model::gravity(&robot, &mut data, &q);
        morc_model::nle(&robot, &mut data, &q, &v);
        morc_model::crba(&robot, &mut data, &q);
        morc_model::aba(&robot, &mut data, &q, &v, &a);
        morc_model::friction(&robot, &mut data, &v);
        let outcome = ik.solve(&robot, &mut data, tool, &target, &seed);
        assert!(outcome.converged);
    });

    // Analytic IK (KR5 from its DH table: UR5 has no spherical wrist).
    let kr5_path = path.with_file_name("kr5_dh.json");
    let kr5 = morc_model::DhTable::load_rtb_json(&kr5_path, "KR5").unwrap().to_model().unwrap();
    let kr5_tool = kr5.frame_index("tool").unwrap();
    let analytic = morc_model::AnalyticIk::new(&kr5, kr5_tool).unwrap();
    let mut kr5_data = Data::new(&kr5);
    morc_model::forward_kinematics_placements(&kr5, &mut kr5_data, &q);
    let kr5_target = kr5_data.frame_placements[kr5_tool];
    let mut solutions = [[0.0; 6]; 8];
    allocates_nothing("analytic IK", || {
        assert!(analytic.solve(&kr5_target, &mut solutions) > 0);
        assert!(analytic.nearest(&kr5_target, &q).is_some());
    });
}

//! Time-optimal path parameterisation (TOPP-RA) on the UR5: along a spline through joint
//! waypoints, with joint velocity, acceleration and torque limits. The timed motion is sampled
//! finely and every joint's velocity, acceleration and torque (RNEA of the model) checked
//! against its limits; time-optimal means some limit is active all along.

mod robot_support;

use morc_model::Data;
use morc_motion::toppra::{parameterize, spline_path, PathLimits};

#[test]
fn the_ur5_moves_along_a_spline_as_fast_as_its_limits_allow_and_no_faster() {
    let robot = robot_support::ur5();
    let model = &robot.model;
    let waypoints = vec![vec![0.0, -1.2, 1.4, -0.5, 0.3, 0.0], vec![0.8, -1.0, 1.0, -0.3, 0.6, 0.4], vec![1.5, -1.5, 1.6, -0.8, 0.2, 0.9], vec![2.0, -1.1, 1.2, -0.4, 0.5, 0.2]];
    let (grid, path) = spline_path(&waypoints, 801).unwrap();
    let limits = PathLimits {
        velocity: robot.joints.iter().map(|j| j.limits.velocity).collect(),
        acceleration: robot.joints.iter().map(|j| j.limits.acceleration).collect(),
        // Torque limits low enough to matter on the big joints.
        torque: robot.joints.iter().map(|j| j.limits.torque * 0.3).collect(),
        path_speed: None,
    };
    let started = std::time::Instant::now();
    let timed = parameterize(&grid, &path, &limits, Some(model)).unwrap();
    let took = started.elapsed();
    eprintln!("TOPP-RA: {} grid points, duration {:.3} s, computed in {:.1} ms", grid.len(), timed.duration(), took.as_secs_f64() * 1e3);
    assert!(timed.duration() > 0.1 && timed.duration() < 30.0);

    // Sample at the grid points: q̇ = q'ṡ, q̈ = q's̈ + q''ṡ², τ = RNEA(q, q̇, q̈) + the drives' friction(q̇).
    let mut data = Data::new(model);
    let (mut worst_v, mut worst_a, mut worst_t) = (0.0f64, 0.0f64, 0.0f64);
    let mut active = 0;
    for ((p, &sd), &u) in path.iter().zip(&timed.sd).zip(&timed.sdd) {
        let qd: Vec<f64> = p.dq.iter().map(|d| d * sd).collect();
        let qdd: Vec<f64> = p.dq.iter().zip(&p.ddq).map(|(d, dd)| d * u + dd * sd * sd).collect();
        let tau = morc_model::rnea(model, &mut data, &p.q, &qd, &qdd).clone() + morc_model::friction(model, &mut data, &qd);
        let mut tight = false;
        for j in 0..6 {
            let (v, a, t) = (qd[j].abs() / limits.velocity[j], qdd[j].abs() / limits.acceleration[j], tau[j].abs() / limits.torque[j]);
            worst_v = worst_v.max(v);
            worst_a = worst_a.max(a);
            worst_t = worst_t.max(t);
            tight |= v > 0.99 || a > 0.99 || t > 0.99;
        }
        active += usize::from(tight);
    }
    eprintln!("share of the limits used at worst: velocity {worst_v:.4}, acceleration {worst_a:.4}, torque {worst_t:.4}; a limit active at {active} of {} grid steps", grid.len() - 1);
    assert!(worst_v <= 1.0 + 1e-6 && worst_a <= 1.0 + 1e-6 && worst_t <= 1.0 + 1e-6, "within the limits");
    assert!(active * 100 >= (grid.len() - 1) * 95, "time-optimal: a limit is active at {active} of {} steps", grid.len() - 1);
    assert!(worst_t > 0.99, "the torque limit shapes the motion");
    // From rest to rest.
    assert_eq!(timed.sd[0], 0.0);
    assert!(timed.sd[grid.len() - 1] < 1e-6);
}

#[test]
fn a_path_the_arm_cannot_hold_itself_on_is_refused_naming_the_joint() {
    let robot = robot_support::ur5();
    let (grid, path) = spline_path(&[vec![0.0, -1.57, 0.0, 0.0, 0.0, 0.0], vec![0.5, -1.0, 0.5, 0.0, 0.0, 0.0]], 101).unwrap();
    let limits = PathLimits { velocity: vec![3.0; 6], acceleration: vec![10.0; 6], torque: vec![1.0; 6], path_speed: None };
    let e = parameterize(&grid, &path, &limits, Some(&robot.model)).unwrap_err();
    assert!(e.contains("N·m to hold the arm") && e.starts_with("joint "), "{e}");
    assert!(parameterize(&grid, &path, &limits, None).unwrap_err().contains("torque limits need the robot's model"));
}

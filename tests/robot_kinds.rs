//! A robot's component kinds register into the same kind registry as the native blocks: found by
//! name under a prefix, made by factories that hold the robot, a clash refused naming both origins.

mod robot_support;

use morc_kernel::registry::KindRegistry;
use morc_robot::components::{factory, kinds, register};

#[test]
fn a_robot_registers_its_kinds_beside_the_natives() {
    let robot = robot_support::ur5();
    let mut registry = KindRegistry::with_natives();
    register(&mut registry, &robot, "ur5.").unwrap();
    let ptp = registry.get("ur5.ptp").expect("ur5.ptp");
    assert_eq!(ptp.origin, "robot UR5");
    assert!(ptp.doc.starts_with("synchronised PTP"), "{}", ptp.doc);
    assert_eq!(registry.create("ur5.monitor").unwrap().info().kind, "monitor");
    assert_eq!(registry.create("ur5.spline").unwrap().info().kind, "spline");
    assert_eq!(registry.create("ur5.rnea").unwrap().info().kind, "rnea");
    assert_eq!(registry.create("gain").unwrap().info().kind, "gain");
    // The same names again are refused, naming the first origin.
    let e = register(&mut registry, &robot, "ur5.").unwrap_err();
    assert!(e.contains("'ur5.ptp'") && e.contains("already registered by robot UR5"), "{e}");
    // Bare names next to the natives clash only where a native has the name: none does.
    register(&mut registry, &robot, "").unwrap();
    let bare = kinds(&robot);
    assert_eq!(
        bare.kinds().map(|k| k.name.as_str()).collect::<Vec<_>>(),
        [
            "ptp",
            "lin",
            "circ",
            "spline",
            "path",
            "time_optimal",
            "joint_trajectory",
            "joint_stream",
            "rnea",
            "elastic_feed_forward",
            "elastic_links",
            "jog",
            "monitor",
            "tracker",
            "cartesian_velocity"
        ]
    );
    assert!(factory(&robot, "rnea").is_some() && factory(&robot, "gain").is_none());
    assert!(bare
        .factory("gain")
        .err()
        .unwrap()
        .contains("known kinds: ptp, lin, circ, spline, path, time_optimal, joint_trajectory, joint_stream, rnea, elastic_feed_forward, elastic_links, jog, monitor"));
}

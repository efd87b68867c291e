//! The base's guard (issue 39, item 1) allocates nothing on the real-time path: checking every
//! command, and braking with its own ramp (the bus's way), in steady state. A counting global
//! allocator is armed around the loop on this thread, with one control allocation counted.

mod robot_support;

use morc_test_support::alloc::{allocates_nothing, CountingAllocator};

use morc_kernel::{Base, Commands, Value, ValueType};
use morc_robot::{Braking, GuardedBase, SimulatedRobot};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn the_guard_checks_and_brakes_without_allocating() {
    let robot = robot_support::ur5();
    let q0 = [0.0, -1.2, 1.4, -0.5, 0.3, 0.0];
    let plant = SimulatedRobot::new(robot.clone(), &q0, robot_support::T).unwrap();
    // The ramp braking of a bus, on the direct simulation: the same path through the guard.
    let mut base = GuardedBase::wrap(robot.clone(), Box::new(plant), robot_support::T, Braking::Ramp);
    let mut sensed: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let mut commands = vec![Value::Vector(q0.to_vec()), Value::zero(ValueType::Vector(6)), Value::zero(ValueType::Vector(6))];
    let driven = [true, false, false];
    // A smooth start of the shoulder at 0.5 rad/s² (well within the UR5's limits).
    let mut step = |base: &mut Box<dyn Base>, tick: u64| {
        base.sense(tick, &mut sensed);
        let t = tick as f64 * robot_support::T;
        commands[0].as_mut_slice()[0] = 0.25 * t * t;
        let c = Commands::new(&commands, &driven);
        base.guard(c).expect("a smooth start is within the limits");
        base.actuate(tick, Some(c));
    };
    for tick in 0..200 {
        step(&mut base, tick);
    }
    allocates_nothing("guard: 1000 commands checked", || {
        for tick in 200..1200 {
            step(&mut base, tick);
        }
    });
    allocates_nothing("guard: braking by its ramp until still", || {
        let mut tick = 1200;
        while !base.is_still() && tick < 7000 {
            base.sense(tick, &mut sensed);
            base.stop(tick);
            tick += 1;
        }
    });
    assert!(base.is_still(), "the arm came to a standstill");
    // And a command past a limit is refused (the message is made then: a fault may allocate).
    commands[0].as_mut_slice()[0] = 10.0;
    let refused = base.guard(Commands::new(&commands, &driven)).unwrap_err();
    assert!(refused.1.contains("shoulder_pan_joint"), "{}", refused.1);
}

//! A device morc has no class for, on the simulated segment through the real master: a
//! gripper with its vendor's own PDO layout (morc_ecat_sim::gripper) runs as a generic device
//! whose ports come from its PDO description and are named from its EEPROM's strings — read
//! over CoE from its PDO assignment, or from its EEPROM alone when it has no mailbox. Its
//! measurements follow the device, its commands reach it, a command its entry cannot take
//! faults naming the port, `morc bus scan` lists its ports, and it cycles without allocating.
//! Line: 0 coupler, 1 drive, 2 DO8, 3 DI8, 4 gripper with CoE, 5 gripper without a mailbox.

mod bus_rig;

use bus_rig::Rig;
use morc_ecat::base::BusConfig;
use morc_ecat::master::Link;
use morc_ecat::transport::{lock, SharedSegment};
use morc_ecat::virtual_bus::{gripper, shared_sim_segment, SimSegmentConfig};
use morc_ecat_sim::SimGripper;
use morc_kernel::{Base, Step, Value, ValueType};
use morc_test_support::alloc::{allocates_nothing, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn segment() -> SharedSegment {
    let seg = shared_sim_segment(&SimSegmentConfig { drives: 1, grippers: 1, ..Default::default() }).unwrap();
    lock(&seg).push(gripper(false, 20_000).unwrap());
    seg
}

fn open(seg: SharedSegment) -> Rig {
    Rig::open(seg, BusConfig::default())
}

fn sim<R>(seg: &SharedSegment, position: usize, f: impl FnOnce(&mut SimGripper) -> R) -> R {
    f(lock(seg).device_mut(position).and_then(|d| d.app_as_mut::<SimGripper>()).expect("a gripper there"))
}

fn real(rig: &Rig, port: &str) -> f64 {
    match rig.output(port) {
        Value::Real(x) => *x,
        v => panic!("{port} = {v:?}"),
    }
}

fn flag(rig: &Rig, port: &str) -> bool {
    match rig.output(port) {
        Value::Boolean(b) => *b,
        v => panic!("{port} = {v:?}"),
    }
}

fn command(rig: &mut Rig, p: usize, enable: bool, width: f64, force: f64) {
    *rig.input_mut(&format!("dev{p}_enable")) = Value::Boolean(enable);
    *rig.input_mut(&format!("dev{p}_target_width")) = Value::Real(width);
    *rig.input_mut(&format!("dev{p}_grip_force")) = Value::Real(force);
}

#[test]
fn a_device_without_a_class_gets_ports_named_from_its_eeprom() {
    let rig = open(segment());
    assert_eq!(rig.base.class_of(4), Some("generic"));
    assert_eq!(rig.base.class_of(5), Some("generic"));
    for p in [4, 5] {
        let (measures, commands) = rig.base.ports_of(p);
        let named = |names: &[&str]| names.iter().map(|n| format!("dev{p}_{n}")).collect::<Vec<_>>();
        assert_eq!(measures, named(&["ready", "holding", "fault", "actual_width", "motor_temperature"]));
        assert_eq!(commands, named(&["enable", "acknowledge", "target_width", "grip_force"]));
    }
    let port = rig.base.info().outputs.iter().find(|p| p.name == "dev4_actual_width").unwrap();
    assert_eq!(port.ty, ValueType::Real);
    assert_eq!(port.doc, "device 4 'SIM-GRIPPER': TxPDO 0x1A00 'Gripper Status', entry 0x6000:04 'Actual Width' (UNSIGNED16, 16 bits); the device's raw value");
    let port = rig.base.info().inputs.iter().find(|p| p.name == "dev5_enable").unwrap();
    assert_eq!(port.ty, ValueType::Boolean);
}

#[test]
fn its_measurements_follow_the_device_and_its_commands_reach_it() {
    let mut rig = open(segment());
    sim(&rig.seg, 4, |g| {
        g.set_object(Some(4000.0));
        g.set_temperature(31.4);
    });
    rig.run(3, false);
    assert_eq!(real(&rig, "dev4_actual_width"), 8000.0);
    assert_eq!(real(&rig, "dev4_motor_temperature"), 314.0);
    assert!(!flag(&rig, "dev4_ready"));
    // Close on the object (held at 40 mm) with 50 N; the other gripper to 20 mm, nothing in it.
    // At 100 mm/s the 60 mm take 0.6 s: 600 cycles of 1 ms.
    command(&mut rig, 4, true, 1000.0, 50.0);
    command(&mut rig, 5, true, 2000.0, 10.0);
    rig.run(300, false);
    let halfway = real(&rig, "dev5_actual_width");
    assert!((4900.0..=5100.0).contains(&halfway), "after 0.3 s: {halfway}");
    rig.run(320, false);
    assert_eq!(sim(&rig.seg, 4, |g| (g.width(), g.force())), (4000.0, 50.0));
    assert_eq!(real(&rig, "dev4_actual_width"), 4000.0);
    assert!(flag(&rig, "dev4_ready") && flag(&rig, "dev4_holding") && !flag(&rig, "dev4_fault"));
    assert_eq!(real(&rig, "dev5_actual_width"), 2000.0);
    assert!(flag(&rig, "dev5_ready") && !flag(&rig, "dev5_holding"));
    // Held commands stay: the fingers stay where they are.
    rig.run(10, true);
    assert_eq!(sim(&rig.seg, 5, |g| (g.enabled(), g.width())), (true, 2000.0));
}

#[test]
fn a_command_its_entry_cannot_take_faults_naming_the_port() {
    let mut rig = open(segment());
    command(&mut rig, 4, true, 3000.0, 20.0);
    rig.run(5, false);
    *rig.input_mut("dev4_target_width") = Value::Real(70_000.0);
    let (cycles, message) = rig.until_fault(3);
    assert_eq!(cycles, 1);
    assert_eq!(message, "device 4 'SIM-GRIPPER': command dev4_target_width takes 0 to 65535, got 70000; it keeps its last value");
    assert!(sim(&rig.seg, 4, |g| g.enabled()), "the refused command leaves the gripper as it was");
    let mut rig = open(segment());
    command(&mut rig, 5, true, 3000.0, f64::NAN);
    let (_, message) = rig.until_fault(3);
    assert_eq!(message, "device 5 'SIM-GRIPPER': command dev5_grip_force takes finite numbers, got NaN; it keeps its last value");
}

#[test]
fn bus_scan_lists_a_generic_devices_ports() {
    let text = morc::cli::bus::scan_link(Link::Simulated(segment()), &morc_kernel::EngineConfig::default()).unwrap();
    assert!(text.contains("  generic SIM-GRIPPER"), "{text}");
    assert!(
        text.contains(
            "device 4 'SIM-GRIPPER' (no class: ports from its CoE PDO assignment): measures dev4_ready, dev4_holding, dev4_fault, dev4_actual_width, dev4_motor_temperature; commands dev4_enable, dev4_acknowledge, dev4_target_width, dev4_grip_force"
        ),
        "{text}"
    );
    assert!(text.contains("device 5 'SIM-GRIPPER' (no class: ports from the PDOs in its EEPROM): measures dev5_ready,"), "{text}");
}

#[test]
fn generic_devices_cycle_without_allocating() {
    let mut rig = open(segment());
    command(&mut rig, 4, true, 1000.0, 50.0);
    command(&mut rig, 5, true, 1000.0, 50.0);
    rig.run(10, false);
    allocates_nothing("2000 bus cycles with generic devices", || {
        for k in 0..2000 {
            *rig.input_mut("dev4_target_width") = Value::Real(f64::from(k % 8000));
            assert_eq!(rig.tick(false), Step::Continue);
        }
    });
}

//! Bring-up diagnostics that name the cause: a device refusing a state is reported with the
//! state it refused and its AL status code in words, the 32-device limit is named, and a
//! scan leaves the line in PREOP. On the virtual segment, in-process, with the faulty devices
//! of `morc_ecat::virtual_bus::faulty`.

use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::master::Link;
use morc_ecat::transport::lock;
use morc_ecat::virtual_bus::{faulty, shared_sim_segment, sim_segment, SimSegmentConfig};
use morc_ecat_sim::{AlState, Cia402Drive, IdealFollower};
use morc_kernel::EngineConfig;
use morc_kernel::Step;
use morc_kernel::Value;
use morc_kernel::{Base, Commands};
use std::sync::{Arc, Mutex};

/// Coupler, two drives, DO8, DI8, then a DI8 whose EEPROM marks its input SM virtual.
fn segment_with_a_virtual_sm_terminal() -> Link {
    let mut segment = sim_segment(&SimSegmentConfig { drives: 2, ..Default::default() }).unwrap();
    segment.push(faulty::input_terminal_with_virtual_sm(8, 9_000).unwrap());
    Link::Simulated(Arc::new(Mutex::new(segment)))
}

#[test]
fn a_terminal_refusing_safe_op_is_named_with_its_al_status_code() {
    let message = match BusBase::open(segment_with_a_virtual_sm_terminal(), BusConfig::default()) {
        Ok(_) => panic!("bring-up succeeded with a terminal that refuses SAFE-OP"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("device 5 'SIM-DI8-VSM' refused SAFEOP"), "{message}");
    assert!(message.contains("AL status code 0x001E (invalid input configuration)"), "{message}");
    assert!(message.contains("it stays in PREOP"), "{message}");
    assert!(!message.contains("Check the cable") && !message.contains("no devices answer"), "the devices do answer: {message}");
    // The other devices did as they were asked: only the refusing one is named.
    assert!(!message.contains("device 4") && !message.contains("device 1 "), "{message}");
}

#[test]
fn a_scan_names_the_refusing_device_without_sending_the_user_back_to_scan() {
    let message = morc::cli::bus::scan_link(segment_with_a_virtual_sm_terminal(), &EngineConfig::default()).unwrap_err();
    assert!(message.contains("refused SAFEOP") && message.contains("0x001E"), "{message}");
    assert!(!message.contains("morc bus scan"), "a circular hint from scan itself: {message}");
}

#[test]
fn more_than_32_devices_are_named_as_the_limit() {
    // Coupler + 30 drives + DO8 + DI8: 33 devices.
    let seg = shared_sim_segment(&SimSegmentConfig { drives: 30, ..Default::default() }).unwrap();
    let message = match BusBase::open(Link::Simulated(seg), BusConfig::default()) {
        Ok(_) => panic!("33 devices brought up with room for 32"),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("33 devices on the line") && message.contains("at most 32"), "{message}");
}

#[test]
fn a_scan_leaves_the_devices_in_preop() {
    let seg = shared_sim_segment(&SimSegmentConfig::cell(morc_ecat::virtual_bus::DEFAULT_DRIVES)).unwrap();
    let text = morc::cli::bus::scan_link(Link::Simulated(seg.clone()), &EngineConfig::default()).unwrap();
    assert!(text.contains("14 devices") && text.contains("devices back in PREOP"), "{text}");
    // The robot file's lines for the cell: its six drives, the F/T sensor and the PLC where they sit.
    assert!(
        text.contains("drive = { slave = 6, mode = \"csp\" } } },") && text.contains("  bus = { ft = { slave = 12, class = \"ati_axia\" }, safety = { slave = 11, class = \"safety_plc\" } },"),
        "{text}"
    );
    let states: Vec<AlState> = lock(&seg).devices().iter().map(|d| d.esc.al_state()).collect();
    assert!(states.iter().all(|s| *s == AlState::PreOp), "after the scan: {states:?}");
}

#[test]
fn a_bus_let_go_of_leaves_its_devices_in_preop() {
    let seg = shared_sim_segment(&SimSegmentConfig { drives: 2, ..Default::default() }).unwrap();
    let base = BusBase::open(Link::Simulated(seg.clone()), BusConfig::default()).unwrap();
    assert!(lock(&seg).devices().iter().all(|d| d.esc.al_state() == AlState::Op));
    drop(base);
    let states: Vec<AlState> = lock(&seg).devices().iter().map(|d| d.esc.al_state()).collect();
    assert!(states.iter().all(|s| *s == AlState::PreOp), "after the bus was dropped: {states:?}");
}

/// Commands both drives of `base` to `q` for 300 cycles, checking that both get there; the
/// bus's outputs after.
fn follow_positions(base: &mut BusBase, q: [f64; 2]) -> Vec<Value> {
    let mut outputs: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let mut inputs: Vec<Value> = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
    inputs[0] = Value::Vector(q.to_vec());
    for tick in 0..300 {
        assert_eq!(base.sense(tick, &mut outputs), Step::Continue, "{:?}", base.fault());
        assert_eq!(base.actuate(tick, Some(Commands::all(&inputs))), Step::Continue);
    }
    let measured = outputs[0].as_slice();
    assert!((measured[0] - q[0]).abs() < 1e-4 && (measured[1] - q[1]).abs() < 1e-4, "{measured:?}");
    outputs
}

/// Coupler, one drive, then a drive whose EEPROM says CoE but whose mailbox never answers.
fn segment_with_a_drive_without_coe() -> morc_ecat::transport::SharedSegment {
    let mut segment = sim_segment(&SimSegmentConfig { drives: 1, digital_outputs: 0, digital_inputs: 0, ..Default::default() }).unwrap();
    segment.push(faulty::drive_without_coe(2_500, Box::new(IdealFollower::new(1e6, 1e7))).unwrap());
    Arc::new(Mutex::new(segment))
}

#[test]
fn a_drive_whose_mailbox_does_not_answer_coe_runs_on_its_eeprom_pdos() {
    let seg = segment_with_a_drive_without_coe();
    let mut base = BusBase::open(Link::Simulated(seg.clone()), BusConfig::default()).unwrap_or_else(|e| panic!("bring-up: {e}"));
    let d = base.bus().devices()[2].clone();
    assert!(d.pdo_from_eeprom && d.name == "MORC-402-EEPROM", "{d:?}");
    assert!(!base.bus().devices()[1].pdo_from_eeprom, "the drive that answers CoE is configured through it");
    assert_eq!((base.class_of(2), d.input_bytes, d.output_bytes), (Some("drive"), 15, 15));
    // It is driven like the other: both follow their commands.
    follow_positions(&mut base, [-0.05, 0.1]);
    assert_eq!(lock(&seg).device(2).unwrap().app_as::<Cia402Drive>().unwrap().state(), morc_ecat_sim::PowerState::OperationEnabled);
}

#[test]
fn a_scan_says_which_device_runs_on_its_eeprom_pdos() {
    let text = morc::cli::bus::scan_link(Link::Simulated(segment_with_a_drive_without_coe()), &EngineConfig::default()).unwrap();
    assert!(text.contains("device 2 'MORC-402-EEPROM': its mailbox does not answer CoE; process data from the PDO description in its EEPROM"), "{text}");
}

/// Coupler, one drive, then an EEPROM-only drive whose EEPROM maps `rx` and `tx`.
fn segment_with_an_eeprom_drive(rx: &[u32], tx: &[u32]) -> morc_ecat::transport::SharedSegment {
    let mut segment = sim_segment(&SimSegmentConfig { drives: 1, digital_outputs: 0, digital_inputs: 0, ..Default::default() }).unwrap();
    segment.push(faulty::drive_without_coe_mapping(2_500, Box::new(IdealFollower::new(1e6, 1e7)), rx, tx).unwrap());
    Arc::new(Mutex::new(segment))
}

#[test]
fn a_drive_with_a_fixed_interpolated_position_mapping_runs_in_csp() {
    use morc_ecat_wire::cia402::{obj, pdo::entry};
    // ETG.6010's 0x1701 / 0x1B01, 6 and 6 bytes: what SOEM runs such a drive with.
    let rx = [entry(obj::CONTROLWORD, 0, 16), entry(obj::TARGET_POSITION, 0, 32)];
    let tx = [entry(obj::STATUSWORD, 0, 16), entry(obj::POSITION_ACTUAL, 0, 32)];
    let seg = segment_with_an_eeprom_drive(&rx, &tx);
    let mut base = BusBase::open(Link::Simulated(seg.clone()), BusConfig::default()).unwrap_or_else(|e| panic!("bring-up: {e}"));
    let d = base.bus().devices()[2].clone();
    assert_eq!((base.class_of(2), d.input_bytes, d.output_bytes), (Some("drive"), 6, 6));
    let outputs = follow_positions(&mut base, [-0.05, 0.1]);
    let tau = outputs[2].as_slice();
    assert!(tau[0].is_finite() && tau[1].is_nan(), "the drive without a torque object measures none: {tau:?}");
}

#[test]
fn a_scan_lists_every_device_and_why_a_class_refused_one() {
    use morc_ecat_wire::cia402::{obj, pdo::entry};
    // Velocity only: no target position for CSP, no mode object to hold in CSP from CSV.
    let rx = [entry(obj::CONTROLWORD, 0, 16), entry(obj::TARGET_VELOCITY, 0, 32)];
    let tx = [entry(obj::STATUSWORD, 0, 16), entry(obj::POSITION_ACTUAL, 0, 32)];
    let err = BusBase::open(Link::Simulated(segment_with_an_eeprom_drive(&rx, &tx)), BusConfig::default())
        .err()
        .expect("a drive its class refuses fails a bring-up");
    assert!(
        err.to_string()
            .contains("device 2 'MORC-402-EEPROM': its fixed PDO mapping (6 output, 6 input bytes) has no target position (0x607A), which CSP needs"),
        "{err}"
    );
    let text = morc::cli::bus::scan_link(Link::Simulated(segment_with_an_eeprom_drive(&rx, &tx)), &EngineConfig::default()).unwrap();
    assert!(text.contains("3 devices") && text.contains("refused: device 2 'MORC-402-EEPROM': its fixed PDO mapping"), "{text}");
    let row = text.lines().find(|l| l.trim_start().starts_with("2 ")).unwrap();
    assert!(row.contains("refused") && !text.contains("SDO"), "{text}");
    let drive = text.lines().find(|l| l.trim_start().starts_with("1 ")).unwrap();
    assert!(drive.contains("drive"), "the other devices keep their classes: {text}");
    assert!(text.contains("  joints = { { \"J1\", drive = { slave = 1, mode = \"csp\" } } },"), "the Lua lines of what it found: {text}");
}

/// A drive's own parameters (gains, limits) go down in PreOp after morc's mapping and mode;
/// one the drive refuses fails the bring-up naming the device and the object.
#[test]
fn a_drives_parameters_are_written_in_preop_and_a_refused_one_is_named() {
    use morc_ecat::devices::{DriveConfig, SdoValue, SdoWrite};
    let seg = shared_sim_segment(&SimSegmentConfig { drives: 2, ..Default::default() }).unwrap();
    let limited = DriveConfig { parameters: vec![SdoWrite::new(0x6072, 0, SdoValue::U16(500))], ..DriveConfig::default() };
    let base = BusBase::open(Link::Simulated(seg.clone()), BusConfig { drive_overrides: vec![(2, limited)], ..Default::default() }).unwrap_or_else(|e| panic!("{e}"));
    let max_torque = |p: usize| lock(&seg).device(p).and_then(|d| d.app_as::<Cia402Drive>()).and_then(|d| d.od().get_u16(0x6072, 0));
    assert_eq!((max_torque(1), max_torque(2)), (Some(u16::MAX), Some(500)), "only drive 2 was given its max torque");
    drop(base);
    let seg = shared_sim_segment(&SimSegmentConfig { drives: 1, ..Default::default() }).unwrap();
    let unknown = DriveConfig { parameters: vec![SdoWrite::new(0x2345, 1, SdoValue::I32(-7))], ..DriveConfig::default() };
    let message = match BusBase::open(Link::Simulated(seg), BusConfig { drive_overrides: vec![(1, unknown)], ..Default::default() }) {
        Ok(_) => panic!("a parameter the drive does not have was written"),
        Err(e) => e.to_string(),
    };
    assert!(message.starts_with("device 1 'MORC-402': SDO download 0x2345:01 = I32(-7) refused:"), "{message}");
}

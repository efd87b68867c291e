//! Bus faults, simulated on the virtual segment and survived: lost frames, a device dropping
//! out, a wrong working counter, a drive fault. Each is detected within a bounded number of
//! cycles as `Step::Fault` naming the device and the cause, the drives quick-stop, and a
//! fault reset recovers. In-process transport, virtual time: every run is the same.

mod bus_rig;

use bus_rig::Rig;
use morc_ecat::devices::cia402::PowerState;
use morc_ecat::transport::lock;
use morc_ecat::virtual_bus::SimSegmentConfig;
use morc_ecat_sim::Cia402Drive;
use morc_kernel::Step;

fn rig() -> Rig {
    let mut rig = Rig::new(&SimSegmentConfig { drives: 2, ..Default::default() });
    rig.inputs[0] = morc_kernel::Value::Vector(vec![0.1, -0.1]);
    rig
}

#[test]
fn lost_frames_are_tolerated_briefly_then_fault_and_recover() {
    let mut rig = rig();
    for _ in 0..10 {
        assert_eq!(rig.tick(false), Step::Continue);
    }
    // Two lost frames in a row: within tolerance (max_bad_cycles = 3).
    lock(&rig.seg).lose_frames(2);
    for _ in 0..5 {
        assert_eq!(rig.tick(false), Step::Continue, "{:?}", rig.base.fault());
    }
    assert_eq!(rig.base.bus().counters().lost_frames, 2);
    // The link goes down.
    lock(&rig.seg).lose_frames(u32::MAX);
    let (cycles, message) = rig.until_fault(10);
    assert_eq!(cycles, 3, "detected at the 3rd lost frame");
    assert!(message.contains("3 frames in a row without reply (lost)") && message.contains("reset faults"), "{message}");
    // While the link is down a reset cannot recover: the message says why.
    rig.base.reset_faults();
    match rig.tick(true) {
        Step::Fault(m) => assert!(m.contains("fault reset failed") && m.contains("does not answer"), "{m}"),
        s => panic!("{s:?}"),
    }
    lock(&rig.seg).lose_frames(0);
    let cycles = rig.recover();
    assert!(cycles < 200, "{cycles}");
    for _ in 0..200 {
        assert_eq!(rig.tick(false), Step::Continue);
    }
    let q = rig.outputs[0].as_slice();
    assert!((q[0] - 0.1).abs() < 1e-5 && (q[1] + 0.1).abs() < 1e-5, "moving again after recovery: {q:?}");
}

#[test]
fn a_device_dropping_out_is_named() {
    let mut rig = rig();
    for _ in 0..10 {
        rig.tick(false);
    }
    // Power fails at the second drive (position 2): it and everything after it drop out.
    lock(&rig.seg).cut_line_before(Some(2));
    let (cycles, message) = rig.until_fault(5);
    assert_eq!(cycles, 1);
    assert!(message.contains("device 2 'MORC-402' (not answering)"), "{message}");
    assert!(message.contains("device 3 'SIM-DO8' (not answering)") && message.contains("device 4 'SIM-DI8' (not answering)"), "{message}");
    assert!(!message.contains("device 1 "), "the first drive is still there: {message}");
    // Safe hold: the drive still connected quick-stops.
    for _ in 0..300 {
        rig.tick(true);
    }
    assert_eq!(rig.drive_states()[0], PowerState::SwitchOnDisabled, "quick stop ends in switch on disabled");
    lock(&rig.seg).cut_line_before(None);
    rig.recover();
    assert_eq!(rig.drive_states(), [PowerState::OperationEnabled, PowerState::OperationEnabled]);
}

#[test]
fn a_wrong_working_counter_faults_after_the_tolerance() {
    let mut rig = rig();
    for _ in 0..10 {
        rig.tick(false);
    }
    // The first drive's output FMMU stops mapping (its state stays OP): WKC 2 short.
    let fmmu0_activate = 0x0600 + 12;
    lock(&rig.seg).device_mut(1).unwrap().esc.pdi_write(fmmu0_activate, &[0]);
    let (cycles, message) = rig.until_fault(10);
    assert_eq!(cycles, 3);
    let expected = rig.base.bus().expected_working_counter();
    assert!(message.contains(&format!("working counter {}, expected {expected}", expected - 2)), "{message}");
    lock(&rig.seg).device_mut(1).unwrap().esc.pdi_write(fmmu0_activate, &[1]);
    rig.recover();
}

#[test]
fn a_drive_fault_is_named_with_its_error_code_and_reset() {
    let mut rig = rig();
    for _ in 0..100 {
        rig.tick(false);
    }
    lock(&rig.seg).device_mut(2).unwrap().app_as_mut::<Cia402Drive>().unwrap().inject_fault(0x8611);
    let (cycles, message) = rig.until_fault(10);
    assert!(cycles <= 3, "{cycles}");
    assert!(message.contains("device 2 'MORC-402': drive fault, error code 0x8611 (following error)"), "{message}");
    // Until reset, every run would fault at once.
    assert!(matches!(rig.tick(false), Step::Fault(_)));
    let cycles = rig.recover();
    assert!(cycles < 100, "{cycles}");
    assert_eq!(rig.drive_states(), [PowerState::OperationEnabled, PowerState::OperationEnabled]);
    let q = rig.outputs[0].as_slice().to_vec();
    for _ in 0..100 {
        assert_eq!(rig.tick(true), Step::Continue);
    }
    assert_eq!(rig.outputs[0].as_slice(), &q[..], "holds after recovery");
}

#[test]
fn the_same_fault_sequence_gives_the_same_cycles() {
    let run = || {
        let mut rig = rig();
        for _ in 0..20 {
            rig.tick(false);
        }
        lock(&rig.seg).device_mut(1).unwrap().app_as_mut::<Cia402Drive>().unwrap().inject_fault(0x2310);
        let (cycles, message) = rig.until_fault(10);
        (cycles, message, rig.recover(), rig.outputs[0].as_slice().iter().map(|x| x.to_bits()).collect::<Vec<_>>())
    };
    assert_eq!(run(), run());
}

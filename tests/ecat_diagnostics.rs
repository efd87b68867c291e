//! Bring-up diagnostics that name the cause: a device refusing a state is reported with the
//! state it refused and its AL status code in words, the 32-device limit is named, and a
//! scan leaves the line in PREOP. On the virtual segment, in-process, with the faulty devices
//! of `morc::bus::sim::faulty`.

use morc::bus::base::{BusBase, BusConfig};
use morc::bus::master::Link;
use morc::bus::sim::{faulty, shared_sim_segment, sim_segment, SimSegmentConfig};
use morc::bus::transport::lock;
use morc::bus::virtual_segment::AlState;
use morc::kernel::engine::EngineConfig;
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
        Err(e) => e,
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
        Err(e) => e,
    };
    assert!(message.contains("33 devices on the line") && message.contains("at most 32"), "{message}");
}

#[test]
fn a_scan_leaves_the_devices_in_preop() {
    let seg = shared_sim_segment(&SimSegmentConfig::cell(morc::bus::sim::DEFAULT_DRIVES)).unwrap();
    let text = morc::cli::bus::scan_link(Link::Simulated(seg.clone()), &EngineConfig::default()).unwrap();
    assert!(text.contains("13 devices") && text.contains("devices back in PREOP"), "{text}");
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

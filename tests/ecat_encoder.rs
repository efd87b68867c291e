//! Incremental encoder terminals (EL5101-style) on the simulated segment, through the real
//! master: the class found by Beckhoff's identity (or set in the bus configuration), the
//! 32-bit counter unwrapped across its wrap and scaled to the link position on `enc<p>`, the
//! terminal marking its inputs invalid latching a bus fault that names it — and all of it
//! cycling without allocating.
//! Line: 0 coupler, 1 drive, 2 DO8, 3 DI8, 4–5 EL5101 encoder terminals.

mod bus_rig;

use bus_rig::Rig;
use morc_ecat::base::BusConfig;
use morc_ecat::devices::{DeviceClassChoice, EncoderScaling};
use morc_ecat::transport::{lock, SharedSegment};
use morc_ecat::virtual_bus::{shared_sim_segment, SimSegmentConfig};
use morc_ecat_sim::SimEncoder;
use morc_kernel::{Base, Step, Value, ValueType};
use morc_test_support::alloc::{allocates_nothing, CountingAllocator};
use std::f64::consts::{PI, TAU};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn segment() -> (SimSegmentConfig, SharedSegment) {
    let config = SimSegmentConfig { drives: 1, encoders: 2, ..Default::default() };
    let seg = shared_sim_segment(&config).unwrap();
    (config, seg)
}

fn open(seg: SharedSegment, config: BusConfig) -> Rig {
    Rig::open(seg, config)
}

fn encoder<R>(seg: &SharedSegment, position: usize, f: impl FnOnce(&mut SimEncoder) -> R) -> R {
    f(lock(seg).device_mut(position).and_then(|d| d.app_as_mut::<SimEncoder>()).expect("an encoder terminal there"))
}

fn real(rig: &Rig, port: &str) -> f64 {
    match rig.output(port) {
        Value::Real(x) => *x,
        v => panic!("{port} = {v:?}"),
    }
}

#[test]
fn encoder_terminals_get_their_class_and_a_port_in_radians() {
    let (config, seg) = segment();
    assert_eq!(config.device_count(), 6);
    assert_eq!(lock(&seg).len(), 6);
    let rig = open(seg, BusConfig::default());
    let classes: Vec<Option<&str>> = (0..6).map(|p| rig.base.class_of(p)).collect();
    assert_eq!(classes, [None, Some("drive"), Some("dout"), Some("din"), Some("enc"), Some("enc")]);
    let device = &rig.base.bus().devices()[4];
    assert_eq!((device.vendor_id, device.product_code, device.name.as_str()), (2, 0x13ED_3052, "SIM-EL5101"));
    assert_eq!((device.input_bytes, device.output_bytes), (10, 6), "Standard 32 Bit");
    let port = rig.base.info().outputs.iter().find(|p| p.name == "enc4").expect("enc4");
    assert_eq!((port.ty, port.unit.as_str()), (ValueType::Real, "rad"));
    assert!(port.doc.starts_with("device 4 'SIM-EL5101': position from the incremental encoder's counter (rad)"), "{}", port.doc);
}

#[test]
fn the_counter_reads_as_the_scaled_position_across_the_32_bit_wrap() {
    let (_, seg) = segment();
    // A count the terminal kept from before the controller started.
    encoder(&seg, 4, |e| e.set_counts(-1024));
    let scaling = EncoderScaling { counts_per_rev: 10_000.0, gear: 2.0, reversed: true, offset: 0.25 };
    let mut rig = open(seg, BusConfig { class_overrides: vec![(5, DeviceClassChoice::Encoder { scaling })], ..Default::default() });
    rig.run(3, false);
    assert!((real(&rig, "enc4") + PI / 2.0).abs() < 1e-12, "found by identity, 4096 counts/rev: {}", real(&rig, "enc4"));
    encoder(&rig.seg, 4, |e| e.set_counts(2048));
    rig.run(3, false);
    assert!((real(&rig, "enc4") - PI).abs() < 1e-12);
    // Up past 2^32 and down below −2^32, in steps under 2^31 per cycle.
    let expected = |counts: i64| -(counts as f64) / 20_000.0 * TAU + 0.25;
    for counts in [2_000_000_000i64, 4_000_000_000, 5_000_000_000, 3_000_000_000, 1_000_000_000, -1_000_000_000, -3_000_000_000, -5_000_000_000] {
        encoder(&rig.seg, 5, |e| e.set_counts(counts));
        rig.run(3, false);
        assert_eq!(encoder(&rig.seg, 5, |e| e.counter()), counts as u32, "the terminal's counter wraps");
        let got = real(&rig, "enc5");
        assert!((got - expected(counts)).abs() < 1e-9 * expected(counts).abs(), "{counts} counts: {got} rad, expected {}", expected(counts));
    }
}

#[test]
fn an_encoder_marking_its_inputs_invalid_latches_a_fault_naming_it() {
    let (_, seg) = segment();
    let mut rig = open(seg, BusConfig::default());
    encoder(&rig.seg, 4, |e| e.set_counts(1024));
    rig.run(3, false);
    assert!((real(&rig, "enc4") - PI / 2.0).abs() < 1e-12);
    encoder(&rig.seg, 4, |e| e.set_error(true));
    let (cycles, message) = rig.until_fault(5);
    assert!(cycles <= 3, "{cycles}");
    assert_eq!(
        message,
        "device 4 'SIM-EL5101': the encoder terminal marks its inputs invalid (TxPDO state, status 0x4000); the position holds at 1.5708 rad; check the encoder's supply and cable and the terminal's diagnostics, then reset faults"
    );
    // Latched, and the position holds while the inputs are invalid.
    encoder(&rig.seg, 4, |e| e.set_counts(999_999));
    assert!(matches!(rig.tick(true), Step::Fault(_)));
    rig.run(20, true);
    assert_eq!(rig.base.fault(), Some(message.as_str()));
    assert!((real(&rig, "enc4") - PI / 2.0).abs() < 1e-12);
    // Valid again: a reset clears the fault and the position follows the counter.
    encoder(&rig.seg, 4, |e| {
        e.set_error(false);
        e.set_counts(2048);
    });
    rig.recover();
    rig.run(3, false);
    assert_eq!(rig.base.fault(), None);
    assert!((real(&rig, "enc4") - PI).abs() < 1e-12);
}

#[test]
fn encoders_cycle_without_allocating() {
    let (_, seg) = segment();
    let mut rig = open(seg, BusConfig::default());
    // From just below 0 up to 6·10^9 at 3·10^6 counts per cycle: the counter wraps twice.
    let start = -1_000_000i64;
    encoder(&rig.seg, 5, |e| e.set_counts(start));
    rig.run(10, false);
    allocates_nothing("2000 bus cycles with encoders", || {
        for k in 0..2000i64 {
            encoder(&rig.seg, 5, |e| e.set_counts(start + 3_000_000 * k));
            assert_eq!(rig.tick(false), Step::Continue);
        }
    });
    rig.run(3, false);
    let expected = (start + 3_000_000 * 1999) as f64 / 4096.0 * TAU;
    assert!((real(&rig, "enc5") - expected).abs() < 1e-9 * expected, "{} vs {expected}", real(&rig, "enc5"));
}

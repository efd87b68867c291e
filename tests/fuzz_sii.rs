//! Fuzz: SII/EEPROM images. Random images and real ones (the simulated devices' images, with
//! bytes overwritten) go through the SII parser (`SiiImage::from_file_bytes`, `parse`: header,
//! categories, strings, sync managers, FMMUs, PDO descriptions), the virtual segment's device
//! constructors (which read their layout from the SII), and — fewer, each is a bring-up — the
//! master: ethercrab reads the image through the ESC's SII registers at discovery and
//! configures the device from its categories and PDOs. None may panic or hang.
//!
//! Cases: `MORC_FUZZ_CASES` (default 1500; bring-ups a fiftieth of that). At length:
//!     MORC_FUZZ_CASES=200000 cargo test --release --test fuzz_sii

use morc_ecat::master::{Bus, Link, MasterConfig, PreOpPlan};
use morc_ecat::virtual_bus::{sim_segment, SimSegmentConfig};
use morc_ecat_sim::{coupler, digital_inputs, digital_outputs, EscConfig, Segment, SiiImage};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn cases() -> u32 {
    std::env::var("MORC_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500)
}

/// The images of the simulated cell's devices: coupler, drive, DO8, DI8, AI4, AO4, safety
/// PLC, F/T sensor.
fn real_images() -> Vec<Vec<u8>> {
    let segment = sim_segment(&SimSegmentConfig::cell(1)).unwrap();
    segment.devices().iter().map(|d| d.esc.sii().bytes().to_vec()).collect()
}

/// Random bytes, random hex text, or a real image with bytes overwritten — mostly in the
/// category area (from word 0x40), where the lengths and counts are.
fn images() -> impl Strategy<Value = Vec<u8>> {
    let reals = real_images();
    let mutated = (0..reals.len(), prop::collection::vec((any::<u16>(), any::<u8>()), 1..12), any::<bool>()).prop_map(move |(which, flips, in_categories)| {
        let mut image = reals[which].clone();
        for (at, value) in flips {
            let at = if in_categories { 0x80 + usize::from(at) % (image.len() - 0x80) } else { usize::from(at) % image.len() };
            image[at] = value;
        }
        image
    });
    let text = prop::collection::vec(prop_oneof![Just(b' '), Just(b'\n'), prop::sample::select(b"0123456789abcdefABCDEF".to_vec())], 0..600);
    prop_oneof![prop::collection::vec(any::<u8>(), 0..2048), text, mutated.clone(), mutated]
}

#[test]
fn the_sii_parser_takes_any_image() {
    let n = AtomicU64::new(0);
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    runner
        .run(&images(), |bytes| {
            n.fetch_add(1, Ordering::Relaxed);
            if let Ok(image) = SiiImage::from_file_bytes(&bytes) {
                if let Ok(info) = image.parse() {
                    // Counts come from one byte each: what was allocated is bounded by them.
                    prop_assert!(info.strings.len() <= 255 && info.tx_pdos.iter().chain(&info.rx_pdos).all(|p| p.entries.len() <= 255));
                    let _ = (info.name(), info.description(), info.mailbox.has_coe());
                }
                // The devices read their layout from the image: an error, never a panic.
                let _ = digital_inputs(image.clone(), EscConfig::et1200(), 0);
                let _ = digital_outputs(image.clone(), EscConfig::et1200(), 0);
                let _ = morc_ecat_sim::fixed_pdo_device(image.clone(), EscConfig::et1100(), 0, morc_ecat_sim::SimSafetyPlc::default(), None);
                let _ = morc_ecat_sim::cia402_drive(image.clone(), 0, Box::new(morc_ecat_sim::IdealFollower::new(1.0, 1.0)));
                let _ = coupler(image, 0);
            }
            Ok(())
        })
        .unwrap();
    eprintln!("fuzz sii (SII parser, device constructors): {} inputs", n.load(Ordering::Relaxed));
}

#[test]
fn the_master_brings_up_or_refuses_a_device_with_any_image() {
    let n = AtomicU64::new(0);
    let (ok, refused) = (AtomicU64::new(0), AtomicU64::new(0));
    let mut runner = TestRunner::new(Config { cases: (cases() / 50).max(20), failure_persistence: None, ..Config::default() });
    runner
        .run(&images(), |bytes| {
            n.fetch_add(1, Ordering::Relaxed);
            let Ok(image) = SiiImage::from_file_bytes(&bytes) else { return Ok(()) };
            // A passive device (only its ESC) with that image, behind a good coupler.
            let mut segment = Segment::new();
            let good = sim_segment(&SimSegmentConfig { drives: 0, digital_inputs: 0, digital_outputs: 0, ..Default::default() }).unwrap();
            segment.push(coupler(good.devices()[0].esc.sii().clone(), 1_000));
            segment.push(coupler(image, 2_000));
            let link = Link::Simulated(Arc::new(Mutex::new(segment)));
            let config = MasterConfig { bring_up_timeout: Duration::from_millis(300), ..Default::default() };
            match Bus::open(link, config, |_| Ok(PreOpPlan::default())) {
                Ok(_) => ok.fetch_add(1, Ordering::Relaxed),
                Err(e) => {
                    prop_assert!(!e.to_string().is_empty());
                    refused.fetch_add(1, Ordering::Relaxed)
                }
            };
            Ok(())
        })
        .unwrap();
    eprintln!(
        "fuzz sii (master bring-up through the ESC's SII registers): {} inputs ({} up, {} refused with a message)",
        n.load(Ordering::Relaxed),
        ok.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
}

//! Fuzz: EtherCAT frames from the wire. Random and mutated frames go through the frame
//! parser (`morc_ecat_wire::frame`), the virtual segment (every ESC processes every datagram: the
//! registers, SII access, FMMUs, AL control), the devices' CoE mailbox server, and
//! ethercrab's reply parser (`PduRx::receive_frame`, what the master does with each frame
//! that comes back). None may panic; what the parser accepts must lie inside the frame.
//!
//! Cases: `MORC_FUZZ_CASES` (default 20000 per target, about a second). At length:
//!     MORC_FUZZ_CASES=200000 cargo test --release --test fuzz_frame

use morc_ecat::virtual_bus::{sim_segment, SimSegmentConfig};
use morc_ecat_sim::{AlState, Cia402Drive, DeviceApp, IdealFollower};
use morc_ecat_wire::frame::{parse_datagrams, parse_header, Datagrams, FrameBuilder, ETHERNET_HEADER_LEN};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

fn cases() -> u32 {
    std::env::var("MORC_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(20000)
}

fn runner() -> TestRunner {
    TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() })
}

/// A well-formed frame of random datagrams, then some bytes overwritten: most inputs get past
/// the first checks, so the deeper paths see them.
fn frames() -> impl Strategy<Value = Vec<u8>> {
    let datagram = (0u8..16, any::<u8>(), any::<u32>(), prop::collection::vec(any::<u8>(), 0..64), any::<u16>());
    let built = (prop::collection::vec(datagram, 1..6), prop::collection::vec((any::<usize>(), any::<u8>()), 0..4)).prop_map(|(datagrams, flips)| {
        let mut buf = vec![0u8; 1514];
        let mut b = FrameBuilder::new(&mut buf, [0xFF; 6], [0x02, 0, 0, 0, 0, 1]).unwrap();
        for (command, index, address, data, wkc) in &datagrams {
            if b.push(*command, *index, *address, data, *wkc).is_err() {
                break;
            }
        }
        let len = b.finish();
        buf.truncate(len);
        for (at, value) in flips {
            let at = at % buf.len();
            buf[at] = value;
        }
        buf
    });
    prop_oneof![prop::collection::vec(any::<u8>(), 0..1600), built]
}

#[test]
fn frame_parser_never_panics_and_stays_inside_the_frame() {
    let n = AtomicU64::new(0);
    // proptest's test closure is `Fn`: state it keeps between inputs goes in cells.
    let layouts = RefCell::new(Vec::with_capacity(256));
    runner()
        .run(&frames(), |frame| {
            n.fetch_add(1, Ordering::Relaxed);
            let _ = parse_header(&frame);
            if let Ok(datagrams) = Datagrams::new(&frame) {
                for d in datagrams.take(300).flatten() {
                    prop_assert!(d.wkc_offset + 2 <= frame.len() && d.data_offset >= ETHERNET_HEADER_LEN);
                }
            }
            let mut layouts = layouts.borrow_mut();
            if parse_datagrams(&frame, &mut layouts, 256).is_ok() {
                for d in layouts.iter() {
                    prop_assert!(d.header_offset < d.data_offset && d.data_offset <= d.wkc_offset && d.wkc_offset + 2 <= frame.len());
                }
            }
            Ok(())
        })
        .unwrap();
    eprintln!("fuzz frame (frame parser): {} inputs", n.load(Ordering::Relaxed));
}

#[test]
fn the_virtual_segment_takes_any_frame() {
    let n = AtomicU64::new(0);
    let segment = RefCell::new(sim_segment(&SimSegmentConfig::cell(2)).unwrap());
    let reply = RefCell::new(vec![0u8; 1514]);
    runner()
        .run(&frames(), |frame| {
            let i = n.fetch_add(1, Ordering::Relaxed);
            // Random writes pile up (station addresses, SMs, AL control): start afresh now and then.
            let (mut segment, mut reply) = (segment.borrow_mut(), reply.borrow_mut());
            if i % 500 == 499 {
                *segment = sim_segment(&SimSegmentConfig::cell(2)).unwrap();
            }
            if let Ok(len) = segment.process_frame(&frame, &mut reply) {
                prop_assert!(len <= reply.len());
            }
            segment.advance(1_000_000);
            Ok(())
        })
        .unwrap();
    eprintln!("fuzz frame (virtual segment): {} inputs", n.load(Ordering::Relaxed));
}

#[test]
fn the_coe_mailbox_server_takes_any_message() {
    let n = AtomicU64::new(0);
    let identity = morc_ecat_sim::morc_drive_image().unwrap().parse().unwrap().identity;
    let drive = RefCell::new(Cia402Drive::new(identity, "fuzz", true, Box::new(IdealFollower::new(1000.0, 1000.0))));
    let response = RefCell::new(vec![0u8; 128]);
    // Mailbox header (6), CoE header (2), SDO command and address: mostly well-formed SDO
    // requests (service 2) with random bodies, and random bytes.
    let sdo = (any::<u8>(), prop_oneof![Just(0x1C12u16), Just(0x1600), Just(0x1A00), Just(0x6040), Just(0x1008), any::<u16>()], any::<u8>(), prop::collection::vec(any::<u8>(), 0..120)).prop_map(
        |(command, index, sub, body)| {
            let mut m = vec![0u8; 6];
            let len = (2 + 4 + body.len()) as u16;
            m[0..2].copy_from_slice(&len.to_le_bytes());
            m[5] = 0x03 | (1 << 4); // CoE, counter 1
            m.extend_from_slice(&(2u16 << 12).to_le_bytes());
            m.push(command);
            m.extend_from_slice(&index.to_le_bytes());
            m.push(sub);
            m.extend_from_slice(&body);
            m
        },
    );
    let messages = prop_oneof![prop::collection::vec(any::<u8>(), 0..200), sdo];
    runner()
        .run(&(messages, prop_oneof![Just(AlState::PreOp), Just(AlState::SafeOp), Just(AlState::Op)]), |(message, state)| {
            n.fetch_add(1, Ordering::Relaxed);
            let mut response = response.borrow_mut();
            let len = drive.borrow_mut().on_mailbox(state, &message, &mut response);
            prop_assert!(len <= response.len());
            Ok(())
        })
        .unwrap();
    eprintln!("fuzz frame (CoE mailbox server): {} inputs", n.load(Ordering::Relaxed));
}

#[test]
fn the_master_takes_any_reply() {
    let n = AtomicU64::new(0);
    let storage: &'static ethercrab::PduStorage<4, { ethercrab::PduStorage::element_size(1100) }> = Box::leak(Box::new(ethercrab::PduStorage::new()));
    let (_tx, rx, _loop) = storage.try_split().unwrap();
    let rx = RefCell::new(rx);
    runner()
        .run(&frames(), |mut frame| {
            n.fetch_add(1, Ordering::Relaxed);
            // Replies come back with the locally administered bit in the source MAC.
            if frame.len() > 6 {
                frame[6] |= 0x02;
            }
            let _ = rx.borrow_mut().receive_frame(&frame);
            Ok(())
        })
        .unwrap();
    eprintln!("fuzz frame (ethercrab reply parser): {} inputs", n.load(Ordering::Relaxed));
}

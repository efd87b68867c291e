//! Replays a capture of ethercrab bringing up real devices (EK1100 + EL2828 + EL2889, recorded
//! on hardware) against a segment built from the same devices' EEPROM images, and compares
//! every reply to the one the real devices gave, byte for byte, except for time-dependent
//! fields listed in [`time_dependent`].

mod support;

use morc_ecat_sim::{coupler, digital_outputs, load_sii, DcUnit, EscConfig, Segment, SiiImage};
use morc_ecat_wire::frame::{parse_datagrams, Command, DatagramLayout};
use std::collections::HashMap;
use support::pcapng::read_packets;

const MASTER_MAC: [u8; 6] = [0x10; 6];
const REPLY_MAC: [u8; 6] = [0x12, 0x10, 0x10, 0x10, 0x10, 0x10];

fn reference(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/reference/ethercat/{path}", env!("CARGO_MANIFEST_DIR"))).expect("reference file")
}

fn image(name: &str) -> SiiImage {
    load_sii(format!("{}/tests/data/reference/ethercat/eeprom/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Data bytes of a datagram that depend on time, not on the simulation's logic. Their working
/// counters are still compared.
/// - SII control/status (FPRD 0x0502): a real EEPROM read takes tens of µs, so the recorded
///   replies often show busy (bit 15) with the read command still set; the simulated EEPROM
///   answers at once. The low byte (read size, address width) is still compared.
/// - DC receive times and the ECAT-unit receive time (reads of 0x0900..0x091F): local times of
///   real oscillators at the moment of recording (and, for port 3, uninitialised memory).
/// - System time (FRMW 0x0910): the reference clock's time, which ethercrab offsets by the
///   wall clock at recording.
/// - System time difference (reads of 0x092C): what the real DC control loop measured
///   between the reference's time and its own drifting oscillator.
fn time_dependent(layout: &DatagramLayout) -> Option<std::ops::Range<usize>> {
    let h = layout.header;
    let data = layout.data_range();
    let command = Command::from_code(h.command)?;
    match (command, h.ado()) {
        (Command::Fprd | Command::Aprd, 0x0502) => Some(data.start + 1..data.start + 2),
        (Command::Fprd | Command::Aprd | Command::Brd, 0x0900..=0x091F) => Some(data),
        (Command::Frmw, 0x0910) => Some(data),
        (Command::Fprd | Command::Aprd | Command::Brd, 0x092C) => Some(data),
        _ => None,
    }
}

/// The real devices of the captures, as the replies show them.
fn real_line() -> Segment {
    let mut segment = Segment::new();
    segment.push(coupler(image("ek1100.hex"), 0));
    // The real EL2828 has a different ESC from the EL2889: it reports DC with enhanced sync
    // (0x0008 = 0x01FC) but only its receive-time registers answer (WKC 0 for 0x0918, 0x0920,
    // 0x0928), and its SII control reads 0x50 (bit 4 set) where the others read 0x40.
    let el2828 = EscConfig { features: 0x01FC, dc: DcUnit::ReceiveTimesOnly, sii_control_fixed_bits: 0x10, ..EscConfig::et1200() };
    segment.push(digital_outputs(image("el2828.hex"), el2828, 0).unwrap());
    segment.push(digital_outputs(image("el2889.hex"), EscConfig::et1200(), 0).unwrap());
    segment
}

#[test]
fn replies_match_real_ek1100_el2828_el2889() {
    replay("captures/replay-ek1100-el2828-el2889.pcapng", real_line(), 1700);
}

#[test]
fn replies_match_real_ek1100_el2828_el2889_with_distributed_clocks() {
    replay("captures/replay-dc.pcapng", real_line(), 1000);
}

fn replay(capture: &str, mut segment: Segment, min_replies: usize) {
    let packets = read_packets(&reference(capture)).expect("pcapng");

    // Replies are matched to requests by the first datagram's index (several frames may be in
    // flight, as ethercrab sends them).
    let mut ours: HashMap<u8, Vec<u8>> = HashMap::new();
    let mut layouts = Vec::new();
    let mut out = vec![0u8; 1600];
    let (mut requests, mut compared, mut masked) = (0, 0, 0);
    let mut mismatches = Vec::new();
    for (number, packet) in packets.iter().enumerate() {
        let frame = &packet.data;
        if frame[6..12] == MASTER_MAC {
            requests += 1;
            let len = segment.process_frame(frame, &mut out).expect("the master's frames are well formed");
            ours.insert(frame[17], out[..len].to_vec());
            continue;
        }
        assert_eq!(frame[6..12], REPLY_MAC, "packet {number}");
        let mine = ours.remove(&frame[17]).unwrap_or_else(|| panic!("packet {number}: reply without request"));
        compared += 1;
        // The master's frames were captured before the NIC padded them to 60 bytes; the replies
        // came back padded. Padding is zeros and carries nothing.
        let mut expected = frame.clone();
        let mut actual = mine;
        let len = expected.len().max(actual.len());
        expected.resize(len, 0);
        actual.resize(len, 0);
        parse_datagrams(frame, &mut layouts, 256).expect("recorded replies are well formed");
        for layout in &layouts {
            if let Some(range) = time_dependent(layout) {
                masked += 1;
                expected[range.clone()].fill(0);
                actual[range].fill(0);
            }
        }
        if expected != actual {
            let first = expected.iter().zip(&actual).position(|(a, b)| a != b).unwrap_or(0);
            if mismatches.len() < 3 {
                eprintln!("packet {}: expected {:02x?}\n   actual {:02x?}", number + 1, &expected[14..], &actual[14..]);
            }
            mismatches.push((number + 1, first));
        }
    }
    assert_eq!(requests, compared, "every request got exactly one recorded reply");
    assert!(compared > min_replies, "{compared} replies compared");
    assert!(masked > 0);
    assert!(mismatches.is_empty(), "{} of {compared} replies differ (Wireshark packet, first byte): {:?}", mismatches.len(), &mismatches[..mismatches.len().min(10)]);
    assert_eq!(segment.counters().malformed_frames, 0);
}

#[test]
fn pcapng_reader_rejects_garbage() {
    assert!(read_packets(b"not a pcapng file at all").is_err());
    let capture = reference("captures/replay-ek1100-el2828-el2889.pcapng");
    assert!(read_packets(&capture[..capture.len() - 3]).is_err());
    assert!(!read_packets(&capture).unwrap().is_empty());
}

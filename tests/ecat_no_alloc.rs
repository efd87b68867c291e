//! Steady-state cyclic exchange through the virtual segment allocates nothing: a counting
//! global allocator watches frames of LRW + status reads pass through a segment in Op.

use morc_ecat_sim::{cia402_drive, coupler, digital_outputs, load_sii, EscConfig, IdealFollower, Segment, SiiImage};
use morc_ecat_wire::frame::{Command, FrameBuilder};
use morc_test_support::alloc::{allocates_nothing, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn reference(name: &str) -> SiiImage {
    load_sii(format!("{}/tests/data/reference/ethercat/eeprom/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn fp(station: u16, register: u16) -> u32 {
    u32::from(station) | (u32::from(register) << 16)
}

fn send(s: &mut Segment, buf: &mut [u8], out: &mut [u8], command: Command, address: u32, data: &[u8]) -> u16 {
    let mut b = FrameBuilder::new(buf, [0xFF; 6], [0x10; 6]).unwrap();
    b.push(command.code(), 0, address, data, 0).unwrap();
    let len = b.finish();
    let n = s.process_frame(&buf[..len], out).unwrap();
    u16::from_le_bytes([out[26 + data.len()], out[27 + data.len()]]).min(n as u16)
}

#[test]
fn cyclic_exchange_does_not_allocate() {
    let mut s = Segment::new();
    s.push(coupler(reference("ek1100.hex"), 0));
    s.push(digital_outputs(reference("el2004.bin"), EscConfig::et1200(), 0).unwrap());
    s.push(cia402_drive(reference("akd.hex"), 0, Box::new(IdealFollower::new(1e5, 1e6))).unwrap());
    let mut buf = vec![0u8; 1600];
    let mut out = vec![0u8; 1600];
    for i in 0..3u16 {
        let ap = u32::from(i.wrapping_neg()) | (0x0010 << 16);
        send(&mut s, &mut buf, &mut out, Command::Apwr, ap, &(0x1000 + i).to_le_bytes());
    }
    // EL2004: SM0 1 byte at 0x0F00, FMMU0 logical 0..1 → 0x0F00 write. Drive: SM2 13 bytes at
    // 0x1100 (FMMU0 logical 1..14, write), SM3 13 bytes at 0x1140 (FMMU1 logical 14..27, read).
    send(&mut s, &mut buf, &mut out, Command::Fpwr, fp(0x1001, 0x0800), &[0x00, 0x0F, 1, 0, 0x44, 0, 1, 0]);
    send(&mut s, &mut buf, &mut out, Command::Fpwr, fp(0x1002, 0x0810), &[0x00, 0x11, 13, 0, 0x64, 0, 1, 0]);
    send(&mut s, &mut buf, &mut out, Command::Fpwr, fp(0x1002, 0x0818), &[0x40, 0x11, 13, 0, 0x20, 0, 1, 0]);
    let fmmu = |logical: u32, len: u16, physical: u16, kind: u8| {
        let mut f = [0u8; 16];
        f[0..4].copy_from_slice(&logical.to_le_bytes());
        f[4..6].copy_from_slice(&len.to_le_bytes());
        f[7] = 7;
        f[8..10].copy_from_slice(&physical.to_le_bytes());
        f[11] = kind;
        f[12] = 1;
        f
    };
    send(&mut s, &mut buf, &mut out, Command::Fpwr, fp(0x1001, 0x0600), &fmmu(0, 1, 0x0F00, 2));
    send(&mut s, &mut buf, &mut out, Command::Fpwr, fp(0x1002, 0x0600), &fmmu(1, 13, 0x1100, 2));
    send(&mut s, &mut buf, &mut out, Command::Fpwr, fp(0x1002, 0x0610), &fmmu(14, 13, 0x1140, 1));
    // Mailbox SMs as the drive's SII says, so Init → PreOp is accepted.
    send(&mut s, &mut buf, &mut out, Command::Fpwr, fp(0x1002, 0x0800), &[0x00, 0x18, 0x00, 0x04, 0x26, 0, 1, 0]);
    send(&mut s, &mut buf, &mut out, Command::Fpwr, fp(0x1002, 0x0808), &[0x00, 0x1C, 0x00, 0x04, 0x22, 0, 1, 0]);
    for state in [2u8, 4, 8] {
        send(&mut s, &mut buf, &mut out, Command::Bwr, 0x0120 << 16, &[state, 0]);
    }
    assert!(s.devices().iter().all(|d| d.esc.al_state() == morc_ecat_sim::AlState::Op));
    let mut pdi = [0u8; 27];
    // Warm up once, then count.
    send(&mut s, &mut buf, &mut out, Command::Lrw, 0, &pdi);
    allocates_nothing("1000 cycles of the simulated segment", || {
        for cycle in 0..1000u32 {
            pdi[0] = cycle as u8;
            pdi[1..3].copy_from_slice(&0x000Fu16.to_le_bytes());
            let wkc = send(&mut s, &mut buf, &mut out, Command::Lrw, 0, &pdi);
            assert_eq!(wkc, 5);
            send(&mut s, &mut buf, &mut out, Command::Brd, 0x0130 << 16, &[0, 0]);
            s.advance(1_000_000);
        }
    });
}

//! ethercrab, a real EtherCAT MainDevice, drives the virtual segment end to end: discovery,
//! EEPROM reads, CoE PDO configuration, AL states up to Op, and cyclic process data.

use ethercrab::{MainDevice, MainDeviceConfig, PduStorage, SubDeviceState, Timeouts};
use morc_ecat::transport::{block_on, lock, InProcessTransport, SharedSegment};
use morc_ecat_sim::{cia402_drive, coupler, digital_outputs, load_sii, AlState, Cia402Drive, DigitalOutputs, EscConfig, IdealFollower, PowerState, Segment, SiiImage};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MAX_SUBDEVICES: usize = 8;
const MAX_PDU_DATA: usize = PduStorage::element_size(1100);
const MAX_FRAMES: usize = 16;
const PDI_LEN: usize = 64;
const CYCLE_NS: u64 = 1_000_000;

fn reference(name: &str) -> SiiImage {
    load_sii(format!("{}/tests/data/reference/ethercat/eeprom/{name}", env!("CARGO_MANIFEST_DIR"))).expect("reference EEPROM image")
}

/// EK1100 + EL2004 + a CiA 402 drive with the Kollmorgen AKD's EEPROM.
fn segment() -> SharedSegment {
    let mut s = Segment::new();
    s.push(coupler(reference("ek1100.hex"), 1_000));
    s.push(digital_outputs(reference("el2004.bin"), EscConfig::et1200(), 2_000).unwrap());
    // 200 000 counts/s, 2 000 000 counts/s² for quick stops.
    s.push(cia402_drive(reference("akd.hex"), 3_000, Box::new(IdealFollower::new(200_000.0, 2_000_000.0))).unwrap());
    s.set_time_ns(1_000_000_000);
    Arc::new(Mutex::new(s))
}

fn timeouts() -> Timeouts {
    // Generous: the segment answers within the same poll, so none of these should ever fire.
    Timeouts { wait_loop_delay: Duration::from_millis(0), mailbox_response: Duration::from_millis(1000), ..Default::default() }
}

#[test]
fn ethercrab_brings_simulated_devices_to_op_and_exchanges_process_data() {
    let storage: PduStorage<MAX_FRAMES, MAX_PDU_DATA> = PduStorage::new();
    let (tx, rx, pdu_loop) = storage.try_split().expect("split once");
    let seg = segment();
    let maindevice = MainDevice::new(pdu_loop, timeouts(), MainDeviceConfig { dc_static_sync_iterations: 100, ..Default::default() });
    let transport = InProcessTransport::new(tx, rx, seg.clone());
    let seg_for_clock = seg.clone();
    let now = || lock(&seg_for_clock).time_ns();
    let clock = &now;

    block_on(transport, async {
        let group = maindevice.init_single_group::<MAX_SUBDEVICES, PDI_LEN>(clock).await.expect("init");
        assert_eq!(group.len(), 3);

        let names: Vec<String> = group.iter(&maindevice).map(|sd| sd.name().to_string()).collect();
        assert_eq!(names, ["EK1100", "EL2004", "AKD"]);
        let identities: Vec<(u32, u32)> = group.iter(&maindevice).map(|sd| (sd.identity().vendor_id, sd.identity().product_id)).collect();
        assert_eq!(identities, [(0x2, 0x044c_2c52), (0x2, 0x07d4_3052), (0x6a, 0x0041_4b44)]);
        let addresses: Vec<u16> = group.iter(&maindevice).map(|sd| sd.configured_address()).collect();
        assert_eq!(addresses, [0x1000, 0x1001, 0x1002]);
        {
            let s = lock(&seg);
            assert!(s.devices().iter().all(|d| d.esc.al_state() == AlState::PreOp));
        }

        // The drive answers SDOs from its object dictionary (0x1018:02 product code).
        let drive = group.subdevice(&maindevice, 2).expect("drive");
        let product: u32 = drive.sdo_read(0x1018, 2).await.expect("SDO read");
        assert_eq!(product, 0x0041_4b44);
        let device_type: u32 = drive.sdo_read(0x1000, 0).await.expect("SDO read");
        assert_eq!(device_type, 0x0002_0192);
        drive.sdo_write(0x6060, 0, 8i8).await.expect("mode CSP");
        assert!(drive.sdo_read::<u16>(0x2000, 0).await.is_err(), "unknown object aborts");

        let group = group.into_op(&maindevice).await.expect("PRE-OP -> OP");
        {
            let s = lock(&seg);
            assert!(s.devices().iter().all(|d| d.esc.al_state() == AlState::Op));
        }
        let drive = group.subdevice(&maindevice, 2).expect("drive");
        assert_eq!(drive.io_raw().outputs().len(), 13);
        assert_eq!(drive.io_raw().inputs().len(), 13);
        let terminal = group.subdevice(&maindevice, 1).expect("EL2004");
        assert_eq!(terminal.io_raw().outputs().len(), 1);

        // Cyclic exchange: EL2004 outputs follow a pattern, the drive is walked through its
        // state machine into Operation Enabled (CSP), then follows a target.
        let target = 20_000i32;
        let mut seen_states = Vec::new();
        for cycle in 0..400u32 {
            let pattern = (cycle % 16) as u8;
            terminal.outputs_raw_mut()[0] = pattern;
            let statusword = {
                let io = drive.io_raw();
                u16::from_le_bytes([io.inputs()[0], io.inputs()[1]])
            };
            let actual = {
                let io = drive.io_raw();
                i32::from_le_bytes(io.inputs()[2..6].try_into().unwrap())
            };
            let controlword: u16 = match statusword & 0x6F {
                0x40 | 0x60 => 0x0006,                 // switch on disabled → shutdown
                0x21 => 0x0007,                        // ready to switch on → switch on
                0x23 => 0x000F,                        // switched on → enable operation
                0x27 => 0x000F,                        // operation enabled
                _ if statusword & 0x08 != 0 => 0x0080, // fault → reset
                _ => 0x0000,
            };
            let command_position = if statusword & 0x6F == 0x27 { target } else { actual };
            {
                let mut out = drive.outputs_raw_mut();
                out[0..2].copy_from_slice(&controlword.to_le_bytes());
                out[2..6].copy_from_slice(&command_position.to_le_bytes());
                out[12] = 8;
            }
            let response = group.tx_rx(&maindevice).await.expect("tx/rx");
            // LRW: EL2004 write (+2), drive write (+2) and read (+1).
            assert_eq!(response.working_counter, 5, "cycle {cycle}");
            assert!(response.all_op());
            {
                let mut s = lock(&seg);
                let el2004 = s.device(1).unwrap().app_as::<DigitalOutputs>().unwrap();
                assert_eq!(el2004.outputs(), u32::from(pattern), "cycle {cycle}");
                s.advance(CYCLE_NS);
                let state = s.device(2).unwrap().app_as::<Cia402Drive>().unwrap().state();
                if seen_states.last() != Some(&state) {
                    seen_states.push(state);
                }
            }
        }
        assert_eq!(seen_states, [PowerState::SwitchOnDisabled, PowerState::ReadyToSwitchOn, PowerState::SwitchedOn, PowerState::OperationEnabled]);
        let io = drive.io_raw();
        let statusword = u16::from_le_bytes([io.inputs()[0], io.inputs()[1]]);
        let position = i32::from_le_bytes(io.inputs()[2..6].try_into().unwrap());
        assert_eq!(statusword & 0x6F, 0x27);
        assert_eq!(position, target, "the drive followed the target (200 counts per 1 ms cycle)");
        assert_eq!(io.inputs()[12], 8, "mode display CSP");
        drop(io);

        let group = group.into_safe_op(&maindevice).await.expect("OP -> SAFE-OP");
        let group = group.into_pre_op(&maindevice).await.expect("SAFE-OP -> PRE-OP");
        let _group = group.into_init(&maindevice).await.expect("PRE-OP -> INIT");
        let s = lock(&seg);
        assert!(s.devices().iter().all(|d| d.esc.al_state() == AlState::Init));
        assert_eq!(s.counters().malformed_frames, 0);
        let _ = SubDeviceState::Op;
    });
}

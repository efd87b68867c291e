//! Simulated devices with a fixed process image (analog terminals, a safety PLC, an F/T
//! sensor, an encoder terminal): the device says what its outputs mean and what its inputs
//! are; this module moves them between the process-data SyncManagers its SII names and the
//! device, checks the master's SM configuration at SafeOp, and answers CoE from the device's
//! objects.

use super::esc::{al_code, AlState, Esc, EscConfig};
use super::mailbox::{Access, CoeServer, ObjectDictionary};
use super::segment::{DeviceApp, SubDevice};
use super::sii::{SiiImage, SyncManagerUsage};
use std::any::Any;

/// Largest process image one such device has, each way.
pub const MAX_PROCESS_DATA: usize = 64;

/// The device behind a fixed process image.
pub trait FixedProcessData: Send + 'static {
    /// The master's outputs, after every frame in Op.
    fn receive(&mut self, _outputs: &[u8]) {}
    /// The inputs the master reads next (SafeOp and Op).
    fn send(&self, _inputs: &mut [u8]) {}
    /// Outputs stopped being valid (the device left Op): go to the safe state.
    fn outputs_invalid(&mut self) {}
    /// Virtual time advanced: the device's own cycle.
    fn step(&mut self, _dt_ns: u64) {}
}

/// A process-data SyncManager: its index and the bytes the device's PDOs need.
#[derive(Debug, Clone, Copy)]
struct PdSm {
    index: u8,
    bytes: u16,
}

/// [`DeviceApp`] for a [`FixedProcessData`] device. `app_as::<T>()` on the segment gives the
/// device itself.
pub struct FixedPdoApp<T> {
    device: T,
    outputs: Option<PdSm>,
    inputs: Option<PdSm>,
    coe: Option<(ObjectDictionary, CoeServer)>,
    in_op: bool,
}

impl<T: FixedProcessData> FixedPdoApp<T> {
    fn exchange(&mut self, esc: &mut Esc) {
        let state = esc.al_state();
        let mut buffer = [0u8; MAX_PROCESS_DATA];
        if state == AlState::Op {
            if let Some(sm) = self.outputs {
                let n = usize::from(sm.bytes).min(MAX_PROCESS_DATA);
                esc.pdi_read(esc.sm(sm.index).start, &mut buffer[..n]);
                self.device.receive(&buffer[..n]);
            }
            self.in_op = true;
        } else if self.in_op {
            self.in_op = false;
            self.device.outputs_invalid();
        }
        if state >= AlState::SafeOp && state != AlState::Bootstrap {
            if let Some(sm) = self.inputs {
                let n = usize::from(sm.bytes).min(MAX_PROCESS_DATA);
                buffer[..n].fill(0);
                self.device.send(&mut buffer[..n]);
                esc.pdi_write(esc.sm(sm.index).start, &buffer[..n]);
            }
        }
    }
}

impl<T: FixedProcessData> DeviceApp for FixedPdoApp<T> {
    fn on_transition(&mut self, esc: &Esc, _from: AlState, to: AlState) -> Result<(), u16> {
        if to == AlState::SafeOp || to == AlState::Op {
            for (sm, code) in [(self.outputs, al_code::INVALID_OUTPUT_CONFIG), (self.inputs, al_code::INVALID_INPUT_CONFIG)] {
                if let Some(sm) = sm {
                    let regs = esc.sm(sm.index);
                    if !regs.enabled() || regs.length < sm.bytes {
                        return Err(code);
                    }
                }
            }
        }
        Ok(())
    }

    fn on_mailbox(&mut self, state: AlState, request: &[u8], response: &mut [u8]) -> usize {
        match &mut self.coe {
            Some((od, server)) => server.handle(od, state, request, response),
            None => 0,
        }
    }

    fn after_frame(&mut self, esc: &mut Esc) {
        self.exchange(esc);
    }

    fn step(&mut self, esc: &mut Esc, dt_ns: u64) {
        self.device.step(dt_ns);
        // What the step changed shows in the next frame.
        self.exchange(esc);
    }

    fn as_any(&self) -> &dyn Any {
        &self.device
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        &mut self.device
    }
}

/// A simulated device from its SII image (SMs and PDO sizes from there) and behaviour;
/// `objects`: its CoE object dictionary, for devices with a CoE mailbox.
pub fn fixed_pdo_device<T: FixedProcessData>(image: SiiImage, esc: EscConfig, clock_offset_ns: u64, device: T, objects: Option<ObjectDictionary>) -> Result<SubDevice, String> {
    let info = image.parse().map_err(|e| e.to_string())?;
    let name = info.name().unwrap_or("device").to_string();
    let sm_of = |usage: SyncManagerUsage, pdos: &[super::sii::Pdo]| -> Result<Option<PdSm>, String> {
        let bits: u32 = pdos.iter().map(|p| p.bit_len()).sum();
        if bits == 0 {
            return Ok(None);
        }
        let index = info.sync_managers.iter().position(|s| s.usage == usage).ok_or_else(|| format!("{name}: PDOs but no {usage:?} SyncManager in the SII"))?;
        let bytes = bits.div_ceil(8) as u16;
        if usize::from(bytes) > MAX_PROCESS_DATA {
            return Err(format!("{name}: {bytes} bytes of process data, at most {MAX_PROCESS_DATA} here"));
        }
        Ok(Some(PdSm { index: index as u8, bytes }))
    };
    let outputs = sm_of(SyncManagerUsage::ProcessDataOut, &info.rx_pdos)?;
    let inputs = sm_of(SyncManagerUsage::ProcessDataIn, &info.tx_pdos)?;
    let coe = match objects {
        Some(od) if info.mailbox.has_coe() => Some((od, CoeServer::new(false))),
        Some(_) => return Err(format!("{name}: CoE objects given, but the SII has no CoE mailbox")),
        None => None,
    };
    let app = FixedPdoApp { device, outputs, inputs, coe, in_op: false };
    Ok(SubDevice::new(Esc::new(esc, image, clock_offset_ns), Box::new(app)))
}

/// One PDO entry: (index, sub-index, bits).
pub type PdoEntrySpec = (u16, u8, u8);

/// The CoE objects a master reads to size the process data (ETG.1000.6 §5.6.7.4): the SM
/// assignment 0x1C12/0x1C13 (SM2 outputs, SM3 inputs) and the mappings 0x1600/0x1A00, fixed
/// (read-only). The mapped objects themselves are the device's business.
pub fn add_fixed_pdo_objects(od: &mut ObjectDictionary, rx: &[PdoEntrySpec], tx: &[PdoEntrySpec]) {
    use Access::ReadOnly;
    let mapping = |&(index, sub, bits): &PdoEntrySpec| ((u32::from(index) << 16) | (u32::from(sub) << 8) | u32::from(bits)).to_le_bytes();
    for (assign, pdo, entries, name) in [(0x1C12u16, 0x1600u16, rx, "RxPDO"), (0x1C13, 0x1A00, tx, "TxPDO")] {
        let maps: Vec<[u8; 4]> = entries.iter().map(mapping).collect();
        let subs: Vec<(&[u8], Access)> = maps.iter().map(|m| (&m[..], ReadOnly)).collect();
        od.add_record(pdo, &format!("{name} map 1"), ReadOnly, &subs);
        let pdo_bytes = pdo.to_le_bytes();
        let assigned: Vec<(&[u8], Access)> = if entries.is_empty() { Vec::new() } else { vec![(&pdo_bytes[..], ReadOnly)] };
        od.add_record(assign, &format!("{name} assign"), ReadOnly, &assigned);
    }
    od.add_record(0x1C00, "Sync manager type", ReadOnly, &[(&[1], ReadOnly), (&[2], ReadOnly), (&[3], ReadOnly), (&[4], ReadOnly)]);
}

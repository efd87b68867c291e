//! A device class a lab adds itself, without editing morc (issue 28): this file is all of it —
//! the device's wire profile, the master's class (`DeviceClass`), registered by identity in the
//! bus configuration (`BusConfig::classes`), and its simulated twin (`FixedProcessData`, with its
//! EEPROM image from `virtual_bus::fixed_pdo_image`) on the virtual segment — run through the
//! real master: its settings written over CoE in PreOp, its ports, its values, its fault, no
//! allocation in steady state, and the same device without the registration running as a
//! generic device.
//! The device: a two-channel thermocouple terminal, "LAB-TC2", of a lab's own vendor id.
//! Line: 0 coupler, 1 drive, 2 DO8, 3 DI8, 4 LAB-TC2.

mod bus_rig;

use bus_rig::Rig;
use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::devices::{ClassPorts, DeviceClass, DeviceName, LabClass, SdoValue, SdoWrite};
use morc_ecat::master::Link;
use morc_ecat::transport::{lock, SharedSegment};
use morc_ecat::virtual_bus::{fixed_pdo_image, shared_sim_segment, SimSegmentConfig};
use morc_ecat_sim::{add_fixed_pdo_objects, fixed_pdo_device, Access, EscConfig, FixedProcessData, ObjectDictionary};
use morc_kernel::{Base, PortInfo, Value, ValueType};
use morc_test_support::alloc::{allocates_nothing, CountingAllocator};
use std::sync::Arc;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The wire profile: identity and the one TxPDO, as the terminal's manual would give them.
mod wire {
    pub const VENDOR_ID: u32 = 0x0000_0AB0;
    pub const PRODUCT: u32 = 0x0000_7C02;
    /// TxPDO 0x1A00: channel 1 and 2 temperature (INTEGER16, 0.1 °C), status (bit k: channel k+1 open).
    pub const TX: [(u16, u8, u8); 3] = [(0x6000, 0x11, 16), (0x6010, 0x11, 16), (0x6020, 0x01, 8)];
    pub const INPUT_BYTES: usize = 5;
    pub const DECI_DEGREES: f64 = 0.1;
    /// Setting 0x8000:19, the thermocouple type (UNSIGNED16): 0 = type K, 1 = J, 2 = L…
    pub const TC_TYPE: (u16, u8) = (0x8000, 0x19);
    pub const TYPE_J: u16 = 1;
}

/// The master's side: temperatures in °C on `tc<p>_1`, `tc<p>_2`; an open thermocouple faults.
struct Thermocouples {
    name: DeviceName,
    celsius: [f64; 2],
    open: u8,
}

impl DeviceClass for Thermocouples {
    fn name(&self) -> &DeviceName {
        &self.name
    }
    fn kind(&self) -> &'static str {
        "tc"
    }
    fn ports(&self) -> ClassPorts {
        let p = self.name.position;
        let port = |k: usize| PortInfo::new(&format!("tc{p}_{k}"), ValueType::Real).unit("°C").doc(&format!("{}: thermocouple {k} (°C)", self.name));
        ClassPorts { outputs: vec![port(1), port(2)], inputs: Vec::new() }
    }
    fn read_inputs(&mut self, inputs: &[u8]) {
        for (k, c) in self.celsius.iter_mut().enumerate() {
            *c = f64::from(i16::from_le_bytes([inputs[2 * k], inputs[2 * k + 1]])) * wire::DECI_DEGREES;
        }
        self.open = inputs[4];
    }
    fn write_measurements(&self, outputs: &mut [Value]) {
        for (o, c) in outputs.iter_mut().zip(self.celsius) {
            *o = Value::Real(c);
        }
    }
    fn write_outputs(&mut self, _outputs: &mut [u8]) {}
    fn fault(&self) -> Option<String> {
        (self.open != 0).then(|| format!("{}: thermocouple {} open: check its wiring", self.name, self.open.trailing_zeros() + 1))
    }
}

/// The registration: every LAB-TC2 on the line runs as `Thermocouples`, set to type J.
fn lab_class() -> LabClass {
    LabClass {
        setup: vec![SdoWrite::new(wire::TC_TYPE.0, wire::TC_TYPE.1, SdoValue::U16(wire::TYPE_J))],
        name: "lab thermocouples",
        identity: (wire::VENDOR_ID, wire::PRODUCT),
        build: Arc::new(|name, inputs, outputs| {
            if (inputs, outputs) != (wire::INPUT_BYTES, 0) {
                return Err(format!("maps {inputs} input and {outputs} output bytes, the terminal has {} and 0", wire::INPUT_BYTES));
            }
            Ok(Box::new(Thermocouples { name, celsius: [0.0; 2], open: 0 }) as Box<dyn DeviceClass>)
        }),
    }
}

/// The simulated twin: what the terminal sends.
#[derive(Default)]
struct SimThermocouples {
    celsius: [f64; 2],
    open: u8,
}

impl FixedProcessData for SimThermocouples {
    fn send(&self, inputs: &mut [u8]) {
        for (k, c) in self.celsius.iter().enumerate() {
            inputs[2 * k..2 * k + 2].copy_from_slice(&((c / wire::DECI_DEGREES).round() as i16).to_le_bytes());
        }
        inputs[4] = self.open;
    }
}

/// The default segment (coupler, a drive, DO8, DI8) with the lab's terminal last: with its CoE
/// mailbox (identity, PDO assignment, the type setting), or without one.
fn segment(coe: bool) -> SharedSegment {
    let seg = shared_sim_segment(&SimSegmentConfig { drives: 1, ..Default::default() }).unwrap();
    let image = fixed_pdo_image(wire::VENDOR_ID, wire::PRODUCT, "LAB-TC2", "Temperature", &[], &wire::TX, coe).unwrap();
    let objects = coe.then(|| {
        let mut od = ObjectDictionary::new();
        od.add_identity(&image.parse().unwrap().identity);
        add_fixed_pdo_objects(&mut od, &[], &wire::TX);
        let settings = vec![(&[0u8, 0][..], Access::ReadWrite); usize::from(wire::TC_TYPE.1)];
        od.add_record(wire::TC_TYPE.0, "TC settings", Access::ReadOnly, &settings);
        od
    });
    lock(&seg).push(fixed_pdo_device(image, EscConfig::et1200(), 9_000, SimThermocouples::default(), objects).unwrap());
    seg
}

fn rig(config: BusConfig) -> Rig {
    Rig::open(segment(true), config)
}

fn twin(rig: &Rig, f: impl FnOnce(&mut SimThermocouples)) {
    f(lock(&rig.seg).device_mut(4).and_then(|d| d.app_as_mut::<SimThermocouples>()).expect("the terminal at 4"));
}

fn real(rig: &Rig, port: &str) -> f64 {
    match rig.output(port) {
        Value::Real(x) => *x,
        v => panic!("{port} = {v:?}"),
    }
}

#[test]
fn a_lab_class_registered_by_identity_runs_its_device() {
    let mut rig = rig(BusConfig { classes: vec![lab_class()], ..Default::default() });
    assert_eq!(rig.base.class_of(4), Some("tc"));
    // Its setting went down in PreOp: the terminal reads type J back.
    assert_eq!(rig.base.bus_mut().sdo_read_u16(4, wire::TC_TYPE.0, wire::TC_TYPE.1).unwrap(), wire::TYPE_J);
    let port = rig.base.info().outputs.iter().find(|p| p.name == "tc4_2").expect("tc4_2");
    assert_eq!((port.unit.as_str(), port.doc.as_str()), ("°C", "device 4 'LAB-TC2': thermocouple 2 (°C)"));
    twin(&rig, |t| t.celsius = [21.5, -40.2]);
    rig.run(5, true);
    assert_eq!((real(&rig, "tc4_1"), real(&rig, "tc4_2")), (21.5, -40.2));
    // Steady state: nothing allocated by the class in 1000 cycles.
    allocates_nothing("1000 cycles of the lab's class", || rig.run(1000, true));
    // An open thermocouple: the bus faults naming the device and the channel.
    twin(&rig, |t| t.open = 0b10);
    let (_, fault) = rig.until_fault(10);
    assert!(fault.contains("device 4 'LAB-TC2': thermocouple 2 open: check its wiring"), "{fault}");
}

#[test]
fn without_its_class_the_device_runs_as_a_generic_device() {
    let rig = rig(BusConfig::default());
    assert_eq!(rig.base.class_of(4), Some("generic"));
    let (outputs, _) = rig.base.ports_of(4);
    assert_eq!(outputs.len(), 3, "one port per PDO entry: {outputs:?}");
}

fn refused(seg: SharedSegment, class: LabClass) -> String {
    BusBase::open(Link::Simulated(seg), BusConfig { classes: vec![class], ..Default::default() }).err().expect("refused").to_string()
}

#[test]
fn a_lab_class_that_refuses_the_mapping_fails_the_bring_up_naming_it() {
    let e = refused(segment(true), LabClass { build: Arc::new(|_, _, _| Err("wants 8 input bytes".into())), ..lab_class() });
    assert!(e.contains("device 4 'LAB-TC2' (lab thermocouples): wants 8 input bytes"), "{e}");
}

#[test]
fn a_setting_the_device_refuses_fails_the_bring_up_naming_the_object() {
    // An object the terminal does not have, and a terminal without a mailbox.
    let e = refused(segment(true), LabClass { setup: vec![SdoWrite::new(0x8010, 0x19, SdoValue::U16(1))], ..lab_class() });
    assert!(e.contains("device 4 'LAB-TC2'") && e.contains("0x8010:19"), "{e}");
    let e = refused(segment(false), lab_class());
    assert!(e.contains("device 4 'LAB-TC2'") && e.contains("0x8000:19"), "{e}");
}

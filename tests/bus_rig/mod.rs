//! A bus base on a simulated segment, ticked by hand the way the engine does (sense, then
//! actuate with commands or hold), for the bus tests.
#![allow(dead_code)]

use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::devices::cia402::PowerState;
use morc_ecat::master::Link;
use morc_ecat::transport::SharedSegment;
use morc_ecat::virtual_bus::{shared_sim_segment, SimSegmentConfig};
use morc_kernel::Base;
use morc_kernel::Step;
use morc_kernel::Value;

pub struct Rig {
    pub base: BusBase,
    pub seg: SharedSegment,
    pub outputs: Vec<Value>,
    pub inputs: Vec<Value>,
    pub tick: u64,
}

impl Rig {
    pub fn new(segment: &SimSegmentConfig) -> Rig {
        Rig::open(shared_sim_segment(segment).unwrap(), BusConfig::default())
    }

    /// The bus base on `seg`, configured by `config`.
    pub fn open(seg: SharedSegment, config: BusConfig) -> Rig {
        let base = BusBase::open(Link::Simulated(seg.clone()), config).unwrap_or_else(|e| panic!("bus base: {e}"));
        let outputs = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let inputs = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
        Rig { base, seg, outputs, inputs, tick: 0 }
    }

    pub fn output(&self, name: &str) -> &Value {
        let i = self.base.info().outputs.iter().position(|p| p.name == name).unwrap_or_else(|| panic!("no output port {name}"));
        &self.outputs[i]
    }

    pub fn input_mut(&mut self, name: &str) -> &mut Value {
        let i = self.base.info().inputs.iter().position(|p| p.name == name).unwrap_or_else(|| panic!("no input port {name}"));
        &mut self.inputs[i]
    }

    /// Runs `f` on the first simulated device of type `T`, through the base's handle.
    pub fn handle_sim<T: 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.base.handle().with_sim_device(std::any::type_name::<T>(), f).unwrap()
    }

    /// One tick with the commands set (or hold).
    pub fn tick(&mut self, hold: bool) -> Step {
        let sensed = self.base.sense(self.tick, &mut self.outputs);
        let commands = if hold { None } else { Some(morc_kernel::Commands::all(&self.inputs[..])) };
        let acted = self.base.actuate(self.tick, commands);
        self.tick += 1;
        if sensed != Step::Continue {
            sensed
        } else {
            acted
        }
    }

    /// `n` ticks that must all go well.
    pub fn run(&mut self, n: u32, hold: bool) {
        for _ in 0..n {
            assert_eq!(self.tick(hold), Step::Continue, "{:?}", self.base.fault());
        }
    }

    /// Ticks until a fault; returns (cycles it took, message).
    pub fn until_fault(&mut self, max: u32) -> (u32, String) {
        for n in 1..=max {
            if let Step::Fault(m) = self.tick(false) {
                return (n, m);
            }
        }
        panic!("no fault within {max} cycles");
    }

    /// Resets faults and ticks until the drives are enabled again, without a fault.
    pub fn recover(&mut self) -> u32 {
        self.base.reset_faults();
        for n in 1..=2000 {
            assert_eq!(self.tick(true), Step::Continue, "after reset: {:?}", self.base.fault());
            if self.output("enabled") == &Value::Boolean(true) {
                return n;
            }
        }
        panic!("drives not enabled again after reset: {:?}", self.drive_states());
    }

    pub fn drive_states(&self) -> Vec<PowerState> {
        (0..self.base.drive_count()).map(|i| self.base.drive(i).unwrap().state()).collect()
    }
}

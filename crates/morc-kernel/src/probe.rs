//! A probe: keeps every sample of one signal in memory (preallocated) and
//! hands them to the program in Assembly Data when the assembly ends. For
//! tests and quick looks; long runs are recorded to HDF5 instead.

use crate::component::*;
use crate::value::{Value, ValueType};

pub struct Probe {
    info: ComponentInfo,
    width: usize,
    samples: Vec<f64>,
    capacity: usize,
    dropped: u64,
}

impl Probe {
    pub fn new() -> Self {
        Probe {
            info: ComponentInfo::new("probe", "keeps every sample of its input u in memory; results: name.u (all samples, flattened), name.samples, name.dropped")
                .param(ParamInfo::new("n", Value::Integer(1)).doc("signal width"))
                .param(ParamInfo::new("capacity", Value::Integer(100_000)).doc("samples kept at most; later ones are counted as dropped"))
                .input(PortInfo::new("u", ValueType::Real).required()),
            width: 1,
            samples: Vec::new(),
            capacity: 0,
            dropped: 0,
        }
    }
}

impl Default for Probe {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Probe {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        self.width = super::blocks::width(&self.info)?;
        self.info.inputs[0].ty = super::blocks::width_type(self.width as i64);
        let capacity = self.info.integer("capacity");
        if !(1..=100_000_000).contains(&capacity) {
            return Err(format!("capacity must be between 1 and 10^8 samples, got {capacity}"));
        }
        self.capacity = capacity as usize;
        Ok(())
    }
    fn initialize(&mut self, _ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        self.samples = Vec::with_capacity(self.capacity * self.width);
        self.dropped = 0;
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], _outputs: &mut [Value]) -> Step {
        if self.samples.len() + self.width <= self.capacity * self.width {
            self.samples.extend_from_slice(inputs[0].as_slice());
        } else {
            self.dropped += 1;
        }
        Step::Continue
    }
    fn terminate(&mut self, results: &mut AssemblyResults) {
        results.set("samples", Value::Integer((self.samples.len() / self.width) as i64));
        results.set("dropped", Value::Integer(self.dropped as i64));
        results.set("u", Value::Vector(std::mem::take(&mut self.samples)));
    }
}

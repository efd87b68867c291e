//! Static arithmetic blocks.

use super::{width, width_type};
use crate::kernel::component::*;
use crate::kernel::value::{Value, ValueType};

/// y = k·u, element-wise.
pub struct Gain {
    info: ComponentInfo,
    k: Vec<f64>,
}

impl Gain {
    pub fn new() -> Self {
        Gain {
            info: ComponentInfo::new("gain", "y = k·u (element-wise for vectors)")
                .param(ParamInfo::new("n", Value::Integer(1)).doc("signal width"))
                .param(ParamInfo::new("k", Value::Real(1.0)).doc("gain: a scalar, or one per element"))
                .input(PortInfo::new("u", ValueType::Real).required())
                .output(PortInfo::new("y", ValueType::Real)),
            k: Vec::new(),
        }
    }
}

impl Default for Gain {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Gain {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }
    fn info_mut(&mut self) -> &mut ComponentInfo {
        &mut self.info
    }
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        self.k = self.info.vector("k", n).map_err(|e| format!("parameter k: {e}"))?;
        let ty = width_type(n as i64);
        self.info.inputs[0].ty = ty;
        self.info.outputs[0].ty = ty;
        Ok(())
    }
    fn initialize(&mut self, _ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let u = inputs[0].as_slice();
        for ((y, u), k) in outputs[0].as_mut_slice().iter_mut().zip(u).zip(&self.k) {
            *y = k * u;
        }
        Step::Continue
    }
}

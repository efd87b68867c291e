//! Static arithmetic blocks.

use super::{per_element, set_port_types, width, width_param, width_type};
use crate::component::*;
use crate::value::{Value, ValueType};

/// Most inputs a sum or product block may have.
const MAX_INPUTS: usize = 64;

/// y = k·u, element-wise.
pub struct Gain {
    info: ComponentInfo,
    k: Vec<f64>,
}

impl Gain {
    /// Kind name in the registry.
    pub const KIND: &'static str = "gain";
    /// Help text: the formula.
    pub const DOC: &'static str = "Gain: y = k·u element-wise (y has u's unit times k's).";

    /// A gain with default parameters (k = 1).
    pub fn new() -> Self {
        Gain {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
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
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        self.k = per_element(&self.info, "k", n)?;
        set_port_types(&mut self.info, n);
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

/// Input ports u1..um of width n.
fn numbered_inputs(m: usize, n: usize) -> Vec<PortInfo> {
    (1..=m).map(|i| PortInfo::new(&format!("u{i}"), width_type(n as i64)).required()).collect()
}

/// y = ±u1 ±u2 … ±um, element-wise, signs from a string such as "+-+".
pub struct Sum {
    info: ComponentInfo,
    /// +1.0 or −1.0 per input.
    signs: Vec<f64>,
}

impl Sum {
    /// Kind name in the registry.
    pub const KIND: &'static str = "sum";
    /// Help text: the formula.
    pub const DOC: &'static str = "Sum: y = ±u1 ±u2 … ±um element-wise, one sign per input from `signs` (\"+-\" gives y = u1 − u2).";

    /// A sum with default parameters.
    pub fn new() -> Self {
        Sum {
            info: ComponentInfo::new(Self::KIND, Self::DOC)
                .param(width_param())
                .param(ParamInfo::new("signs", Value::String("++".into())).doc("one '+' or '-' per input u1..um, e.g. \"+-\""))
                .output(PortInfo::new("y", ValueType::Real)),
            signs: Vec::new(),
        }
        .with_inputs(2, 1)
    }

    fn with_inputs(mut self, m: usize, n: usize) -> Self {
        self.info.inputs = numbered_inputs(m, n);
        self
    }
}

impl Default for Sum {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Sum {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        let text = self.info.param_value("signs").map(Value::str).unwrap_or("");
        let signs = text
            .chars()
            .map(|c| match c {
                '+' => Ok(1.0),
                '-' => Ok(-1.0),
                _ => Err(()),
            })
            .collect::<Result<Vec<f64>, ()>>();
        let signs = match signs {
            Ok(s) if (1..=MAX_INPUTS).contains(&s.len()) => s,
            _ => return Err(format!("parameter signs of sum must be 1 to {MAX_INPUTS} characters '+' or '-' (one per input), got {text:?}")),
        };
        self.info.inputs = numbered_inputs(signs.len(), n);
        self.signs = signs;
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, _ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let y = outputs[0].as_mut_slice();
        y.fill(0.0);
        for (u, sign) in inputs.iter().zip(&self.signs) {
            for (y, u) in y.iter_mut().zip(u.as_slice()) {
                *y += sign * u;
            }
        }
        Step::Continue
    }
}

/// y = u1·u2·…·um, element-wise.
pub struct Product {
    info: ComponentInfo,
}

impl Product {
    /// Kind name in the registry.
    pub const KIND: &'static str = "product";
    /// Help text: the formula.
    pub const DOC: &'static str = "Product: y = u1·u2·…·um element-wise, m = `inputs` (y's unit is the product of the inputs').";

    /// A product with default parameters.
    pub fn new() -> Self {
        let mut info = ComponentInfo::new(Self::KIND, Self::DOC)
            .param(width_param())
            .param(ParamInfo::new("inputs", Value::Integer(2)).doc("number of inputs m (u1..um)"))
            .output(PortInfo::new("y", ValueType::Real));
        info.inputs = numbered_inputs(2, 1);
        Product { info }
    }
}

impl Default for Product {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Product {
    crate::component_info!(info);
    fn configure(&mut self) -> Result<(), String> {
        let n = width(&self.info)?;
        let m = self.info.integer("inputs");
        if !(1..=MAX_INPUTS as i64).contains(&m) {
            return Err(format!("parameter inputs of product must be between 1 and {MAX_INPUTS}, got {m}"));
        }
        self.info.inputs = numbered_inputs(m as usize, n);
        set_port_types(&mut self.info, n);
        Ok(())
    }
    fn initialize(&mut self, _ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let y = outputs[0].as_mut_slice();
        y.fill(1.0);
        for u in inputs {
            for (y, u) in y.iter_mut().zip(u.as_slice()) {
                *y *= u;
            }
        }
        Step::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{error, simulate, siso};
    use crate::value::Value;

    fn r(x: f64) -> Value {
        Value::Real(x)
    }
    fn v(x: &[f64]) -> Value {
        Value::Vector(x.to_vec())
    }

    #[test]
    fn gain_scales_each_element() {
        assert_eq!(siso("gain", &[("k", &2.5)], 1e-3, &[1.0, -2.0]), [2.5, -5.0]);
        let out = simulate("gain", &[("n", &3.0), ("k", &[1.0, 2.0, 3.0])], 1e-3, &[vec![v(&[1.0, 1.0, -1.0])]]);
        assert_eq!(out[0][0], v(&[1.0, 2.0, -3.0]));
        let e = error("gain", &[("n", &3.0), ("k", &[1.0, 2.0])], 1e-3);
        assert!(e.contains("parameter k of gain must be a scalar or 3 values"), "{e}");
    }

    #[test]
    fn sum_applies_signs() {
        let out = simulate("sum", &[("signs", &"+-+")], 1e-3, &[vec![r(1.0), r(2.0), r(4.0)]]);
        assert_eq!(out[0][0], r(3.0));
        let out = simulate("sum", &[("signs", &"--"), ("n", &2.0)], 1e-3, &[vec![v(&[1.0, 2.0]), v(&[10.0, 20.0])]]);
        assert_eq!(out[0][0], v(&[-11.0, -22.0]));
        // The default adds two inputs.
        assert_eq!(simulate("sum", &[], 1e-3, &[vec![r(1.5), r(2.0)]])[0][0], r(3.5));
    }

    #[test]
    fn sum_rejects_bad_signs() {
        for bad in ["", "+*", "+ -"] {
            let e = error("sum", &[("signs", &bad)], 1e-3);
            assert!(e.starts_with("parameter signs of sum must be"), "{e}");
        }
    }

    #[test]
    fn sum_ports_follow_signs() {
        let h = super::super::harness::Harness::new("sum", &[("signs", &"+-+-"), ("n", &2.0)], 1e-3).unwrap();
        let names: Vec<&str> = h.block.info().inputs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["u1", "u2", "u3", "u4"]);
        assert!(h.block.info().inputs.iter().all(|p| p.ty == crate::value::ValueType::Vector(2)));
    }

    #[test]
    fn product_multiplies_elementwise() {
        let out = simulate("product", &[("inputs", &3.0)], 1e-3, &[vec![r(2.0), r(-3.0), r(0.5)]]);
        assert_eq!(out[0][0], r(-3.0));
        let out = simulate("product", &[("n", &2.0)], 1e-3, &[vec![v(&[2.0, 3.0]), v(&[4.0, 5.0])]]);
        assert_eq!(out[0][0], v(&[8.0, 15.0]));
        assert!(error("product", &[("inputs", &0.0)], 1e-3).contains("between 1 and 64"));
    }
}

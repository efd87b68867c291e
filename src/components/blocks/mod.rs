//! The first native control blocks: sources, arithmetic, nonlinearities,
//! dynamics and filters. Every block works on a signal of width `n`
//! (parameter `n`, default 1): a real port when n = 1, a vector port otherwise.

mod math;

use super::Kind;

pub use math::Gain;

pub static KINDS: &[Kind] = &[
    Kind { name: "gain", doc: "y = k·u (element-wise for vectors)", make: || Box::new(Gain::new()) },
];

use crate::kernel::value::ValueType;

/// The port type of a block signal of width n.
pub(crate) fn width_type(n: i64) -> ValueType {
    if n == 1 {
        ValueType::Real
    } else {
        ValueType::Vector(n as usize)
    }
}

/// Reads and checks the width parameter `n`.
pub(crate) fn width(info: &crate::kernel::component::ComponentInfo) -> Result<usize, String> {
    let n = info.integer("n");
    if !(1..=4096).contains(&n) {
        return Err(format!("parameter n (signal width) must be between 1 and 4096, got {n}"));
    }
    Ok(n as usize)
}

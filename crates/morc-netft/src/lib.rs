//! ATI Net F/T force/torque sensors over UDP: the sensor's RDT protocol ([`rdt`]), the `netft`
//! component that receives its stream off the real-time thread and hands each step the mean of
//! the records since the last one ([`NetFt`]), and a simulated sensor for tests and programs
//! without hardware ([`SimNetFt`]).

#![warn(missing_docs)]

mod component;
pub mod rdt;
mod sim;
pub mod slot;
pub mod stream;

pub use component::{NetFt, DOC, KIND};
pub use sim::{SimConfig, SimLoad, SimNetFt};

use morc_kernel::registry::{KindRegistry, NATIVE};

/// Registers the `netft` kind into `registry`.
pub fn register(registry: &mut KindRegistry) -> Result<(), String> {
    registry.register_fn(KIND, DOC, NATIVE, || Box::new(NetFt::new()))
}

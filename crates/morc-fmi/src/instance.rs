//! What morc asks of one FMU instance, whatever its FMI version: the FMI 2
//! and FMI 3 bindings (`fmi2.rs`, `fmi3.rs`) implement it, the component and
//! the model-exchange solver use it.
//!
//! Threading: the standard does not require an FMU to be thread-safe, only
//! that calls into one instance never overlap ("FMI functions of one instance
//! do not need to be thread-safe … the multi-threaded target simulator … must
//! guarantee that there are no race conditions", FMI 3.0 §2.2.1, and the same
//! in FMI 2.0 §2.1). An instance is owned by one component, which is owned by
//! one task at a time and handed between the preparing thread, the Coordinator
//! and an Updater through channels, so its calls are serialised and each
//! sees the previous one's effects: instances are `Send`, and every call
//! happens on the thread that steps the component, without a hand-off.

use std::sync::Arc;

use super::description::{FmiVersion, ModelDescription};
use super::values::Group;
use super::Fmu;

/// Event iterations before giving up on an FMU that never settles.
pub const MAX_EVENT_ITERATIONS: usize = 1000;

/// Co-simulation or model exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    CoSimulation,
    ModelExchange,
}

/// One FMU instance. Errors name the FMU, the call and what the FMU logged.
pub trait Instance: Send {
    /// Sets the values of one type group.
    fn set(&mut self, group: &Group) -> Result<(), String>;
    /// Reads the values of one type group.
    fn get(&mut self, group: &mut Group) -> Result<(), String>;
    /// Enters initialisation mode with the experiment starting at `start`.
    fn enter_initialization_mode(&mut self, start: f64) -> Result<(), String>;
    fn exit_initialization_mode(&mut self) -> Result<(), String>;
    /// Co-simulation: one communication step from `t` to `t + h`; true when
    /// the FMU asks to end the simulation.
    fn do_step(&mut self, t: f64, h: f64) -> Result<bool, String>;
    fn terminate(&mut self) -> Result<(), String>;

    // Model exchange.
    fn enter_event_mode(&mut self) -> Result<(), String>;
    /// Updates discrete states until the FMU needs no more iterations; true
    /// when it asks to end the simulation.
    fn settle_discrete_states(&mut self) -> Result<bool, String>;
    fn enter_continuous_time_mode(&mut self) -> Result<(), String>;
    /// Returns (enter event mode, terminate simulation).
    fn completed_integrator_step(&mut self) -> Result<(bool, bool), String>;
    fn set_time(&mut self, t: f64) -> Result<(), String>;
    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), String>;
    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), String>;
    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), String>;
}

/// Loads the FMU's binary for `interface` and instantiates it.
pub fn instantiate(fmu: &Arc<Fmu>, interface: Interface, instance_name: &str, logging: bool) -> Result<Box<dyn Instance>, String> {
    let md: &ModelDescription = &fmu.description;
    let identifier = match interface {
        Interface::CoSimulation => md.co_simulation.as_deref(),
        Interface::ModelExchange => md.model_exchange.as_deref(),
    };
    let binary = fmu.binary(identifier.unwrap_or_default())?;
    Ok(match md.version {
        FmiVersion::V2 => Box::new(super::fmi2::Instance::new(fmu, &binary, interface, instance_name, logging)?),
        FmiVersion::V3 => Box::new(super::fmi3::Instance::new(fmu, &binary, interface, instance_name, logging)?),
    })
}

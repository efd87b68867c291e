//! The continuous-time view of a component whose dynamics are an ODE
//! x' = f(x, u) with outputs y = x: what lets a block be exported for FMI
//! model exchange, where the importer's solver integrates it.

use super::value::Value;

/// A component's dynamics as an ODE, for model exchange (see [`crate::Component::ode`]).
pub trait Ode {
    /// Number of continuous states (after `configure`).
    fn state_count(&self) -> usize;
    /// Which output ports carry the states, in state order (a port of width
    /// n carries n consecutive states).
    fn state_outputs(&self) -> &[usize];
    /// The current state (after `initialize`: the initial state).
    fn states(&self, x: &mut [f64]);
    /// Sets the state (the importer's solver moved it).
    fn set_states(&mut self, x: &[f64]);
    /// x' at the current state for `inputs`.
    fn derivatives(&self, inputs: &[Value], dx: &mut [f64]);
}

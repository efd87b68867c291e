//! The Engine's base: what cycles every base period whether or not an
//! assembly runs — the bus and the Robot, the only component that talks to
//! the drives. Assemblies connect to its ports by its name ("robot").

use super::component::{ComponentInfo, Step};
use super::value::Value;
use std::any::Any;
use std::sync::Arc;

/// What other threads (the REPL, a program) use to talk to a base while the engine owns it,
/// e.g. the bus's fault reset; the caller downcasts it to the base's own handle type.
pub type BaseHandle = Arc<dyn Any + Send + Sync>;

/// What the engine cycles every base period: the robot on its bus, or a simulated stand-in.
pub trait Base: Send {
    /// How assemblies refer to it.
    fn name(&self) -> &str {
        "robot"
    }
    /// Outputs are measurements (read by assemblies), inputs are commands.
    fn info(&self) -> &ComponentInfo;
    /// Start of a tick: exchange with the bus and write measurements.
    fn sense(&mut self, tick: u64, outputs: &mut [Value]) -> Step;
    /// End of a tick: apply the assembly's commands, or hold position when
    /// there is none (`None`: between assemblies, after a fault). Inputs
    /// the assembly does not drive hold too ([`Commands::get`] is `None`).
    fn actuate(&mut self, tick: u64, commands: Option<Commands>) -> Step;
    /// End of a tick after a fault or a cancellation: bring the robot to a standstill (a
    /// quick stop: decelerate, then hold where it stopped). The engine calls it every tick
    /// until [`Base::is_still`], before the run's result is handed back, so the next command
    /// starts from a robot at rest. By default the base holds as between assemblies.
    fn stop(&mut self, tick: u64) -> Step {
        self.actuate(tick, None)
    }
    /// Whether the robot stands still (after [`Base::stop`]). Bases whose hold is immediate
    /// are always still.
    fn is_still(&self) -> bool {
        true
    }
    /// A handle for other threads, taken before the engine moves the base to its thread.
    fn handle(&self) -> Option<BaseHandle> {
        None
    }
    /// Base periods by which a measurement lags the commands, beyond the one period a plant
    /// stepped directly takes (a command actuated at tick n shows in `sense` at tick
    /// n + 1 + latency). Known to the base, not measured: 0 for a simulated robot stepped
    /// directly; a bus sends commands at the next exchange and reads what the devices latched
    /// before applying them. Components that compare a measurement with its reference (the
    /// robot's `monitor`) delay the reference by as much ([`crate::InitContext::base_latency`]).
    fn latency(&self) -> u32 {
        0
    }
}

/// The assembly's commands to the base for one tick.
#[derive(Clone, Copy)]
pub struct Commands<'a> {
    values: &'a [Value],
    /// Which inputs are driven; `None`: all of them.
    driven: Option<&'a [bool]>,
}

impl<'a> Commands<'a> {
    /// The commands `values`, input `i` driven when `driven[i]`.
    pub fn new(values: &'a [Value], driven: &'a [bool]) -> Self {
        Commands { values, driven: Some(driven) }
    }
    /// Every input driven with `values`.
    pub fn all(values: &'a [Value]) -> Self {
        Commands { values, driven: None }
    }
    /// The command on input `port`, or `None` when the assembly leaves it alone.
    #[inline]
    pub fn get(&self, port: usize) -> Option<&'a Value> {
        match self.driven {
            Some(d) if !d.get(port).copied().unwrap_or(false) => None,
            _ => self.values.get(port),
        }
    }
}

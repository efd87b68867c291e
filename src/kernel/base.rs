//! The Engine's base: what cycles every base period whether or not an
//! assembly runs — the bus and the Robot, the only component that talks to
//! the drives. Assemblies connect to its ports by its name ("robot").

use super::component::{ComponentInfo, Step};
use super::value::Value;

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
    /// there is none (`None`: between assemblies, after a fault).
    fn actuate(&mut self, tick: u64, commands: Option<&[Value]>) -> Step;
}

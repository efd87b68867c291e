//! The real-time kernel of morc: values, components, assemblies, the clocked engine, real-time
//! setup, and the native control blocks with the registry of component kinds.

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

mod assembly;
mod base;
pub mod blocks;
mod clock;
mod component;
mod data;
mod diagnostics;
mod engine;
mod error;
mod ideal_axes;
mod interpolate;
mod multirate;
pub mod names;
mod ode;
mod probe;
pub mod registry;
pub mod rt;
mod snapshot;
mod stats;
mod step_thread;
mod task;
mod value;

pub use assembly::{
    plan as plan_assembly, AssemblySpec, AssemblyView, Attach, Attachment, AttachmentSpec, ComponentSpec, ComponentView, ConnectionSpec, Factory, Origin, OverrunPolicy, Plan, PlanInput, PlanSource,
    PlannedComponent, SignalInfo,
};
pub use base::{standstill_speed, Base, Commands, Standstill};
pub use clock::{monotonic_ns, sleep_until, thread_cpu_ns, ClockKind};
pub use component::{AssemblyResults, Component, ComponentInfo, InitContext, ParamInfo, PortInfo, Step, StepContext};
pub use data::AssemblyData;
pub use diagnostics::{BusDiagnostics, BusStatus, DeviceStatus};
pub use engine::{cancel_all_runs, runs_faulted, runs_in_progress, Canceller, Engine, EngineConfig, EngineStats, EngineSummary, Outcome, RunHandle, RunResult, RunTiming, TimingCell};
pub use error::{AssemblyError, ComponentRef, EngineError, Fault, FaultSource};
pub use ideal_axes::IdealAxes;
pub use multirate::{ComponentReport, ComponentTiming, RunningAssembly};
pub use ode::Ode;
pub use snapshot::{BaseSnapshot, RobotState, Snapshot, SnapshotPort, StateFacts};
pub use stats::{human_ns, Histogram, Summary};
pub use step_thread::{SlackWork, StepThread};
pub use value::{Value, ValueType, STRING_PORT_CAPACITY};

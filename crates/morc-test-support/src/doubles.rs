//! Test doubles for the kernel tests: components from closures, and a base
//! that records what the Engine did with it. Never used by `morc` itself.

use std::sync::{Arc, Mutex};

use morc_kernel::Factory;
use morc_kernel::*;
use morc_kernel::{Base, Commands};
use morc_kernel::{Value, ValueType};

type StepFn = Box<dyn FnMut(&StepContext, &[Value], &mut [Value]) -> Step + Send>;

/// A component whose step is a closure; ports are reals unless given.
pub struct FnComponent {
    info: ComponentInfo,
    step: StepFn,
}

impl Component for FnComponent {
    morc_kernel::component_info!(info);
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        (self.step)(ctx, inputs, outputs)
    }
}

/// A factory for a closure component with real inputs and outputs.
pub fn func<F>(inputs: &[&str], outputs: &[&str], make: F) -> Factory
where
    F: Fn() -> StepFn + Send + Sync + 'static,
{
    let inputs: Vec<String> = inputs.iter().map(|s| s.to_string()).collect();
    let outputs: Vec<String> = outputs.iter().map(|s| s.to_string()).collect();
    Arc::new(move || {
        let mut info = ComponentInfo::new("test", "test component");
        for i in &inputs {
            info = info.input(PortInfo::new(i, ValueType::Real));
        }
        for o in &outputs {
            info = info.output(PortInfo::new(o, ValueType::Real));
        }
        Ok(Box::new(FnComponent { info, step: make() }) as Box<dyn Component>)
    })
}

/// Arms the all-threads allocation counter ([`crate::alloc::count_all_threads`]) at its step
/// `from` and disarms it at step `to`: an assembly's steady state, measured from inside it.
/// Armed, it makes the one [`crate::alloc::control_allocation`] that
/// [`crate::alloc::assert_allocated_nothing`] wants to see counted.
struct AllocationWindow {
    info: ComponentInfo,
    from: u64,
    to: u64,
}

impl Component for AllocationWindow {
    morc_kernel::component_info!(info);
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, ctx: &StepContext, _: &[Value], _: &mut [Value]) -> Step {
        if ctx.step == self.from {
            crate::alloc::count_all_threads(true);
            crate::alloc::control_allocation();
        }
        if ctx.step == self.to {
            crate::alloc::count_all_threads(false);
        }
        Step::Continue
    }
}

/// A factory for a component that counts every thread's allocations from its step `from` to its
/// step `to` (add it at the base rate), one control allocation among them.
pub fn allocation_window(from: u64, to: u64) -> Factory {
    Arc::new(move || Ok(Box::new(AllocationWindow { info: ComponentInfo::new("window", "arms the allocation counter"), from, to }) as Box<dyn Component>))
}

/// What the recording base saw, tick by tick.
#[derive(Default, Debug)]
pub struct BaseLog {
    /// Tick numbers given to sense().
    pub ticks: Vec<u64>,
    /// For each tick: the command, or None while holding.
    pub commands: Vec<Option<f64>>,
    /// Wall time (ns) of each sense().
    pub times: Vec<u64>,
}

/// One axis that integrates its command as a velocity; logs every tick.
pub struct RecordingBase {
    info: ComponentInfo,
    q: f64,
    period: f64,
    /// What the engine did with this base (shared with the test).
    pub log: Arc<Mutex<BaseLog>>,
    /// Report a fault from sense() at this tick (a bus fault, say).
    pub fail_at: Option<u64>,
}

impl RecordingBase {
    /// A base stepping every `period` seconds, and its log.
    pub fn new(period: f64) -> (Self, Arc<Mutex<BaseLog>>) {
        let log = Arc::new(Mutex::new(BaseLog::default()));
        let info = ComponentInfo::new("recording_base", "test base").output(PortInfo::new("q", ValueType::Real)).input(PortInfo::new("v_cmd", ValueType::Real));
        (RecordingBase { info, q: 0.0, period, log: log.clone(), fail_at: None }, log)
    }
}

impl Base for RecordingBase {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }
    fn sense(&mut self, tick: u64, outputs: &mut [Value]) -> Step {
        outputs[0].set_real(self.q);
        let mut log = self.log.lock().unwrap();
        log.ticks.push(tick);
        log.times.push(morc_kernel::monotonic_ns());
        if self.fail_at == Some(tick) {
            return Step::Fault("drive 3 reports an over-current fault".into());
        }
        Step::Continue
    }
    fn actuate(&mut self, _tick: u64, commands: Option<Commands>) -> Step {
        let c = commands.and_then(|c| c.get(0)).map(|v| v.real());
        if let Some(v) = c {
            self.q += v * self.period;
        }
        self.log.lock().unwrap().commands.push(c);
        Step::Continue
    }
}

//! What the components stepped by one thread share: resources made once per thread (a Lua
//! component's Lua state and its memory pool, for all the Lua components of that rate) and work
//! that thread does in its slack, after the tick's work is done (that state's garbage collector).
//!
//! An assembly's components of one rate are stepped by one thread (the Coordinator for the base
//! rate, an Updater for each slower one); [`crate::InitContext::thread`] hands each component the
//! [`StepThread`] of the thread that will step it.

use std::any::Any;
use std::sync::{Arc, Mutex};

/// Work done by a stepping thread after its step, in the slack before the next one.
pub trait SlackWork: Send + Sync {
    /// Does some work and returns. On the wall clock `until_ns` is the [`crate::monotonic_ns`]
    /// instant by which it must be done (the thread's next deadline less a margin); on the
    /// virtual clock it is `None` and the work must be a bounded amount that depends only on
    /// the state (so runs stay deterministic).
    fn run(&self, until_ns: Option<u64>);
}

/// The shared resources and slack work of one stepping thread.
#[derive(Default)]
pub struct StepThread {
    resources: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
    slack: Mutex<Vec<Arc<dyn SlackWork>>>,
    /// Whether the thread's loop runs the slack work (an engine's threads do; a component
    /// initialised on its own, as an exported FMU or a test harness does, has no such loop).
    runs_slack: bool,
    /// The assembly's memory pool per thread ([`crate::AssemblySpec::memory`]).
    memory: Option<usize>,
}

impl StepThread {
    /// The shared state of a thread whose loop runs the slack work after every step.
    pub(crate) fn engine_thread(memory: Option<usize>) -> Self {
        StepThread { runs_slack: true, memory, ..Default::default() }
    }

    /// The size in bytes of the memory pool the assembly gives each stepping thread, if it says.
    pub fn memory(&self) -> Option<usize> {
        self.memory
    }

    /// Whether the thread runs the slack work registered with [`StepThread::on_slack`]; when it
    /// does not, a component that needs such work does it itself at the end of its step.
    pub fn runs_slack(&self) -> bool {
        self.runs_slack
    }

    /// The thread's resource of type `T`, made by `make` for the first component that asks.
    pub fn shared<T: Any + Send + Sync>(&self, make: impl FnOnce() -> Result<T, String>) -> Result<Arc<T>, String> {
        let mut resources = self.resources.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = resources.iter().find_map(|r| r.clone().downcast::<T>().ok()) {
            return Ok(found);
        }
        let made = Arc::new(make()?);
        resources.push(made.clone());
        Ok(made)
    }

    /// Registers work for the thread's slack after each of its steps.
    pub fn on_slack(&self, work: Arc<dyn SlackWork>) {
        self.slack.lock().unwrap_or_else(|e| e.into_inner()).push(work);
    }

    /// The registered slack work, taken once the assembly is initialised.
    pub(crate) fn take_slack(&self) -> Vec<Arc<dyn SlackWork>> {
        std::mem::take(&mut *self.slack.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Runs every piece of slack work in turn.
pub(crate) fn run_slack(work: &[Arc<dyn SlackWork>], until_ns: Option<u64>) {
    for w in work {
        w.run(until_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_is_made_once_per_thread_and_per_type() {
        let thread = StepThread::default();
        let a = thread.shared(|| Ok(41u32)).unwrap();
        let b = thread.shared::<u32>(|| Err("made twice".into())).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let s = thread.shared(|| Ok(String::from("other type"))).unwrap();
        assert_eq!(*s, "other type");
        let other = StepThread::default();
        assert_eq!(*other.shared(|| Ok(7u32)).unwrap(), 7);
    }

    #[test]
    fn a_failed_make_leaves_nothing_behind() {
        let thread = StepThread::default();
        assert_eq!(thread.shared::<u8>(|| Err("no".into())).unwrap_err(), "no");
        assert_eq!(*thread.shared(|| Ok(3u8)).unwrap(), 3);
    }
}

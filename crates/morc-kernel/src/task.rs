//! A task: the components of one rate, stepped in data-flow order on one
//! thread (the Coordinator's for the base rate, an Updater's otherwise).
//! Everything a step touches is preallocated here.

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use super::clock::monotonic_ns;
use super::component::{Component, Step, StepContext};
use super::interpolate::Ramp;
use super::rt::{self, RtPolicy};
use super::stats::Histogram;
use super::step_thread::{run_slack, SlackWork};
use super::value::Value;

/// Where an input of a slot is copied from before the slot steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// An output of an earlier slot of this task, this very step.
    Local { slot: usize, port: usize },
    /// A value imported from outside the task at its release.
    External(usize),
    /// The task's copy of a value as it was at the end of its previous step.
    Delayed(usize),
    /// An imported value of a slower producer, interpolated (see interpolate.rs).
    Ramp(usize),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Binding {
    pub input: usize,
    pub source: Source,
}

/// One component in its task, with its port buffers and timing.
pub(crate) struct Slot {
    pub name: String,
    pub kind: String,
    pub component: Box<dyn Component>,
    pub inputs: Vec<Value>,
    pub outputs: Vec<Value>,
    pub bindings: Vec<Binding>,
    pub exec: Histogram,
}

pub(crate) struct Task {
    pub every: u32,
    /// The sample period of this task's components, in seconds.
    pub period: f64,
    /// Whether the engine runs on the wall clock (slack work then has a deadline).
    pub wall_clock: bool,
    /// How many steps the task has made.
    pub steps: u64,
    pub slots: Vec<Slot>,
    /// Values from outside (base, other tasks), filled at release.
    pub externals: Vec<Value>,
    /// Delayed values and where they are latched from at the end of a step.
    pub delays: Vec<Value>,
    pub delay_sources: Vec<Source>,
    /// Interpolated inputs from slower producers.
    pub ramps: Vec<Ramp>,
    /// What the last step asked for (read by the Coordinator on return).
    pub outcome: Step,
    /// The slot whose fault ended the last step, if one did (an index: no allocation).
    pub faulted: Option<usize>,
    /// The longest of its runs on an Updater (ns): whether it may run inline instead.
    pub longest_run_ns: u64,
}

impl Task {
    /// Steps every slot once, in order. Stops at the first fault; a finish
    /// request lets the rest of the step complete.
    pub fn run(&mut self) -> Step {
        let ctx = StepContext { step: self.steps, time: self.steps as f64 * self.period, period: self.period };
        let tick = self.steps * u64::from(self.every);
        for r in &mut self.ramps {
            r.update(tick, &self.externals[r.external]);
        }
        let mut outcome = Step::Continue;
        self.faulted = None;
        for i in 0..self.slots.len() {
            let (before, rest) = self.slots.split_at_mut(i);
            let slot = &mut rest[0];
            for b in &slot.bindings {
                let value = match b.source {
                    Source::Local { slot, port } => &before[slot].outputs[port],
                    Source::External(e) => &self.externals[e],
                    Source::Delayed(d) => &self.delays[d],
                    Source::Ramp(r) => &self.ramps[r].value,
                };
                slot.inputs[b.input].copy_from(value);
            }
            let start = monotonic_ns();
            let step = slot.component.step(&ctx, &slot.inputs, &mut slot.outputs);
            slot.exec.record(monotonic_ns().saturating_sub(start));
            match step {
                Step::Continue => {}
                Step::Finish(reason) => {
                    if outcome == Step::Continue {
                        outcome = Step::Finish(format!("{}: {reason}", slot.name));
                    }
                }
                Step::Fault(message) => {
                    self.faulted = Some(i);
                    // Rounded to the ns: 0.284, not 0.28400000000000003.
                    let time = (ctx.time * 1e9).round() / 1e9;
                    outcome = Step::Fault(format!("component '{}' ({}) at t = {time} s: {message}", slot.name, slot.kind));
                    break;
                }
            }
        }
        self.latch_delays();
        self.steps += 1;
        outcome
    }

    /// Delayed inputs take what their sources hold now (at the end of a step, or after a swap
    /// handed the outputs of the replaced assembly's components over).
    pub fn latch_delays(&mut self) {
        for (d, source) in self.delays.iter_mut().zip(&self.delay_sources) {
            match *source {
                Source::Local { slot, port } => d.copy_from(&self.slots[slot].outputs[port]),
                Source::External(e) => d.copy_from(&self.externals[e]),
                Source::Delayed(_) | Source::Ramp(_) => {}
            }
        }
    }
}

/// The Updater thread's loop: take a task, step it, hand it back; park in
/// between. The channels are used without blocking on them: a blocking
/// receive sets up a per-thread waker the first time, which allocates, and
/// parking does not. Ends when the Coordinator side hangs up (and unparks).
/// After handing a task back, the thread does its components' slack work (see step_thread.rs)
/// until shortly before the task's next release on the wall clock.
pub(crate) fn updater_loop(jobs: Receiver<Box<Task>>, done: Sender<Box<Task>>, policy: RtPolicy, coordinator: std::thread::Thread, slack: Vec<Arc<dyn SlackWork>>) {
    rt::apply_to_current_thread(policy, "updater");
    loop {
        let mut task = match jobs.try_recv() {
            Ok(task) => task,
            Err(crossbeam_channel::TryRecvError::Empty) => {
                std::thread::park();
                continue;
            }
            Err(crossbeam_channel::TryRecvError::Disconnected) => break,
        };
        let released = monotonic_ns();
        let wall = task.wall_clock;
        // The slack ends a tenth of the period before the next release.
        let until = released + (task.period * 0.9e9) as u64;
        task.outcome = task.run();
        task.longest_run_ns = task.longest_run_ns.max(monotonic_ns().saturating_sub(released));
        if done.try_send(task).is_err() {
            break;
        }
        // On the virtual clock the Coordinator parks until a task is back.
        coordinator.unpark();
        run_slack(&slack, wall.then_some(until));
    }
}

//! The running assembly: itself a component to the Engine, coordinator of
//! its own components across rates.
//!
//! Within tick n (the Coordinator's, one base period T):
//! 1. slower tasks due at n hand back their results, which are *published*
//!    (logical execution time: released at m, visible at m + k);
//! 2. the base-rate task reads the base's measurements and published values,
//!    and steps its components in data-flow order (same tick);
//! 3. slower tasks with n mod k = 0 are released with a snapshot of what is
//!    published now, to run on their Updater threads;
//! 4. the base's commands are gathered.
//!
//! Nothing here allocates after [`RunningAssembly::new`].

use std::cell::Cell;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, Sender, TryRecvError};

use super::assembly::{AssemblyError, OverrunPolicy, Plan, PlanSource};
use super::base::Commands;
use super::clock::ClockKind;
use super::component::{AssemblyResults, ComponentInfo, InitContext, PortInfo, Step};
use super::data::AssemblyData;
use super::error::{ComponentRef, FaultSource};
use super::interpolate::Ramp;
use super::rt::RtPolicy;
use super::stats::{Histogram, Summary};
use super::step_thread::{run_slack, SlackWork, StepThread};
use super::task::{updater_loop, Binding, Slot, Source, Task};
use super::value::Value;

/// A published output: task slot `slot`'s output `port` goes to `published[index]`.
#[derive(Clone, Copy)]
struct Export {
    slot: usize,
    port: usize,
    index: usize,
}

/// How a task connects to the published table.
struct TaskIo {
    /// `externals[i]` ← `published[imports[i]]`.
    imports: Vec<usize>,
    exports: Vec<Export>,
}

impl TaskIo {
    fn import(&self, task: &mut Task, published: &[Value]) {
        for (e, &p) in task.externals.iter_mut().zip(&self.imports) {
            e.copy_from(&published[p]);
        }
    }
    fn publish(&self, task: &Task, published: &mut [Value]) {
        for e in &self.exports {
            published[e.index].copy_from(&task.slots[e.slot].outputs[e.port]);
        }
    }
}

/// A slower task and the Updater thread it runs on.
struct ThreadedTask {
    every: u64,
    /// The task while it is at home; `None` while its Updater has it.
    task: Option<Box<Task>>,
    io: TaskIo,
    jobs: Option<Sender<Box<Task>>>,
    done: Receiver<Box<Task>>,
    thread: Option<JoinHandle<()>>,
    /// The tick at which the task in flight must be back.
    due: u64,
    overruns: u64,
    /// Overrun already counted for the task in flight.
    late: bool,
    /// Runs on the Coordinator now: its steps proved cheaper than a hand-off is worth
    /// ([`INLINE_SHARE`]). Its outputs are still published at its due tick.
    inline: bool,
    /// An inline run's outputs wait at home for the due tick.
    inline_pending: bool,
    /// The slack work of its thread's components, which the Coordinator does once it runs inline.
    slack: Vec<Arc<dyn SlackWork>>,
    /// A reader's copy of a component's timing ([`RunningAssembly::copy_timing`]): its slots are
    /// the Updater's to write while it has the task, which is at every tick's end, so the slot
    /// asked for is copied here the next time the task comes home.
    timing_wanted: Cell<Option<usize>>,
    /// That copy (preallocated): the slot it is of, its histogram and the task's steps then.
    timing_copy: Cell<Option<usize>>,
    timing_exec: Histogram,
    timing_steps: u64,
}

/// A slower task whose runs all took less than this share of the base period (after
/// [`INLINE_AFTER`] runs on its Updater) runs on the Coordinator instead: a hand-off and the
/// wake-up of another thread cost more than such a task (`morc bench engine` measures both).
/// Logical execution time is kept: its outputs are published at its due tick all the same.
const INLINE_SHARE: f64 = 0.05;
/// Runs on the Updater measured before a task may move inline.
const INLINE_AFTER: u64 = 8;

/// An assembly ready to run or running.
pub struct RunningAssembly {
    pub(crate) name: String,
    base_period: f64,
    base_outputs: usize,
    inline: Box<Task>,
    inline_io: TaskIo,
    /// Work the Coordinator does for the base-rate components after each tick (see step_thread.rs).
    inline_slack: Vec<Arc<dyn SlackWork>>,
    threaded: Vec<ThreadedTask>,
    published: Vec<Value>,
    /// Base input port ← published index.
    base_commands: Vec<(usize, usize)>,
    /// For each of `base_commands`: "component 'c' (output 'y')" and "robot.q_cmd", for the
    /// fault a non-finite command raises.
    command_sources: Vec<(String, String)>,
    commands: Vec<Value>,
    /// Which base inputs this assembly drives (the others hold).
    driven: Vec<bool>,
    /// The run's time in base ticks: from 0 at its start, continued across swaps.
    pub(crate) tick: u64,
    /// The run's time at which this assembly took over (0, or where a swapped-out one ended).
    pub(crate) first_tick: u64,
    duration_ticks: Option<u64>,
    overrun: OverrunPolicy,
    /// Slower tasks never move inline ([`super::assembly::AssemblySpec::keep_updaters`]).
    keep_updaters: bool,
    /// A finish requested by a component, kept until the end of the tick.
    pending_finish: Option<String>,
    /// The component whose fault the last step returned (None: the assembly's own fault).
    fault_source: Option<FaultSource>,
}

/// Per-component timing after a run.
#[derive(Clone, Debug)]
pub struct ComponentReport {
    /// Instance name.
    pub name: String,
    /// What the user called its kind.
    pub kind: String,
    /// Sample time in base periods.
    pub every: u32,
    /// Steps taken.
    pub steps: u64,
    /// Execution time per step (ns).
    pub exec: Summary,
    /// Steps that missed their deadline.
    pub overruns: u64,
}

/// A component's timing while the run goes on, as [`RunningAssembly::copy_timing`] copies it.
#[derive(Clone)]
pub struct ComponentTiming {
    /// Instance name.
    pub name: String,
    /// What the user called its kind.
    pub kind: String,
    /// Sample time in base periods.
    pub every: u32,
    /// Steps taken.
    pub steps: u64,
    /// Execution time per step (ns).
    pub exec: Histogram,
    /// Steps that missed their deadline.
    pub overruns: u64,
    /// Which task it is in (0: the base rate's) and its place there, for the copy.
    task: usize,
    slot: usize,
}

impl RunningAssembly {
    /// One entry per component (names, empty histograms) for [`copy_timing`](Self::copy_timing)
    /// to fill, in the order of the run's report. Off the real-time path.
    pub fn timing_layout(&self) -> Vec<ComponentTiming> {
        let mut out = Vec::new();
        let tasks = std::iter::once(Some(&*self.inline)).chain(self.threaded.iter().map(|t| t.task.as_deref()));
        for (k, task) in tasks.enumerate() {
            for (i, slot) in task.map_or(&[][..], |t| &t.slots[..]).iter().enumerate() {
                out.push(ComponentTiming {
                    name: slot.name.clone(),
                    kind: slot.kind.clone(),
                    every: task.map_or(1, |t| t.every),
                    steps: 0,
                    exec: Histogram::new(),
                    overruns: 0,
                    task: k,
                    slot: i,
                });
            }
        }
        out
    }

    /// Copies one component's timing so far into `entry` (made by [`timing_layout`](Self::timing_layout)
    /// for this run) without allocating, and says whether it did. A slower task that its
    /// Updater has out is copied at its next return home: ask again on a later tick.
    pub fn copy_timing(&self, entry: &mut ComponentTiming) -> bool {
        if entry.task == 0 {
            if let Some(slot) = self.inline.slots.get(entry.slot) {
                entry.exec.copy_from(&slot.exec);
                entry.steps = self.inline.steps;
                entry.overruns = 0;
            }
            return true;
        }
        let Some(t) = self.threaded.get(entry.task - 1) else { return true };
        entry.overruns = t.overruns;
        if let Some(task) = t.task.as_deref() {
            if let Some(slot) = task.slots.get(entry.slot) {
                entry.exec.copy_from(&slot.exec);
                entry.steps = task.steps;
            }
            return true;
        }
        if t.timing_copy.get() == Some(entry.slot) {
            t.timing_copy.set(None);
            entry.exec.copy_from(&t.timing_exec);
            entry.steps = t.timing_steps;
            return true;
        }
        t.timing_wanted.set(Some(entry.slot));
        false
    }

    /// Initialises the planned components (in data-flow order), lays out
    /// every buffer and starts the Updater threads. Off the real-time path.
    pub fn new(
        mut plan: Plan,
        base: &ComponentInfo,
        base_period: f64,
        clock: ClockKind,
        data: &AssemblyData,
        policy: RtPolicy,
        coordinator: std::thread::Thread,
    ) -> Result<RunningAssembly, AssemblyError> {
        let n = plan.components.len();
        // Which task (by rate) each component is in: one stepping thread per rate.
        let mut rates: Vec<u32> = plan.components.iter().map(|c| c.every).collect();
        rates.sort_unstable();
        rates.dedup();
        if rates.first() != Some(&1) {
            rates.insert(0, 1); // the inline task always exists, possibly empty
        }
        let task_of = |every: u32| rates.iter().position(|&r| r == every).expect("rate listed");
        let threads: Vec<StepThread> = rates.iter().map(|_| StepThread::engine_thread(plan.memory)).collect();
        // Initialise in data-flow order: initial outputs exist before readers start.
        let mut outputs: Vec<Vec<Value>> = plan.components.iter().map(|c| c.component.info().outputs.iter().map(|p| Value::zero(p.ty)).collect()).collect();
        for &i in &plan.order {
            let c = &mut plan.components[i];
            let ctx = InitContext {
                name: &c.name,
                period: f64::from(c.every) * base_period,
                base_period,
                data,
                thread: &threads[task_of(c.every)],
                base_latency: plan.base_latency,
            };
            c.component
                .initialize(&ctx, &mut outputs[i])
                .map_err(|e| AssemblyError { message: format!("{}: component '{}' ({}) failed to initialise: {e}", c.origin, c.name, c.kind), component: None }.in_component(&c.name, &c.kind))?;
        }

        // Published table: base outputs first, then every output read across tasks.
        let mut published: Vec<Value> = base.outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let base_outputs = published.len();
        let mut published_index: Vec<Vec<Option<usize>>> = outputs.iter().map(|o| vec![None; o.len()]).collect();
        let mut publish = |ci: usize, port: usize, published: &mut Vec<Value>| -> usize {
            *published_index[ci][port].get_or_insert_with(|| {
                published.push(outputs[ci][port].clone());
                published.len() - 1
            })
        };

        // Each component's slot in its task.
        let mut slot_of = vec![(0usize, 0usize); n];
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); rates.len()];
        for &i in &plan.order {
            let t = task_of(plan.components[i].every);
            slot_of[i] = (t, members[t].len());
            members[t].push(i);
        }

        let mut base_commands = Vec::new();
        let mut command_sources = Vec::new();
        for &(bp, ci, port) in &plan.base_commands {
            base_commands.push((bp, publish(ci, port, &mut published)));
            let c = &plan.components[ci];
            let output = &c.component.info().outputs[port].name;
            command_sources.push((format!("component '{}' (output '{output}')", c.name), format!("{}.{}", plan.base_name, base.inputs[bp].name)));
        }

        struct Layout {
            slots_bindings: Vec<Vec<Binding>>,
            imports: Vec<usize>,
            delay_sources: Vec<Source>,
            /// (import slot, producer's every) of each interpolated input.
            ramps: Vec<(usize, u64)>,
            exports: Vec<Export>,
        }
        let mut layouts: Vec<Layout> = Vec::new();
        for (t, member) in members.iter().enumerate() {
            let mut layout = Layout { slots_bindings: Vec::new(), imports: Vec::new(), delay_sources: Vec::new(), ramps: Vec::new(), exports: Vec::new() };
            for &ci in member {
                let mut bindings = Vec::new();
                for input in &plan.components[ci].inputs {
                    let direct = match input.source {
                        PlanSource::Component { index, port } if slot_of[index].0 == t => Source::Local { slot: slot_of[index].1, port },
                        PlanSource::Component { index, port } => {
                            let p = publish(index, port, &mut published);
                            Source::External(import_slot(&mut layout.imports, p))
                        }
                        PlanSource::Base { port } => Source::External(import_slot(&mut layout.imports, port)),
                    };
                    let slower = match input.source {
                        PlanSource::Component { index, .. } => plan.components[index].every > rates[t],
                        PlanSource::Base { .. } => false,
                    };
                    let source = if let (true, true, Source::External(e)) = (input.interpolate, slower, direct) {
                        let PlanSource::Component { index, .. } = input.source else { unreachable!("slower sources are components") };
                        layout.ramps.push((e, u64::from(plan.components[index].every)));
                        Source::Ramp(layout.ramps.len() - 1)
                    } else if input.delay {
                        layout.delay_sources.push(direct);
                        Source::Delayed(layout.delay_sources.len() - 1)
                    } else {
                        direct
                    };
                    bindings.push(Binding { input: input.port, source });
                }
                layout.slots_bindings.push(bindings);
            }
            layouts.push(layout);
        }
        // Exports: every published component output, from the task that owns it.
        for (ci, ports) in published_index.iter().enumerate() {
            for (port, index) in ports.iter().enumerate() {
                if let Some(index) = *index {
                    let (t, slot) = slot_of[ci];
                    layouts[t].exports.push(Export { slot, port, index });
                }
            }
        }

        // Build the tasks, moving components into their slots.
        let mut components: Vec<Option<_>> = plan.components.into_iter().map(Some).collect();
        let mut outputs: Vec<Option<Vec<Value>>> = outputs.into_iter().map(Some).collect();
        let mut inline = None;
        let mut inline_io = None;
        let mut inline_slack = Vec::new();
        let mut threaded = Vec::new();
        for (t, (member, layout)) in members.iter().zip(layouts).enumerate() {
            let every = rates[t];
            let mut slots = Vec::with_capacity(member.len());
            for (&ci, bindings) in member.iter().zip(layout.slots_bindings) {
                let c = components[ci].take().expect("each component placed once");
                let inputs = c.component.info().inputs.iter().map(PortInfo::initial_value).collect();
                slots.push(Slot {
                    name: c.name,
                    kind: c.kind,
                    component: c.component,
                    inputs,
                    outputs: outputs[ci].take().expect("outputs placed once"),
                    bindings,
                    exec: Default::default(),
                });
            }
            let externals: Vec<Value> = layout.imports.iter().map(|&p| published[p].clone()).collect();
            let ramps = layout.ramps.iter().map(|&(e, every)| Ramp::new(e, every, &externals[e])).collect();
            let delays = layout
                .delay_sources
                .iter()
                .map(|s| match *s {
                    Source::Local { slot, port } => slots[slot].outputs[port].clone(),
                    Source::External(e) => externals[e].clone(),
                    Source::Delayed(_) | Source::Ramp(_) => unreachable!("a delay reads a direct source"),
                })
                .collect();
            let task = Box::new(Task {
                every,
                period: f64::from(every) * base_period,
                wall_clock: clock == ClockKind::Wall,
                steps: 0,
                slots,
                externals,
                delays,
                delay_sources: layout.delay_sources,
                ramps,
                outcome: Step::Continue,
                faulted: None,
                longest_run_ns: 0,
            });
            let io = TaskIo { imports: layout.imports, exports: layout.exports };
            let slack = threads[t].take_slack();
            if t == 0 {
                inline = Some(task);
                inline_io = Some(io);
                inline_slack = slack;
            } else {
                let (jobs_tx, jobs_rx) = bounded::<Box<Task>>(1);
                let (done_tx, done_rx) = bounded::<Box<Task>>(1);
                let name = format!("morc-updater-{every}");
                let coordinator = coordinator.clone();
                let updater_slack = slack.clone();
                let thread = std::thread::Builder::new()
                    .name(name)
                    .spawn(move || updater_loop(jobs_rx, done_tx, policy, coordinator, slack))
                    .map_err(|e| AssemblyError { message: format!("cannot start an Updater thread: {e}"), component: None })?;
                threaded.push(ThreadedTask {
                    every: u64::from(every),
                    task: Some(task),
                    io,
                    jobs: Some(jobs_tx),
                    done: done_rx,
                    thread: Some(thread),
                    due: 0,
                    overruns: 0,
                    late: false,
                    inline: false,
                    inline_pending: false,
                    slack: updater_slack,
                    timing_wanted: Cell::new(None),
                    timing_copy: Cell::new(None),
                    timing_exec: Histogram::new(),
                    timing_steps: 0,
                });
            }
        }
        let commands = base.inputs.iter().map(|p| Value::zero(p.ty)).collect();
        let driven = (0..base.inputs.len()).map(|p| base_commands.iter().any(|&(bp, _)| bp == p)).collect();
        Ok(RunningAssembly {
            name: plan.name,
            base_period,
            base_outputs,
            inline: inline.expect("inline task exists"),
            inline_io: inline_io.expect("inline task exists"),
            inline_slack,
            threaded,
            published,
            base_commands,
            command_sources,
            commands,
            driven,
            tick: 0,
            first_tick: 0,
            duration_ticks: plan.duration_ticks,
            overrun: plan.overrun,
            keep_updaters: plan.keep_updaters,
            pending_finish: None,
            fault_source: None,
        })
    }

    /// At a swap, on the Coordinator between two ticks: this assembly (prepared, not yet
    /// stepped) carries on from `old`, which has stepped its last. The run's time continues
    /// (components' `t`, slower tasks' phase, the duration counted from the run's start); each
    /// component with the name of one in `old` gets that one's outputs (ports of the same name
    /// and type) and then [`Component::take_over`] from it. Waits for `old`'s slower tasks in
    /// flight (they are due within their period). An error names the component.
    pub fn continue_from(&mut self, old: &mut RunningAssembly) -> Result<(), (FaultSource, String)> {
        for t in &mut old.threaded {
            if t.task.is_none() {
                if let Ok(task) = t.done.recv() {
                    t.task = Some(task);
                }
            }
        }
        let tick = old.tick;
        self.tick = tick;
        self.first_tick = tick;
        self.inline.steps = tick;
        for t in &mut self.threaded {
            let task = t.task.as_mut().expect("a prepared assembly's tasks are at home");
            // Its first release is at the next multiple of its period: its time then.
            task.steps = tick.div_ceil(t.every);
        }
        let mut old_slots: Vec<&mut super::task::Slot> = old.inline.slots.iter_mut().chain(old.threaded.iter_mut().filter_map(|t| t.task.as_mut()).flat_map(|t| t.slots.iter_mut())).collect();
        let tasks = std::iter::once(&mut *self.inline).chain(self.threaded.iter_mut().map(|t| t.task.as_deref_mut().expect("at home")));
        for task in tasks {
            for slot in &mut task.slots {
                let Some(from) = old_slots.iter_mut().find(|o| o.name == slot.name) else { continue };
                let ports = &from.component.info().outputs;
                for (p, out) in slot.component.info().outputs.iter().zip(slot.outputs.iter_mut()) {
                    if let Some(k) = ports.iter().position(|q| q.name == p.name && q.ty == p.ty) {
                        out.copy_from(&from.outputs[k]);
                    }
                }
                slot.component.take_over(&mut *from.component).map_err(|e| {
                    let source = FaultSource::Component(ComponentRef { name: slot.name.clone(), kind: slot.kind.clone() });
                    (source, format!("component '{}' ({}): {e}", slot.name, slot.kind))
                })?;
            }
            task.latch_delays();
        }
        self.inline_io.publish(&self.inline, &mut self.published);
        for t in &self.threaded {
            t.io.publish(t.task.as_ref().expect("at home"), &mut self.published);
        }
        Ok(())
    }

    /// The run's time (base ticks) at which this assembly took over: 0 for a run's first
    /// assembly, where the replaced one ended after a swap.
    pub fn first_tick(&self) -> u64 {
        self.first_tick
    }

    /// Who drives base input `port` and the input's name ("component 'c' (output 'y')",
    /// "robot.q_cmd"), when this assembly drives it.
    pub fn command_source(&self, port: usize) -> Option<(&str, &str)> {
        self.base_commands.iter().position(|&(bp, _)| bp == port).map(|c| (self.command_sources[c].0.as_str(), self.command_sources[c].1.as_str()))
    }

    /// The slack work of the base-rate components (a Lua state's collector), run by the
    /// Coordinator after the tick's work; `until_ns` as in [`SlackWork::run`].
    pub fn run_slack(&self, until_ns: Option<u64>) {
        run_slack(&self.inline_slack, until_ns);
        for t in self.threaded.iter().filter(|t| t.inline) {
            run_slack(&t.slack, until_ns);
        }
    }

    /// How many slower tasks run on the Coordinator (their steps cheaper than a hand-off).
    pub fn inline_tasks(&self) -> usize {
        self.threaded.iter().filter(|t| t.inline).count()
    }

    /// Who raised the fault the last step returned: a component, else the assembly itself.
    pub fn fault_source(&mut self) -> FaultSource {
        self.fault_source.take().unwrap_or(FaultSource::Assembly)
    }

    /// The base's commands as of the last tick.
    pub fn commands(&self) -> Commands<'_> {
        Commands::new(&self.commands, &self.driven)
    }

    /// One base tick. `base_outputs` are the base's measurements of this
    /// tick. With the virtual clock, waits for slower tasks that are due;
    /// with the wall clock, a task not back by its deadline is an overrun.
    /// `cancelled` is polled while waiting, so a hung task can be abandoned.
    pub fn step(&mut self, base_outputs: &[Value], clock: ClockKind, cancelled: &dyn Fn() -> bool) -> Step {
        let n = self.tick;
        // 1. Slower tasks due now publish what they computed.
        let inline_budget_ns = (self.base_period * INLINE_SHARE * 1e9) as u64;
        for t in &mut self.threaded {
            if t.due > n {
                continue;
            }
            if t.inline_pending {
                t.inline_pending = false;
                let task = t.task.as_mut().expect("an inline task stays at home");
                t.io.publish(task, &mut self.published);
                if let Err(fault) = take_outcome(task, &mut self.pending_finish) {
                    self.fault_source = faulted_component(task);
                    return fault;
                }
                continue;
            }
            if t.task.is_some() {
                continue;
            }
            let returned = match clock {
                ClockKind::Virtual => wait_parked(&t.done, cancelled),
                ClockKind::Wall => t.done.try_recv(),
            };
            match returned {
                Err(TryRecvError::Empty) if clock == ClockKind::Virtual => {
                    return Step::Fault("cancelled while a slower component was still computing".into());
                }
                Ok(task) => {
                    t.io.publish(&task, &mut self.published);
                    if let Some(slot) = t.timing_wanted.take().and_then(|s| task.slots.get(s).map(|x| (s, x))) {
                        t.timing_exec.copy_from(&slot.1.exec);
                        t.timing_steps = task.steps;
                        t.timing_copy.set(Some(slot.0));
                    }
                    let task = t.task.insert(task);
                    if !self.keep_updaters && task.steps >= INLINE_AFTER && task.longest_run_ns < inline_budget_ns {
                        t.inline = true;
                    }
                    t.late = false;
                    if let Err(fault) = take_outcome(task, &mut self.pending_finish) {
                        self.fault_source = faulted_component(task);
                        return fault;
                    }
                }
                Err(TryRecvError::Empty) => {
                    if !t.late {
                        t.late = true;
                        t.overruns += 1;
                        if self.overrun == OverrunPolicy::Fault {
                            return Step::Fault(format!(
                                "overrun: the components running every {} ticks ({} s) were not done by their deadline at tick {n}",
                                t.every,
                                t.every as f64 * self.base_period
                            ));
                        }
                    }
                }
                Err(TryRecvError::Disconnected) => {
                    return Step::Fault(format!("the Updater thread of the components running every {} ticks stopped", t.every));
                }
            }
        }

        // 2.–3. Base measurements, then the base-rate components in data-flow order.
        for (p, v) in self.published[..self.base_outputs].iter_mut().zip(base_outputs) {
            p.copy_from(v);
        }
        self.inline_io.import(&mut self.inline, &self.published);
        match self.inline.run() {
            Step::Continue => {}
            Step::Finish(reason) => {
                self.pending_finish.get_or_insert(reason);
            }
            fault @ Step::Fault(_) => {
                self.fault_source = faulted_component(&self.inline);
                return fault;
            }
        }
        self.inline_io.publish(&self.inline, &mut self.published);

        // 4. Release slower tasks whose period starts now.
        for t in &mut self.threaded {
            if !n.is_multiple_of(t.every) {
                continue;
            }
            let Some(mut task) = t.task.take() else {
                continue; // still busy with an overrun: skip this release
            };
            t.io.import(&mut task, &self.published);
            t.due = n + t.every;
            if t.inline {
                let start = super::clock::monotonic_ns();
                task.outcome = task.run();
                let took = super::clock::monotonic_ns().saturating_sub(start);
                if took > 2 * inline_budget_ns {
                    // Grown expensive: back to its Updater from the next release on, for good.
                    t.inline = false;
                    task.longest_run_ns = took;
                }
                t.task = Some(task);
                t.inline_pending = true;
                continue;
            }
            let sent = t.jobs.as_ref().map(|jobs| jobs.try_send(task));
            match sent {
                Some(Ok(())) => {
                    if let Some(thread) = &t.thread {
                        thread.thread().unpark();
                    }
                }
                Some(Err(e)) => {
                    t.task = Some(e.into_inner());
                    return Step::Fault(format!("could not hand work to the Updater thread of the components running every {} ticks", t.every));
                }
                None => unreachable!("jobs channel lives until teardown"),
            }
        }

        for (c, &(bp, pi)) in self.base_commands.iter().enumerate() {
            self.commands[bp].copy_from(&self.published[pi]);
            // A NaN or ∞ must not reach the robot, the plant or the drives: the run faults in
            // this tick (the engine then holds), naming who wrote it. One test per value.
            if let Some((element, x)) = first_non_finite(&self.commands[bp]) {
                let (source, port) = &self.command_sources[c];
                let at = element.map_or(String::new(), |i| format!("[{}]", i + 1));
                return Step::Fault(format!("{source} wrote {x} to {port}{at}: the robot holds"));
            }
        }
        self.tick += 1;
        if let Some(reason) = self.pending_finish.take() {
            return Step::Finish(reason);
        }
        if self.duration_ticks.is_some_and(|d| self.tick - self.first_tick >= d) {
            return Step::Finish("duration".into());
        }
        Step::Continue
    }

    /// Waits for tasks in flight, stops the Updater threads, terminates every
    /// component (results into `data`) and reports timing. Off the real-time path.
    pub fn finish(mut self, data: &mut AssemblyData) -> Vec<ComponentReport> {
        let mut tasks: Vec<(Box<Task>, u64)> = Vec::new();
        for t in &mut self.threaded {
            let task = match t.task.take() {
                Some(task) => Some(task),
                None => t.done.recv().ok(),
            };
            t.jobs = None; // hang up: the Updater thread ends once unparked
            if let Some(handle) = t.thread.take() {
                handle.thread().unpark();
                let _ = handle.join();
            }
            if let Some(task) = task {
                tasks.push((task, t.overruns));
            }
        }
        let inline = std::mem::replace(&mut self.inline, Box::new(empty_task()));
        tasks.insert(0, (inline, 0));
        let mut reports = Vec::new();
        for (mut task, overruns) in tasks {
            for slot in &mut task.slots {
                let mut results = AssemblyResults { prefix: &slot.name, data };
                slot.component.terminate(&mut results);
                reports.push(ComponentReport { name: slot.name.clone(), kind: slot.kind.clone(), every: task.every, steps: task.steps, exec: slot.exec.summary(), overruns });
            }
        }
        reports
    }
}

impl Drop for RunningAssembly {
    fn drop(&mut self) {
        for t in &mut self.threaded {
            t.jobs = None;
            if let Some(handle) = t.thread.take() {
                // The Updater ends once it has handed back what it holds.
                handle.thread().unpark();
                let _ = t.done.recv();
                let _ = handle.join();
            }
        }
    }
}

/// Waits for a task to come back without blocking on the channel: a
/// blocking receive registers a waker, which allocates the first time on a
/// new channel. The Updater unparks the Coordinator after each hand-back,
/// and parking does not allocate. `Empty` means it was cancelled meanwhile.
fn wait_parked(done: &Receiver<Box<Task>>, cancelled: &dyn Fn() -> bool) -> Result<Box<Task>, TryRecvError> {
    loop {
        match done.try_recv() {
            Err(TryRecvError::Empty) => {}
            other => return other,
        }
        if cancelled() {
            return Err(TryRecvError::Empty);
        }
        std::thread::park_timeout(Duration::from_millis(20));
    }
}

/// Takes what a slower task's last run asked for: a finish is kept for the end of the tick
/// (the first one wins), a fault is handed back.
fn take_outcome(task: &mut Task, pending_finish: &mut Option<String>) -> Result<(), Step> {
    match std::mem::replace(&mut task.outcome, Step::Continue) {
        Step::Continue => Ok(()),
        Step::Finish(reason) => {
            pending_finish.get_or_insert(reason);
            Ok(())
        }
        fault @ Step::Fault(_) => Err(fault),
    }
}

/// The component whose fault ended `task`'s last step.
fn faulted_component(task: &Task) -> Option<FaultSource> {
    let slot = &task.slots[task.faulted?];
    Some(FaultSource::Component(ComponentRef { name: slot.name.clone(), kind: slot.kind.clone() }))
}

fn empty_task() -> Task {
    Task {
        every: 1,
        period: 0.0,
        wall_clock: false,
        steps: 0,
        slots: Vec::new(),
        externals: Vec::new(),
        delays: Vec::new(),
        delay_sources: Vec::new(),
        ramps: Vec::new(),
        outcome: Step::Continue,
        faulted: None,
        longest_run_ns: 0,
    }
}

/// The index in `imports` of published value `p`, adding it once.
fn import_slot(imports: &mut Vec<usize>, p: usize) -> usize {
    imports.iter().position(|&q| q == p).unwrap_or_else(|| {
        imports.push(p);
        imports.len() - 1
    })
}

/// The first value of a real or vector port that is not finite: its element (vectors, from 0)
/// and the value. Other types carry no real numbers.
#[inline]
fn first_non_finite(v: &Value) -> Option<(Option<usize>, f64)> {
    match v {
        Value::Real(x) if !x.is_finite() => Some((None, *x)),
        Value::Vector(x) => x.iter().position(|a| !a.is_finite()).map(|i| (Some(i), x[i])),
        _ => None,
    }
}

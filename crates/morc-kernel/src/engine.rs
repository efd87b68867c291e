//! The Engine: one Coordinator thread, the only reader of the clock, cycles
//! the base every period and steps the current assembly. Assemblies are
//! prepared off the real-time path and switched in at a tick boundary.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Receiver, Sender};

use super::assembly::{plan, AssemblySpec};
use super::base::Base;
use super::clock::{monotonic_ns, sleep_until, ClockKind};
use super::component::{ComponentInfo, Step};
use super::data::AssemblyData;
use super::diagnostics::BusDiagnostics;
pub use super::error::{EngineError, Fault, FaultSource};
use super::multirate::{ComponentReport, ComponentTiming, RunningAssembly};
use super::rt::{self, RtPolicy};
use super::snapshot::{BaseSnapshot, Snapshot};
use super::stats::{Histogram, Summary};
use super::value::Value;

/// How the engine runs: base period, clock and real-time scheduling.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Base period T in seconds: the bus cycle.
    pub period: f64,
    /// Virtual time (as fast as possible, deterministic) or wall time.
    pub clock: ClockKind,
    /// Scheduling of the Coordinator; Updaters run a few levels below it.
    pub rt: RtPolicy,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig { period: 0.001, clock: ClockKind::Virtual, rt: RtPolicy::default() }
    }
}

/// Timing of the Coordinator over one run (or the engine's life).
#[derive(Clone, Default)]
pub struct EngineStats {
    /// Wall clock: how late the Coordinator woke after each deadline.
    pub wake_latency: Histogram,
    /// Time from wake-up to the end of the tick's work.
    pub cycle: Histogram,
    /// Ticks whose work ended after the next deadline (wall clock).
    pub late_ticks: u64,
    /// Ticks counted.
    pub ticks: u64,
}

impl EngineStats {
    fn reset(&mut self) {
        self.wake_latency.reset();
        self.cycle.reset();
        self.late_ticks = 0;
        self.ticks = 0;
    }
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A component said it is done (reason names it), or the duration ran out ("duration").
    Finished(String),
    /// Something failed (who and what); the robot was taken to hold.
    Fault(Fault),
    /// The program (or Ctrl-C) cancelled it; the robot holds.
    Cancelled,
}

impl Outcome {
    /// Whether the run finished normally (not faulted or cancelled).
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Finished(_))
    }

    /// The fault, when the run ended in one.
    pub fn fault(&self) -> Option<&Fault> {
        match self {
            Outcome::Fault(f) => Some(f),
            _ => None,
        }
    }
}

/// What a run gives back to the program.
#[derive(Clone)]
pub struct RunResult {
    /// The assembly's name.
    pub assembly: String,
    /// Why the run ended.
    pub outcome: Outcome,
    /// Base ticks the assembly ran.
    pub ticks: u64,
    /// The run's time (base ticks) at which the assembly took over: 0, or after a swap where
    /// the replaced one ended (time continues across swaps).
    pub first_tick: u64,
    /// The engine tick at which it was switched in.
    pub start_tick: u64,
    /// Base period T in seconds.
    pub base_period: f64,
    /// The clock the run was timed by.
    pub clock: ClockKind,
    /// Timing of each component.
    pub components: Vec<ComponentReport>,
    /// Timing of the Coordinator during the run.
    pub engine: EngineSummary,
    /// Assembly Data after the run, with the components' results.
    pub data: AssemblyData,
}

/// [`EngineStats`] boiled down to summaries (ns).
#[derive(Clone, Copy, Debug, Default)]
pub struct EngineSummary {
    /// How late the Coordinator woke after each deadline (ns, wall clock).
    pub wake_latency: Summary,
    /// Time from wake-up to the end of each tick's work (ns).
    pub cycle: Summary,
    /// Ticks whose work ended after the next deadline.
    pub late_ticks: u64,
    /// Ticks counted.
    pub ticks: u64,
}

impl EngineStats {
    /// The histograms boiled down to summaries.
    pub fn summary(&self) -> EngineSummary {
        EngineSummary { wake_latency: self.wake_latency.summary(), cycle: self.cycle.summary(), late_ticks: self.late_ticks, ticks: self.ticks }
    }
}

impl RunResult {
    /// A human report: outcome, timing of the engine and of each component.
    pub fn report(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        // A fault's message may go on over lines (a Lua traceback): its first line goes in the
        // headline, the rest below it, so the headline reads as one sentence.
        let (outcome, details) = match &self.outcome {
            Outcome::Finished(r) => (format!("finished ({r})"), None),
            Outcome::Fault(m) => {
                let text = m.to_string();
                let (first, rest) = text.split_once('\n').map_or((text.as_str(), None), |(a, b)| (a, Some(b.to_string())));
                (format!("FAULT: {first}"), rest)
            }
            Outcome::Cancelled => ("cancelled".into(), None),
        };
        let _ =
            writeln!(s, "assembly '{}' {outcome} after {} ticks = {:.3} s ({} clock, T = {} ms)", self.assembly, self.ticks, self.ticks as f64 * self.base_period, self.clock, self.base_period * 1e3);
        for line in details.iter().flat_map(|d| d.lines()) {
            let _ = writeln!(s, "    {}", line.replace('\t', "  "));
        }
        if self.clock == ClockKind::Wall {
            let _ = writeln!(s, "  wake-up latency  {}", self.engine.wake_latency);
        }
        let _ = writeln!(s, "  tick work        {}   late ticks {}", self.engine.cycle, self.engine.late_ticks);
        let _ = writeln!(s, "  {:<16} {:<12} {:>5} {:>8} {:>10} {:>10} {:>10} {:>8}", "component", "kind", "every", "steps", "mean", "p99", "max", "overruns");
        for c in &self.components {
            let _ = writeln!(
                s,
                "  {:<16} {:<12} {:>5} {:>8} {:>10} {:>10} {:>10} {:>8}",
                c.name,
                c.kind,
                c.every,
                c.steps,
                super::stats::human_ns(c.exec.mean),
                super::stats::human_ns(c.exec.p99 as f64),
                super::stats::human_ns(c.exec.max as f64),
                c.overruns
            );
        }
        s
    }
}

/// The running assembly's timing so far, for a reader on another thread (the live view's
/// statistics): the Coordinator copies it when asked, after a tick's work, into room laid out
/// when the run was prepared (no allocation, and it only tries the lock) — one component's
/// histogram a tick, then the engine's own counts, so a tick's extra work stays one copy of 8 kB
/// however many components run. The counts are the last copied: `ticks` ≥ each component's steps.
#[derive(Clone, Default)]
pub struct RunTiming {
    /// The assembly's name.
    pub assembly: String,
    /// Counts the runs prepared on this engine: a new number is a new run.
    pub run: u64,
    /// Whether the Coordinator has copied anything into it yet.
    pub copied: bool,
    /// Base ticks counted so far.
    pub ticks: u64,
    /// Ticks whose work ended after the next deadline (wall clock).
    pub late_ticks: u64,
    /// Time from wake-up to the end of each tick's work (ns).
    pub cycle: Histogram,
    /// Each component's timing, in the order of the run's report.
    pub components: Vec<ComponentTiming>,
    /// The component the Coordinator copies next.
    next: usize,
}

/// Where [`RunTiming`] is handed over ([`Engine::timing_cell`]).
#[derive(Default)]
pub struct TimingCell {
    wanted: AtomicBool,
    runs: AtomicU64,
    timing: Mutex<RunTiming>,
}

impl TimingCell {
    /// Asks the Coordinator for a fresh copy after its next tick.
    pub fn request(&self) {
        self.wanted.store(true, Ordering::Relaxed);
    }
    /// The last copy (None before the first one of any run). Off the real-time path.
    pub fn latest(&self) -> Option<RunTiming> {
        let t = self.timing.lock().unwrap_or_else(|p| p.into_inner());
        t.copied.then(|| t.clone())
    }
    /// Lays out the room for a run about to start (off the real-time path); its number.
    fn prepare(&self, assembly: &RunningAssembly) -> u64 {
        let run = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
        *self.timing.lock().unwrap_or_else(|p| p.into_inner()) = RunTiming { assembly: assembly.name.clone(), run, components: assembly.timing_layout(), ..RunTiming::default() };
        run
    }
    /// On the Coordinator, when asked: copies `job`'s timing unless a reader holds the lock
    /// (then at a later tick) or the room is laid out for another run (one being prepared).
    #[inline]
    fn offer(&self, job: &Job) {
        if !self.wanted.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut guard) = self.timing.try_lock() else { return };
        let t = &mut *guard;
        if t.run != job.run {
            return;
        }
        if let Some(entry) = t.components.get_mut(t.next) {
            if job.assembly.copy_timing(entry) {
                t.next += 1;
            }
            return;
        }
        t.ticks = job.stats.ticks;
        t.late_ticks = job.stats.late_ticks;
        t.cycle.copy_from(&job.stats.cycle);
        t.copied = true;
        t.next = 0;
        self.wanted.store(false, Ordering::Relaxed);
    }
}

/// A run handed to the Coordinator, with room preallocated for its report.
struct Job {
    /// Its number in the [`TimingCell`].
    run: u64,
    assembly: RunningAssembly,
    stats: EngineStats,
    outcome: Option<Outcome>,
    start_tick: u64,
    data: AssemblyData,
    /// [`CANCEL_ALL`] when the run was asked for.
    cancel_epoch: u64,
    /// Ticks spent bringing the robot to a standstill after a fault or a cancellation.
    stopping: Option<u64>,
    /// The run is over (and the robot still): hand it back.
    done: bool,
    /// The assembly's name, for the snapshot (swapped in when it starts).
    name: String,
    /// Counts the run in [`runs_in_progress`] from when it is handed to the Coordinator until
    /// it leaves the base (taken then, or dropped with a job that never ran).
    in_progress: Option<InProgress>,
    /// Swapped in for a running assembly: its first commands are checked against where the
    /// last ones left the robot ([`Base::check_takeover`]), and the verdict goes back to
    /// [`Engine::swap`] here (None: it took over; Some: the fault's message).
    takeover: Option<Sender<Option<String>>>,
}

/// One run in [`RUNS_IN_PROGRESS`], while it lives.
struct InProgress;

impl InProgress {
    fn new() -> InProgress {
        RUNS_IN_PROGRESS.fetch_add(1, Ordering::SeqCst);
        InProgress
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        RUNS_IN_PROGRESS.fetch_sub(1, Ordering::SeqCst);
    }
}

enum Command {
    Run(Box<Job>),
    /// Replace the running assembly by this one at the next tick boundary.
    Swap(Box<Job>),
    Stop,
}

/// State shared between the Coordinator and the program's side.
struct Shared {
    tick: AtomicU64,
    cancel: AtomicBool,
    /// The base's last tick, for readers on other threads.
    snapshot: Arc<BaseSnapshot>,
    /// The running assembly's timing, copied when a reader asks.
    timing: Arc<TimingCell>,
}

/// Bumped by [`cancel_all_runs`]. A run remembers the value it started under and
/// stops at its next tick once it changes, whichever engine runs it: a Ctrl-C
/// handler cannot know which engine the program has started since.
static CANCEL_ALL: AtomicU64 = AtomicU64::new(0);

/// Runs asked for and not yet over, summed over the engines of this process.
static RUNS_IN_PROGRESS: AtomicUsize = AtomicUsize::new(0);

/// Runs that ended in a fault, and the faulted results [`Engine::wait`] has handed back, summed
/// over the engines of this process: the difference is a fault nobody has read yet.
static RUNS_FAULTED: AtomicU64 = AtomicU64::new(0);
static FAULTS_COLLECTED: AtomicU64 = AtomicU64::new(0);

/// How many runs ended in a fault on the engines of this process, and how many of those results
/// nobody has waited for yet. The REPL watches them to say at once when a run it started in the
/// background (`engine:start`) faulted: the fault of a command it waits for, it reports itself.
pub fn runs_faulted() -> (u64, u64) {
    let collected = FAULTS_COLLECTED.load(Ordering::SeqCst);
    let faulted = RUNS_FAULTED.load(Ordering::SeqCst);
    (faulted, faulted.saturating_sub(collected))
}

/// How many runs are asked for or stepping now on the engines of this process, and not over
/// (0: every robot only holds). The REPL asks on Ctrl-C at its prompt, where no signal is raised: a run started in
/// the background (`engine:start`) is stopped as a Ctrl-C during a command would stop it.
pub fn runs_in_progress() -> usize {
    RUNS_IN_PROGRESS.load(Ordering::SeqCst)
}

/// Cancels the run of every engine in this process at its next tick; the robots hold.
/// Async-signal-safe (one atomic add), so a SIGINT handler may call it.
pub fn cancel_all_runs() {
    CANCEL_ALL.fetch_add(1, Ordering::SeqCst);
}

/// The clocked engine: a Coordinator thread cycling a base every base period and running one assembly at a time on it.
pub struct Engine {
    config: EngineConfig,
    base_name: String,
    base_info: ComponentInfo,
    /// [`Base::latency`], told to each assembly's components.
    base_latency: u32,
    /// The base's bus, for other threads ([`Base::diagnostics`]).
    bus: Option<Arc<dyn BusDiagnostics>>,
    commands: Sender<Command>,
    finished: Receiver<Box<Job>>,
    shared: Arc<Shared>,
    coordinator: Option<JoinHandle<Box<dyn Base>>>,
    running: Option<String>,
}

/// A run in progress; [`Engine::wait`] returns its result.
pub struct RunHandle {
    name: String,
    /// A swapped-in run that faulted in its first tick: the fault's message.
    refused: Option<String>,
}

impl RunHandle {
    /// For a run [`Engine::swap`] switched in: the fault that ended it in its very first tick
    /// (its state could not be handed over, or its first commands would have moved the robot
    /// past a limit), and the robot holds. [`Engine::wait`] gives the run's result.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }
}

impl Engine {
    /// Starts the Coordinator, cycling `base` (holding) until told otherwise.
    pub fn start(config: EngineConfig, base: Box<dyn Base>) -> Result<Engine, String> {
        if !(config.period.is_finite() && config.period >= 1e-6 && config.period <= 1.0) {
            return Err(format!("base period must be between 1 µs and 1 s, got {} s", config.period));
        }
        // Real-time scheduling is for wall time; virtual time runs as fast as it can anyway.
        let mut config = config;
        config.rt.enabled &= config.clock == ClockKind::Wall;
        let base_name = base.name().to_string();
        let base_info = base.info().clone();
        base_info.check_ports(&base_name)?;
        let base_latency = base.latency();
        let bus = base.diagnostics();
        let (cmd_tx, cmd_rx) = bounded(1);
        let (done_tx, done_rx) = bounded(1);
        let shared = Arc::new(Shared { tick: AtomicU64::new(0), cancel: AtomicBool::new(false), snapshot: Arc::new(BaseSnapshot::new(&base_info)), timing: Arc::default() });
        let coordinator = Coordinator::new(config.clone(), base, cmd_rx, done_tx, shared.clone());
        let handle = std::thread::Builder::new()
            .name("morc-coordinator".into())
            .spawn(move || coordinator.run())
            .map_err(|e| format!("cannot start the Coordinator thread: {e}"))?;
        Ok(Engine { config, base_name, base_info, base_latency, bus, commands: cmd_tx, finished: done_rx, shared, coordinator: Some(handle), running: None })
    }

    /// The configuration it runs with (real-time off under the virtual clock).
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }
    /// How assemblies refer to the base ("robot").
    pub fn base_name(&self) -> &str {
        &self.base_name
    }
    /// The base's ports and description.
    pub fn base_info(&self) -> &ComponentInfo {
        &self.base_info
    }
    /// The diagnostics of the base's bus ([`Base::diagnostics`]), when it runs one: its
    /// counts, faults and devices, and the fault reset.
    pub fn bus(&self) -> Option<&Arc<dyn BusDiagnostics>> {
        self.bus.as_ref()
    }
    /// What the base measured and was commanded in the last tick, and what ran then: a
    /// consistent copy, taken without stopping the Coordinator (it never waits for readers).
    pub fn snapshot(&self) -> Snapshot {
        self.shared.snapshot.read()
    }
    /// The cell [`Engine::snapshot`] reads, for a reader on another thread (an operator page):
    /// it reads without the engine and without stopping the Coordinator.
    pub fn snapshot_cell(&self) -> Arc<BaseSnapshot> {
        self.shared.snapshot.clone()
    }

    /// The cell a reader on another thread gets the running assembly's timing from (ticks,
    /// late ticks, each component's execution times) while it runs: [`TimingCell::request`],
    /// then [`TimingCell::latest`] a tick or more later.
    pub fn timing_cell(&self) -> Arc<TimingCell> {
        self.shared.timing.clone()
    }

    /// The Coordinator's tick count.
    pub fn tick(&self) -> u64 {
        self.shared.tick.load(Ordering::Relaxed)
    }
    /// Whether a run was started and not yet waited for.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }
    /// Whether the run in progress has ended (its result waits in [`Engine::wait`]).
    pub fn run_finished(&self) -> bool {
        !self.finished.is_empty()
    }

    /// Validates and prepares `spec` (instantiate, initialise, start its
    /// Updaters) while the base keeps cycling, then switches it in at the
    /// next tick boundary.
    pub fn start_run(&mut self, spec: &AssemblySpec, data: &AssemblyData) -> Result<RunHandle, EngineError> {
        if let Some(name) = &self.running {
            return Err(EngineError::Busy(name.clone()));
        }
        // Taken before the (possibly slow) preparation, so a Ctrl-C during it cancels the run.
        let cancel_epoch = CANCEL_ALL.load(Ordering::SeqCst);
        let job = self.prepare(spec, data, cancel_epoch)?;
        self.shared.cancel.store(false, Ordering::Relaxed);
        self.commands.send(Command::Run(job)).map_err(|_| EngineError::Stopped("the Coordinator thread is gone".into()))?;
        self.running = Some(spec.name.clone());
        Ok(RunHandle { name: spec.name.clone(), refused: None })
    }

    /// Prepares `spec` while the running assembly goes on, then switches it in at a tick
    /// boundary: the tick after the last one of the running assembly steps the new one, so
    /// no bus cycle is missed (and the base never holds in between). Gives back the result of
    /// the assembly it replaced (finished with the reason "swapped for 'NAME'") and the new
    /// run's handle. With no run in progress it is [`Engine::start_run`]; a run that has
    /// already ended (or is stopping after a fault) is not replaced: its result comes back and
    /// the new one starts after it.
    ///
    /// The handle of the replaced run is spent (its result is the one returned); when preparing
    /// `spec` fails, the running assembly goes on untouched and its handle stays valid.
    ///
    /// Bumpless: the run's time continues (the new components' `t` goes on from the old ones'),
    /// each new component takes over from the old one of the same name (its outputs, and its
    /// state as [`Component::take_over`](crate::Component::take_over) carries it), and the new
    /// assembly's first commands are checked against the last ones ([`Base::check_takeover`]):
    /// one that would move the robot past a limit faults the new run and the robot holds. This
    /// returns once the new assembly has stepped its first tick; [`RunHandle::refused`] says
    /// whether that faulted it.
    pub fn swap(&mut self, spec: &AssemblySpec, data: &AssemblyData) -> Result<(RunResult, RunHandle), EngineError> {
        let Some(running) = self.running.clone() else {
            return Err(EngineError::Stopped(format!("nothing runs that '{}' could replace: start it with start_run", spec.name)));
        };
        let cancel_epoch = CANCEL_ALL.load(Ordering::SeqCst);
        let mut job = self.prepare(spec, data, cancel_epoch)?;
        let (verdict_tx, verdict) = bounded(1);
        job.takeover = Some(verdict_tx);
        self.commands.send(Command::Swap(job)).map_err(|_| EngineError::Stopped("the Coordinator thread is gone".into()))?;
        let old = self.wait(RunHandle { name: running, refused: None })?;
        self.running = Some(spec.name.clone());
        // Dropped unsent when the old run ended on its own first: the new one then starts as a run does.
        let refused = verdict.recv().ok().flatten();
        Ok((old, RunHandle { name: spec.name.clone(), refused }))
    }

    fn prepare(&self, spec: &AssemblySpec, data: &AssemblyData, cancel_epoch: u64) -> Result<Box<Job>, EngineError> {
        let mut plan = plan(spec, &self.base_name, &self.base_info, self.config.period, data)?;
        plan.base_latency = self.base_latency;
        let coordinator = self.coordinator.as_ref().map(|h| h.thread().clone()).ok_or_else(|| EngineError::Stopped("no Coordinator".into()))?;
        let assembly = RunningAssembly::new(plan, &self.base_info, self.config.period, self.config.clock, data, self.config.rt.below(5), coordinator)?;
        let run = self.shared.timing.prepare(&assembly);
        Ok(Box::new(Job {
            run,
            assembly,
            stats: EngineStats::default(),
            outcome: None,
            start_tick: 0,
            data: data.clone(),
            cancel_epoch,
            stopping: None,
            done: false,
            name: spec.name.clone(),
            in_progress: Some(InProgress::new()),
            takeover: None,
        }))
    }

    /// Waits for the run to end; terminates its components off the
    /// real-time path and reports.
    pub fn wait(&mut self, handle: RunHandle) -> Result<RunResult, EngineError> {
        let job = self.finished.recv().map_err(|_| EngineError::Stopped(format!("the Coordinator ended during '{}'", handle.name)))?;
        self.running = None;
        if matches!(job.outcome, Some(Outcome::Fault(_))) {
            FAULTS_COLLECTED.fetch_add(1, Ordering::SeqCst);
        }
        let Job { assembly, stats, outcome, start_tick, mut data, .. } = *job;
        let first_tick = assembly.first_tick();
        let ticks = assembly.tick - first_tick;
        let name = assembly.name.clone();
        let components = assembly.finish(&mut data);
        let outcome = outcome.unwrap_or(Outcome::Cancelled);
        Ok(RunResult {
            assembly: name,
            outcome,
            ticks,
            first_tick,
            start_tick,
            base_period: self.config.period,
            clock: self.config.clock,
            components,
            engine: stats.summary(),
            data,
        })
    }

    /// Prepares, runs and waits for `spec`.
    pub fn run(&mut self, spec: &AssemblySpec, data: &AssemblyData) -> Result<RunResult, EngineError> {
        let handle = self.start_run(spec, data)?;
        self.wait(handle)
    }

    /// Asks the running assembly to stop at the next tick; the robot holds.
    /// Safe to call from any thread (e.g. a Ctrl-C handler) via [`Engine::canceller`].
    pub fn cancel(&self) {
        self.shared.cancel.store(true, Ordering::Relaxed);
    }

    /// A handle that cancels the current run from another thread.
    pub fn canceller(&self) -> Canceller {
        Canceller(self.shared.clone())
    }

    /// Stops the Coordinator and gives the base back.
    pub fn stop(mut self) -> Option<Box<dyn Base>> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Option<Box<dyn Base>> {
        if self.running.is_some() {
            self.cancel();
            let _ = self.finished.recv();
            self.running = None;
        }
        let _ = self.commands.send(Command::Stop);
        self.coordinator.take().and_then(|h| h.join().ok())
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Cancels the current run of an engine from any thread.
#[derive(Clone)]
pub struct Canceller(Arc<Shared>);

impl Canceller {
    /// Cancels the run at the engine's next tick; the robot holds.
    pub fn cancel(&self) {
        self.0.cancel.store(true, Ordering::Relaxed);
    }
}

struct Coordinator {
    config: EngineConfig,
    period_ns: u64,
    base: Box<dyn Base>,
    base_outputs: Vec<Value>,
    commands: Receiver<Command>,
    finished: Sender<Box<Job>>,
    shared: Arc<Shared>,
    current: Option<Box<Job>>,
    /// An assembly waiting to replace the current one at the next tick boundary.
    next: Option<Box<Job>>,
    tick: u64,
    /// Ticks a stop may take before the run is handed back anyway ([`STOP_TIME_LIMIT`]).
    stop_ticks: u64,
}

/// The fault of a swapped-in assembly whose first command on base input `port` would move the
/// robot as `what` says, past a limit.
fn takeover_refused(assembly: &RunningAssembly, base: &str, port: usize, what: &str) -> String {
    match assembly.command_source(port) {
        Some((source, input)) => format!("swap: the first command of the new assembly's {source} to {input} {what}: the robot holds"),
        None => format!("swap: the first command of the new assembly to {base} {what}: the robot holds"),
    }
}

/// The fault of commands the base's guard refused ([`Base::guard`]), naming who wrote them.
fn guard_refused(assembly: &RunningAssembly, base: &str, port: usize, what: &str) -> String {
    match assembly.command_source(port) {
        Some((source, input)) => format!("{base}: {source} into {input} {what}: braking"),
        None => format!("{base}: a command {what}: braking"),
    }
}

/// Longest a robot may take to come to a standstill after a fault or Ctrl-C (s).
const STOP_TIME_LIMIT: f64 = 5.0;

impl Coordinator {
    fn new(config: EngineConfig, base: Box<dyn Base>, commands: Receiver<Command>, finished: Sender<Box<Job>>, shared: Arc<Shared>) -> Self {
        let base_outputs = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let period_ns = (config.period * 1e9).round() as u64;
        let stop_ticks = (STOP_TIME_LIMIT / config.period).ceil() as u64;
        Coordinator { config, period_ns, base, base_outputs, commands, finished, shared, current: None, next: None, tick: 0, stop_ticks }
    }

    fn run(mut self) -> Box<dyn Base> {
        if self.config.clock == ClockKind::Wall {
            rt::lock_memory();
        }
        rt::apply_to_current_thread(self.config.rt, "coordinator");
        let mut deadline = monotonic_ns() + self.period_ns;
        loop {
            // Commands arrive between ticks: a switch happens at a tick boundary.
            let idle_virtual = self.current.is_none() && self.next.is_none() && self.config.clock == ClockKind::Virtual;
            let command = if idle_virtual {
                // Virtual time stands still while there is nothing to run.
                self.commands.recv().ok().or(Some(Command::Stop))
            } else {
                self.commands.try_recv().ok()
            };
            match command {
                Some(Command::Stop) => break,
                Some(Command::Run(mut job)) => {
                    job.start_tick = self.tick;
                    job.stats.reset();
                    self.shared.snapshot.swap_run_name(&mut job.name);
                    self.current = Some(job);
                }
                Some(Command::Swap(job)) => self.next = Some(job),
                None => {}
            }
            // A swap: the running assembly ends after its last tick and the new one steps in
            // this one. One that is stopping after a fault or has ended is not interrupted.
            if self.next.is_some() && self.current.as_ref().is_none_or(|j| j.stopping.is_none() && j.outcome.is_none()) {
                let mut job = self.next.take().expect("checked");
                if let Some(mut old) = self.leave() {
                    old.outcome = Some(Outcome::Finished(format!("swapped for '{}'", job.assembly.name)));
                    // Bumpless: the new assembly carries on from the old one's last step.
                    if let Err((source, message)) = job.assembly.continue_from(&mut old.assembly) {
                        let message = format!("swap: {message}: the robot holds");
                        job.outcome = Some(Outcome::Fault(Fault { source, message }));
                        job.stopping = Some(0);
                    }
                    if self.finished.send(old).is_err() {
                        break;
                    }
                } else {
                    // Nothing to take over from (the old run had ended): it starts as a run does.
                    job.takeover = None;
                }
                job.start_tick = self.tick;
                job.stats.reset();
                self.shared.snapshot.swap_run_name(&mut job.name);
                self.current = Some(job);
            }
            let woke = if self.config.clock == ClockKind::Wall {
                sleep_until(deadline);
                let now = monotonic_ns();
                if let Some(job) = &mut self.current {
                    job.stats.wake_latency.record(now.saturating_sub(deadline));
                }
                now
            } else {
                monotonic_ns()
            };
            self.tick_once();
            let end = monotonic_ns();
            if let Some(job) = &mut self.current {
                // A swap's verdict, after the new assembly's first tick (Engine::swap waits for it).
                if let Some(verdict) = job.takeover.take() {
                    let _ = verdict.try_send(job.outcome.as_ref().and_then(Outcome::fault).map(|f| f.message.clone()));
                }
            }
            deadline += self.period_ns;
            if let Some(job) = &self.current {
                // The components' slack work (a Lua state's collector) after the tick's work,
                // ending a tenth of a period before the next deadline on the wall clock.
                let wall = self.config.clock == ClockKind::Wall;
                job.assembly.run_slack(wall.then(|| deadline.saturating_sub(self.period_ns / 10)));
            }
            if let Some(job) = &mut self.current {
                job.stats.cycle.record(end.saturating_sub(woke));
                job.stats.ticks += 1;
                if self.config.clock == ClockKind::Wall && end > deadline {
                    job.stats.late_ticks += 1;
                }
                // After the tick's work: a copy for a reader that asked (one relaxed load otherwise).
                self.shared.timing.offer(job);
                if job.done {
                    let job = self.leave().expect("current job");
                    if self.finished.send(job).is_err() {
                        break;
                    }
                }
            }
        }
        self.base
    }

    /// The assembly stepping leaves (it ended, or was replaced): no longer in
    /// [`runs_in_progress`].
    fn leave(&mut self) -> Option<Box<Job>> {
        let mut job = self.current.take();
        if let Some(j) = &mut job {
            j.in_progress = None;
            if matches!(j.outcome, Some(Outcome::Fault(_))) {
                RUNS_FAULTED.fetch_add(1, Ordering::SeqCst);
            }
        }
        job
    }

    /// One tick: sense, step the assembly, actuate (or hold).
    fn tick_once(&mut self) {
        let tick = self.tick;
        let sensed = self.base.sense(tick, &mut self.base_outputs);
        let mut hold = true;
        if let Some(job) = &mut self.current {
            if let Some(ticks) = &mut job.stopping {
                // After a fault or Ctrl-C: brake to a standstill before the result goes back.
                *ticks += 1;
                if let (Step::Fault(m), Some(Outcome::Cancelled)) = (&sensed, &job.outcome) {
                    job.outcome = Some(Outcome::Fault(Fault::base(self.base.name(), format!("{}: {m}", self.base.name()))));
                }
                let _ = self.base.stop(tick);
                if self.base.is_still() || *ticks >= self.stop_ticks {
                    if !self.base.is_still() {
                        if let Some(Outcome::Fault(Fault { message: m, .. }) | Outcome::Finished(m)) = &mut job.outcome {
                            m.push_str(&format!("; the robot did not come to a standstill within {:.1} s", STOP_TIME_LIMIT));
                        }
                    }
                    job.done = true;
                }
                self.shared.snapshot.write(tick, &self.base_outputs, None, Some(job.start_tick), true);
                self.tick += 1;
                self.shared.tick.store(self.tick, Ordering::Relaxed);
                return;
            }
            let shared = &self.shared;
            let epoch = job.cancel_epoch;
            let cancelled = || shared.cancel.load(Ordering::Relaxed) || CANCEL_ALL.load(Ordering::Relaxed) != epoch;
            let base_faulted = matches!(sensed, Step::Fault(_));
            let step = match sensed {
                Step::Fault(m) => Step::Fault(format!("{}: {m}", self.base.name())),
                _ if cancelled() => {
                    job.outcome = Some(Outcome::Cancelled);
                    Step::Continue
                }
                _ => job.assembly.step(&self.base_outputs, self.config.clock, &cancelled),
            };
            // An assembly swapped in: its first commands must not jerk the robot.
            let step = match step {
                Step::Continue | Step::Finish(_) if job.takeover.is_some() => match self.base.check_takeover(job.assembly.commands()) {
                    Ok(()) => step,
                    Err((port, what)) => Step::Fault(takeover_refused(&job.assembly, self.base.name(), port, &what)),
                },
                step => step,
            };
            match step {
                // The commands of a finished assembly's last tick still go out.
                Step::Continue if job.outcome.is_none() => hold = false,
                Step::Continue => {}
                Step::Finish(reason) => {
                    hold = false;
                    job.outcome = Some(Outcome::Finished(reason));
                }
                Step::Fault(_) if cancelled() => job.outcome = Some(Outcome::Cancelled),
                Step::Fault(message) => {
                    let source = if base_faulted { FaultSource::Base { name: self.base.name().to_string() } } else { job.assembly.fault_source() };
                    job.outcome = Some(Outcome::Fault(Fault { source, message }));
                }
            }
            // The base's last line: commands past the robot's limits never go out.
            if !hold && job.outcome.as_ref().is_none_or(|o| matches!(o, Outcome::Finished(_))) {
                if let Err((port, what)) = self.base.guard(job.assembly.commands()) {
                    job.outcome = Some(Outcome::Fault(Fault::base(self.base.name(), guard_refused(&job.assembly, self.base.name(), port, &what))));
                }
            }
            let stop = matches!(job.outcome, Some(Outcome::Fault(_) | Outcome::Cancelled));
            let actuated = if stop {
                // The robot starts braking in this very tick.
                self.base.stop(tick)
            } else {
                let commands = if hold { None } else { Some(job.assembly.commands()) };
                self.base.actuate(tick, commands)
            };
            if let Step::Fault(m) = actuated {
                if !matches!(job.outcome, Some(Outcome::Fault(_))) {
                    job.outcome = Some(Outcome::Fault(Fault::base(self.base.name(), format!("{}: {m}", self.base.name()))));
                }
            }
            match &job.outcome {
                Some(Outcome::Fault(_) | Outcome::Cancelled) if !self.base.is_still() => job.stopping = Some(0),
                Some(_) => job.done = true,
                None => {}
            }
            let commands = (!hold && !stop).then(|| job.assembly.commands());
            self.shared.snapshot.write(tick, &self.base_outputs, commands, Some(job.start_tick), stop && !self.base.is_still());
        } else {
            let _ = self.base.actuate(tick, None);
            self.shared.snapshot.write(tick, &self.base_outputs, None, None, false);
        }
        self.tick += 1;
        self.shared.tick.store(self.tick, Ordering::Relaxed);
    }
}

//! What the base measured and was commanded in the last tick, for readers on other threads
//! (`robot:state()` in the REPL, a live view): written by the Coordinator every tick without a
//! lock or an allocation, read as a consistent copy by anyone (a sequence lock: the reader
//! retries while a tick is being written).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::base::Commands;
use super::component::ComponentInfo;
use super::value::{Value, ValueType};

/// Where one port's numbers lie in the snapshot.
#[derive(Clone, Debug)]
struct Slot {
    name: String,
    ty: ValueType,
    at: usize,
    len: usize,
}

/// The numbers of a port as a reader gets them.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotPort {
    /// The port's name ("q", "qd", "tau", "q_cmd" …).
    pub name: String,
    /// Its value in the tick (a number port as its type; strings are not kept).
    pub value: Value,
}

/// A consistent copy of one tick.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The tick it describes (the Coordinator's count).
    pub tick: u64,
    /// The base's outputs (its measurements) in that tick.
    pub measured: Vec<SnapshotPort>,
    /// The commands sent to the base (its inputs); empty while it holds.
    pub commanded: Vec<SnapshotPort>,
    /// Whether the base held (no assembly drove it) in that tick.
    pub holding: bool,
    /// Whether the robot was braking to a standstill in that tick (after a fault or Ctrl-C,
    /// [`crate::Base::stop`]): it still moves, though nothing commands it.
    pub stopping: bool,
    /// The assembly running then: its name, and the ticks since it started.
    pub running: Option<(String, u64)>,
    /// Whether any tick was written yet (an engine on the virtual clock does not tick until it
    /// runs something).
    pub written: bool,
}

/// The robot's one state, as an operator reads it (the operator page, the live view's
/// `/morc/state`, ROS 2's `~/state`): one word, so every view says the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotState {
    /// No run goes: nothing commands the robot.
    Idle,
    /// A run commands motion.
    Moving,
    /// A run goes and nothing commands motion: the base holds the robot still.
    Holding,
    /// The running motion is paused on its path.
    Paused,
    /// A jog session runs.
    Jogging,
    /// Braking to a standstill (after a fault or Ctrl-C): it still moves, though nothing
    /// commands it; the joints' speeds say how fast.
    Stopping,
    /// A fault waits for the operator.
    Faulted,
}

/// What besides the snapshot decides the [`RobotState`].
#[derive(Clone, Copy, Debug, Default)]
pub struct StateFacts {
    /// A run is on the engine.
    pub running: bool,
    /// The base braked in the last tick ([`Snapshot::stopping`]).
    pub stopping: bool,
    /// The base held in the last tick ([`Snapshot::holding`]).
    pub holding: bool,
    /// A fault waits for a reset (the last run's, or a drive's latched one).
    pub faulted: bool,
    /// A jog session runs.
    pub jogging: bool,
    /// A motion runs and a pause is asked for.
    pub paused: bool,
}

impl RobotState {
    /// The state: braking to a standstill first (the arm still moves), then a fault (it needs
    /// the operator), then what runs: a jog session, a motion paused on its path, the base
    /// holding, moving; no run: idle.
    pub fn of(f: StateFacts) -> RobotState {
        if f.running && f.stopping {
            RobotState::Stopping
        } else if f.faulted {
            RobotState::Faulted
        } else if !f.running {
            RobotState::Idle
        } else if f.jogging {
            RobotState::Jogging
        } else if f.paused {
            RobotState::Paused
        } else if f.holding {
            RobotState::Holding
        } else {
            RobotState::Moving
        }
    }

    /// Its word: "idle", "moving", "holding", "paused", "jogging", "stopping" or "faulted".
    pub fn name(self) -> &'static str {
        match self {
            RobotState::Idle => "idle",
            RobotState::Moving => "moving",
            RobotState::Holding => "holding",
            RobotState::Paused => "paused",
            RobotState::Jogging => "jogging",
            RobotState::Stopping => "stopping",
            RobotState::Faulted => "faulted",
        }
    }
}

/// The snapshot cell shared by the Coordinator (writer) and readers.
#[derive(Debug)]
pub struct BaseSnapshot {
    /// Even: stable; odd: a tick is being written.
    sequence: AtomicU64,
    tick: AtomicU64,
    holding: AtomicBool,
    stopping: AtomicBool,
    /// The running assembly's start tick + 1 (0: none).
    run_start: AtomicU64,
    /// Its name, set when a run is started (off the real-time path).
    run_name: Mutex<String>,
    outputs: Vec<Slot>,
    inputs: Vec<Slot>,
    /// Per input: whether the assembly drove it in the tick.
    driven: Box<[AtomicBool]>,
    /// f64 bits of every number, outputs first.
    numbers: Box<[AtomicU64]>,
}

fn slots(ports: &[super::component::PortInfo], start: usize) -> (Vec<Slot>, usize) {
    let mut at = start;
    let mut slots = Vec::new();
    for p in ports {
        let len = match p.ty {
            ValueType::Vector(n) => n,
            // Lists and records never are ports (Engine::start refuses them): no numbers either.
            ValueType::String | ValueType::List | ValueType::Record => 0,
            _ => 1,
        };
        slots.push(Slot { name: p.name.clone(), ty: p.ty, at, len });
        at += len;
    }
    (slots, at)
}

impl BaseSnapshot {
    /// A cell laid out for the ports of `base`.
    pub fn new(base: &ComponentInfo) -> BaseSnapshot {
        let (outputs, end) = slots(&base.outputs, 0);
        let (inputs, end) = slots(&base.inputs, end);
        BaseSnapshot {
            sequence: AtomicU64::new(0),
            tick: AtomicU64::new(0),
            holding: AtomicBool::new(true),
            stopping: AtomicBool::new(false),
            run_start: AtomicU64::new(0),
            run_name: Mutex::new(String::new()),
            driven: inputs.iter().map(|_| AtomicBool::new(false)).collect(),
            outputs,
            inputs,
            numbers: (0..end).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Names the assembly that starts now (the Coordinator, at the switch): swaps `name` in,
    /// the previous name out into `name` (no allocation, no free on the real-time thread).
    pub(crate) fn swap_run_name(&self, name: &mut String) {
        if let Ok(mut n) = self.run_name.try_lock() {
            std::mem::swap(&mut *n, name);
        }
    }

    /// Writes one tick (the Coordinator; no lock, no allocation). `run_start`: the running
    /// assembly's start tick; `stopping`: the base is braking to a standstill.
    pub(crate) fn write(&self, tick: u64, measured: &[Value], commands: Option<Commands>, run_start: Option<u64>, stopping: bool) {
        let s = self.sequence.load(Ordering::Relaxed);
        self.sequence.store(s.wrapping_add(1), Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::Release);
        self.tick.store(tick, Ordering::Relaxed);
        self.run_start.store(run_start.map_or(0, |t| t + 1), Ordering::Relaxed);
        for (slot, v) in self.outputs.iter().zip(measured) {
            self.put(slot, v);
        }
        let mut any = false;
        for (i, slot) in self.inputs.iter().enumerate() {
            let v = commands.as_ref().and_then(|c| c.get(i));
            if let Some(v) = v {
                self.put(slot, v);
            }
            self.driven[i].store(v.is_some(), Ordering::Relaxed);
            any |= v.is_some();
        }
        // Holding: nothing drives the base.
        self.holding.store(!any, Ordering::Relaxed);
        self.stopping.store(stopping, Ordering::Relaxed);
        self.sequence.store(s.wrapping_add(2), Ordering::Release);
    }

    #[inline]
    fn put(&self, slot: &Slot, v: &Value) {
        match v {
            Value::Real(x) => self.numbers[slot.at].store(x.to_bits(), Ordering::Relaxed),
            Value::Integer(i) => self.numbers[slot.at].store((*i as f64).to_bits(), Ordering::Relaxed),
            Value::Boolean(b) => self.numbers[slot.at].store(f64::from(u8::from(*b)).to_bits(), Ordering::Relaxed),
            Value::Vector(xs) => {
                for (cell, x) in self.numbers[slot.at..slot.at + slot.len].iter().zip(xs) {
                    cell.store(x.to_bits(), Ordering::Relaxed);
                }
            }
            Value::String(_) | Value::List(_) | Value::Record(_) => {}
        }
    }

    fn get(&self, slot: &Slot) -> Value {
        let x = |i: usize| f64::from_bits(self.numbers[slot.at + i].load(Ordering::Relaxed));
        match slot.ty {
            ValueType::Real => Value::Real(x(0)),
            ValueType::Integer => Value::Integer(x(0) as i64),
            ValueType::Boolean => Value::Boolean(x(0) != 0.0),
            ValueType::Vector(n) => Value::Vector((0..n).map(x).collect()),
            ValueType::String => Value::String(String::new()),
            ValueType::List | ValueType::Record => Value::zero(slot.ty),
        }
    }

    /// A consistent copy of the last tick written (allocates: for the program's side).
    pub fn read(&self) -> Snapshot {
        loop {
            let before = self.sequence.load(Ordering::Acquire);
            if before % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let tick = self.tick.load(Ordering::Relaxed);
            let holding = self.holding.load(Ordering::Relaxed);
            let stopping = self.stopping.load(Ordering::Relaxed);
            let run_start = self.run_start.load(Ordering::Relaxed);
            let port = |s: &Slot| SnapshotPort { name: s.name.clone(), value: self.get(s) };
            let measured: Vec<SnapshotPort> = self.outputs.iter().map(port).collect();
            let commanded: Vec<SnapshotPort> = self.inputs.iter().zip(self.driven.iter()).filter(|(s, d)| s.ty != ValueType::String && d.load(Ordering::Relaxed)).map(|(s, _)| port(s)).collect();
            std::sync::atomic::fence(Ordering::Acquire);
            if self.sequence.load(Ordering::Relaxed) == before {
                let running = (run_start > 0).then(|| (self.run_name.lock().unwrap_or_else(|e| e.into_inner()).clone(), tick.saturating_sub(run_start - 1)));
                return Snapshot { tick, measured, commanded, holding, stopping, running, written: before > 0 };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::PortInfo;

    #[test]
    fn a_reader_gets_the_tick_written_last() {
        let info = ComponentInfo::new("b", "")
            .output(PortInfo::new("q", ValueType::Vector(2)))
            .output(PortInfo::new("ok", ValueType::Boolean))
            .input(PortInfo::new("q_cmd", ValueType::Vector(2)));
        let s = BaseSnapshot::new(&info);
        s.write(7, &[Value::Vector(vec![1.0, 2.0]), Value::Boolean(true)], None, None, false);
        let r = s.read();
        assert_eq!((r.tick, r.holding, r.running.clone()), (7, true, None));
        assert_eq!(r.measured[0].value, Value::Vector(vec![1.0, 2.0]));
        assert_eq!(r.measured[1].value, Value::Boolean(true));
        assert!(r.commanded.is_empty());
        s.swap_run_name(&mut "ptp".to_string());
        let cmd = [Value::Vector(vec![3.0, 4.0])];
        s.write(9, &[Value::Vector(vec![1.5, 2.5]), Value::Boolean(false)], Some(Commands::all(&cmd)), Some(5), false);
        let r = s.read();
        assert_eq!(r.running, Some(("ptp".to_string(), 4)));
        assert_eq!(r.commanded[0], SnapshotPort { name: "q_cmd".into(), value: Value::Vector(vec![3.0, 4.0]) });
    }

    #[test]
    fn readers_never_see_a_torn_tick() {
        let info = ComponentInfo::new("b", "").output(PortInfo::new("q", ValueType::Vector(6)));
        let s = BaseSnapshot::new(&info);
        let mut values = [Value::Vector(vec![0.0; 6])];
        let o = morc_test_support::overlap::read_while_writing(
            100,
            |k| {
                values[0].as_mut_slice().fill(k as f64);
                s.write(k, &values, None, None, false);
            },
            || {
                let r = s.read();
                let Value::Vector(q) = &r.measured[0].value else { panic!("{:?}", r.measured[0].value) };
                assert!(q.iter().all(|x| *x == r.tick as f64), "tick {} with {q:?}", r.tick);
                Some(r.tick)
            },
        );
        println!("BaseSnapshot: {} reads, the tick changing {} times, during {} writes", o.reads, o.changes, o.writes);
        assert_eq!(s.read().tick, o.writes);
    }
}

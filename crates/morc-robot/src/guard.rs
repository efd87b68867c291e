//! The base's last line: every command that reaches a robot, whoever wrote it — a skill, a
//! user's assembly, a Lua or FMU component, a ROS 2 subscriber, the operator page — is checked
//! against the joints' limits before it goes out ([`Base::guard`]). Skills, the swap check and
//! the motion components refuse earlier and more kindly; this is where a plain
//! `a:connect("step.y", "robot.q_cmd")` stops.
//!
//! Per command port, as the drives are run:
//! - `q_cmd` (positions): within the position limits; the speed and acceleration the successive
//!   commands ask for (from the last command, or from where the robot stands when it held)
//!   within the joint's limits;
//! - `qd_cmd` (velocities): within the velocity limit, changing by no more than the acceleration
//!   limit allows, and not taking the joint past a position limit within the next cycle;
//! - `tau_cmd` (torques): within the torque limit, and not pushing a joint that is past a
//!   position limit further out;
//! - the feed-forwards `qd_ff`, `tau_ff`: numbers (they add to the drive's own loop, whose
//!   output saturates at the torque limit).
//!
//! A robot standing outside its position limits (moved by hand, brakes released) accepts only
//! commands that take it back towards them, as jog does. The engine faults naming the joint, the
//! limit, the value and the component and port that wrote it, and the robot brakes from where it
//! is: the command never goes out, so a joint passes its limit by at most the braking distance
//! from the speed it was commanded before.
//!
//! Velocities and torques are allowed [`SAMPLING_MARGIN`] over the limit (positions sampled
//! from a trajectory planned at a joint's limit differ from it by rounding); accelerations, the
//! mean over [`ACCELERATION_WINDOW`], up to [`ACCELERATION_FACTOR`] times the limit.

use std::sync::Arc;

use morc_kernel::{Base, BusDiagnostics, Commands, ComponentInfo, Step, Value};

use crate::{CommandMode, Robot};

/// How far over a velocity or torque limit a command may ask (a part of the limit): a
/// trajectory planned at the limit and sampled each cycle differs from it by the rounding of
/// its samples, far below this.
pub const SAMPLING_MARGIN: f64 = 0.02;

/// How many times its acceleration limit a position command's mean acceleration may be (or, if
/// more, its torque limit on its motor's inertia alone: what no drive can exceed). The
/// robot file's acceleration limits are the planners': the time-optimal motions give them up
/// for the torque limits (`acc_scale = 0`: measured 1.5× on the RX130L's), and a reference
/// smoothed by the motion commands' Bessel filter overshoots a profile planned at the limit
/// where its phases switch (1.16× on the KR 16's 5° PTP of the MoRC experiment). What the guard
/// stops is what no planner asks: a step, a jump in speed, a motion started at full speed.
pub const ACCELERATION_FACTOR: f64 = 2.0;

/// How close (rad or m) the arm must come to where a braking ramp ended before it counts as
/// still: the next motion starts from the measured position, and a drive in CSP derives its
/// velocity feed-forward from the targets' slope, so what is left jumps its first cycle.
const SETTLED: f64 = 1e-4;

/// Over how long (s) a position command's acceleration is measured: the mean over 10 ms, as a
/// drive's own filtering sees it (a cycle's jump at a trajectory's phase switch is no
/// acceleration the arm makes), while a step or a move from rest is caught in its first cycles.
pub const ACCELERATION_WINDOW: f64 = 0.01;

/// Where a joint's bound on its commands' acceleration comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AccelerationBound {
    /// [`ACCELERATION_FACTOR`] times its acceleration limit.
    Limit,
    /// Its torque limit on its motor's reflected inertia (the armature) alone: more than any
    /// load lets it reach, so only what no drive can follow is refused.
    Torque,
}

/// What a command port of the base asks of the joints its elements drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asks {
    /// `q_cmd`: positions.
    Position,
    /// `qd_cmd`: velocities.
    Velocity,
    /// `tau_cmd`: torques.
    Torque,
    /// `qd_ff`: a velocity feed-forward beside the positions.
    VelocityFeedForward,
    /// `tau_ff`: a torque feed-forward (offset) beside the other commands.
    TorqueFeedForward,
}

/// One guarded input of the base: its port, what it asks, and the joint of each element.
struct GuardedPort {
    input: usize,
    asks: Asks,
    joints: Vec<usize>,
}

/// The limits check of the commands to one robot's base, with the history it needs (the last
/// two position commands and the last velocity command per joint). Nothing allocated per tick.
pub struct CommandGuard {
    robot: Arc<Robot>,
    period: f64,
    ports: Vec<GuardedPort>,
    /// The base's measured positions and velocities (output ports), when it has them.
    q_output: Option<usize>,
    qd_output: Option<usize>,
    q: Vec<f64>,
    qd: Vec<f64>,
    /// Per joint, the last `window + 1` position commands that went out (a ring, newest at
    /// `head[j]`), and how many of them there are since the robot last held.
    history: Vec<f64>,
    head: Vec<usize>,
    seen: Vec<usize>,
    /// Over how many cycles an acceleration is measured ([`ACCELERATION_WINDOW`]).
    window: usize,
    /// Per joint, the largest mean acceleration let pass, and why that much.
    acceleration_bound: Vec<(f64, AccelerationBound)>,
    /// Per joint: the last velocity command, and whether there is one since the robot held.
    last_velocity: Vec<f64>,
    velocity_seen: Vec<bool>,
    /// Whether the robot was found outside its limits when first measured (said once).
    told_outside: bool,
}

impl CommandGuard {
    /// The guard of `robot`'s commands to a base described by `info`, cycled every `period` s:
    /// its inputs `q_cmd`, `qd_cmd`, `tau_cmd`, `qd_ff` and `tau_ff` are checked (a mode's port
    /// drives the joints in that mode, in joint order; one of all the joints' length drives all
    /// of them), its outputs `q` and `qd` tell where the robot is.
    pub fn new(robot: Arc<Robot>, info: &ComponentInfo, period: f64) -> Self {
        let n = robot.dof();
        let in_mode = |mode: CommandMode| -> Vec<usize> { (0..n).filter(|&j| robot.joints[j].drive.mode == mode).collect() };
        let mut ports = Vec::new();
        for (input, port) in info.inputs.iter().enumerate() {
            let (asks, mode) = match port.name.as_str() {
                "q_cmd" => (Asks::Position, Some(CommandMode::Position)),
                "qd_cmd" => (Asks::Velocity, Some(CommandMode::Velocity)),
                "tau_cmd" => (Asks::Torque, Some(CommandMode::Torque)),
                "qd_ff" => (Asks::VelocityFeedForward, None),
                "tau_ff" => (Asks::TorqueFeedForward, None),
                _ => continue,
            };
            let width = Value::zero(port.ty).as_slice().len();
            let joints = match mode {
                _ if width == n => (0..n).collect(),
                Some(mode) if in_mode(mode).len() == width => in_mode(mode),
                // Not the robot's joints (a bare bus's drives): nothing to check them against.
                _ => continue,
            };
            ports.push(GuardedPort { input, asks, joints });
        }
        let output = |name: &str| info.outputs.iter().position(|p| p.name == name && Value::zero(p.ty).as_slice().len() == n);
        let window = ((ACCELERATION_WINDOW / period).round() as usize).max(1);
        let acceleration_bound = (0..n)
            .map(|j| {
                let l = &robot.joints[j].limits;
                let armature = robot.model.drive_trains().get(j).map_or(0.0, |d| d.armature);
                let by_torque = if armature > 0.0 { l.torque / armature } else { 0.0 };
                if by_torque > l.acceleration * ACCELERATION_FACTOR {
                    (by_torque, AccelerationBound::Torque)
                } else {
                    (l.acceleration * ACCELERATION_FACTOR, AccelerationBound::Limit)
                }
            })
            .collect();
        CommandGuard {
            acceleration_bound,
            q_output: output("q"),
            qd_output: output("qd"),
            q: vec![f64::NAN; n],
            qd: vec![0.0; n],
            history: vec![0.0; n * (window + 1)],
            head: vec![0; n],
            seen: vec![0; n],
            window,
            last_velocity: vec![0.0; n],
            velocity_seen: vec![false; n],
            told_outside: false,
            ports,
            period,
            robot,
        }
    }

    /// Takes the base's measurements (after its `sense`).
    pub fn observe(&mut self, outputs: &[Value]) {
        if let Some(p) = self.q_output {
            self.q.copy_from_slice(outputs[p].as_slice());
        }
        if let Some(p) = self.qd_output {
            self.qd.copy_from_slice(outputs[p].as_slice());
        }
        if !self.told_outside && self.q.iter().all(|q| q.is_finite()) {
            self.told_outside = true;
            if let Some(j) = self.robot.outside_limits(&self.q) {
                log::warn!("{}: {}: it accepts only commands that move it back towards its limits", self.robot.name, self.outside(j, self.q[j]));
            }
        }
    }

    /// The robot holds or brakes on its own: the next commands start from where it stands.
    pub fn forget(&mut self) {
        self.seen.fill(0);
        self.velocity_seen.fill(false);
    }

    /// Whether `commands` stay within the limits: else the input port and what it asks
    /// ("commands A2 to 60.0°, past its upper limit 35.0°"). When they do, they are taken as the
    /// ones that go out.
    pub fn check(&mut self, commands: Commands) -> Result<(), (usize, String)> {
        for p in 0..self.ports.len() {
            let port = &self.ports[p];
            let Some(value) = commands.get(port.input) else {
                // Not driven: the joints the port moves hold where they are.
                if port.asks == Asks::Position {
                    for &j in &port.joints {
                        self.seen[j] = 0;
                    }
                }
                continue;
            };
            let values = value.as_slice();
            if values.len() != port.joints.len() {
                continue;
            }
            for (k, &j) in port.joints.iter().enumerate() {
                if let Some(what) = self.check_one(port.asks, j, values[k]) {
                    return Err((port.input, what));
                }
            }
        }
        // Within the limits: these go out.
        for port in &self.ports {
            let Some(value) = commands.get(port.input) else { continue };
            let values = value.as_slice();
            if values.len() != port.joints.len() {
                continue;
            }
            for (k, &j) in port.joints.iter().enumerate() {
                match port.asks {
                    Asks::Position => {
                        let size = self.window + 1;
                        self.head[j] = (self.head[j] + 1) % size;
                        self.history[j * size + self.head[j]] = values[k];
                        self.seen[j] = (self.seen[j] + 1).min(size);
                    }
                    Asks::Velocity => {
                        self.last_velocity[j] = values[k];
                        self.velocity_seen[j] = true;
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Joint `j`'s position command `k` cycles ago (1: the last; `k` at most `seen[j]`).
    fn past(&self, j: usize, k: usize) -> f64 {
        let size = self.window + 1;
        self.history[j * size + (self.head[j] + size - (k - 1)) % size]
    }

    /// What command `x` to joint `j` asks past the joint's limits, if anything.
    fn check_one(&self, asks: Asks, j: usize, x: f64) -> Option<String> {
        let joint = &self.robot.joints[j];
        let l = &joint.limits;
        let name = &joint.name;
        if !x.is_finite() {
            return Some(format!("commands {name} {x}: not a number"));
        }
        let over = |value: f64, limit: f64| value.abs() > limit * (1.0 + SAMPLING_MARGIN);
        let dt = self.period;
        match asks {
            Asks::Position => {
                // From the last command, or from where the robot stands when it held.
                let from = if self.seen[j] > 0 { self.past(j, 1) } else { self.q[j] };
                if let Some(what) = self.past_position_limit(j, from, x) {
                    return Some(what);
                }
                if !from.is_finite() {
                    return None;
                }
                let v = (x - from) / dt;
                if over(v, l.velocity) {
                    return Some(format!("moves {name} at {}, past its velocity limit {}", self.rate(j, v), self.rate(j, l.velocity)));
                }
                if self.seen[j] > 0 {
                    // The mean acceleration over the window (a robot that held stood still
                    // before): a trajectory's samples at a phase switch, or a filter's ripple,
                    // jump for a cycle without asking more of the drive.
                    let k = self.window;
                    let v_then = if self.seen[j] > k { (self.past(j, k) - self.past(j, k + 1)) / dt } else { 0.0 };
                    let a = (v - v_then) / (k as f64 * dt);
                    if let Some(what) = self.past_acceleration(j, a) {
                        return Some(what);
                    }
                }
            }
            Asks::Velocity => {
                if over(x, l.velocity) {
                    return Some(format!("moves {name} at {}, past its velocity limit {}", self.rate(j, x), self.rate(j, l.velocity)));
                }
                let from = if self.velocity_seen[j] { self.last_velocity[j] } else { self.qd[j] };
                let a = (x - from) / dt;
                if from.is_finite() {
                    if let Some(what) = self.past_acceleration(j, a) {
                        return Some(what);
                    }
                }
                let q = self.q[j];
                if let Some(what) = self.past_position_limit(j, q, q + x * dt) {
                    return Some(what);
                }
            }
            Asks::Torque => {
                if over(x, l.torque) {
                    let unit = if self.robot.is_prismatic(j) { "N" } else { "N·m" };
                    return Some(format!("asks {name} for {x:.1} {unit}, past its torque limit {:.1} {unit}", l.torque));
                }
                // Under torque control the drive holds no position: a joint past its limit and
                // moving further out is stopped.
                let (q, qd) = (self.q[j], self.qd[j]);
                if let Some(what) = self.past_position_limit(j, q, q + qd * dt) {
                    return Some(what);
                }
            }
            // A feed-forward adds to the drive's own loop, whose output saturates at the
            // torque limit: a number is all it must be.
            Asks::TorqueFeedForward | Asks::VelocityFeedForward => {}
        }
        None
    }

    /// Whether acceleration `a` is more than joint `j` is let: what it asks, and the bound.
    fn past_acceleration(&self, j: usize, a: f64) -> Option<String> {
        let (bound, why) = self.acceleration_bound[j];
        if a.abs() <= bound {
            return None;
        }
        let l = &self.robot.joints[j].limits;
        let why = match why {
            AccelerationBound::Limit => format!("twice its acceleration limit {}", self.acceleration(j, l.acceleration)),
            AccelerationBound::Torque => format!("its torque limit {:.1} {} on its motor's inertia alone", l.torque, if self.robot.is_prismatic(j) { "N" } else { "N·m" }),
        };
        Some(format!("accelerates {} at {}, past its bound {} ({why})", self.robot.joints[j].name, self.acceleration(j, a), self.acceleration(j, bound)))
    }

    /// Whether going from `from` to `to` takes joint `j` past a position limit: outside its
    /// limits only a move back towards them passes.
    fn past_position_limit(&self, j: usize, from: f64, to: f64) -> Option<String> {
        let l = &self.robot.joints[j].limits;
        let name = &self.robot.joints[j].name;
        let show = |x: f64| self.robot.show(j, x, 1);
        if to > l.upper && !(from > l.upper && to <= from) {
            return Some(if from > l.upper {
                format!("{}: commanded further out, to {}", self.outside(j, from), show(to))
            } else {
                format!("commands {name} to {}, past its upper limit {}", show(to), show(l.upper))
            });
        }
        if to < l.lower && !(from < l.lower && to >= from) {
            return Some(if from < l.lower {
                format!("{}: commanded further out, to {}", self.outside(j, from), show(to))
            } else {
                format!("commands {name} to {}, past its lower limit {}", show(to), show(l.lower))
            });
        }
        None
    }

    /// "A2 is at 40.0°, past its upper limit 35.0°".
    fn outside(&self, j: usize, q: f64) -> String {
        let l = &self.robot.joints[j].limits;
        let (which, limit) = if q > l.upper { ("upper", l.upper) } else { ("lower", l.lower) };
        format!("{} is at {}, past its {which} limit {}", self.robot.joints[j].name, self.robot.show(j, q, 1), self.robot.show(j, limit, 1))
    }

    fn rate(&self, j: usize, v: f64) -> String {
        self.robot.show_rate(j, v, 1)
    }

    fn acceleration(&self, j: usize, a: f64) -> String {
        format!("{}/s²", self.robot.show(j, a, 1))
    }
}

/// How a guarded base brakes after a fault or Ctrl-C ([`Base::stop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Braking {
    /// The base brakes by itself (the direct simulation ramps its reference down at the joints'
    /// acceleration limits).
    Base,
    /// The base holds where it is when stopped (a bus's drives hold their actual position, which
    /// slams a moving arm into its torque limits): the guard first ramps the position commands
    /// down from the speed they were commanded at each joint's acceleration limit, then the base
    /// holds. Where the drives do not all take positions, the base's own stop.
    Ramp,
}

/// The braking reference of [`Braking::Ramp`]: position and velocity per joint, and the
/// commands it goes out as (preallocated: nothing allocated while braking).
struct Ramp {
    /// The base's q_cmd input.
    input: usize,
    position: Vec<f64>,
    velocity: Vec<f64>,
    commands: Vec<Value>,
    driven: Vec<bool>,
    /// Braking now; and whether it ended since the robot was last commanded.
    active: bool,
    done: bool,
    /// The base reported a fault (a bus or drive fault): its drives brake by themselves (fault
    /// reaction, quick stop) or cannot be reached, so the base's own stop, not the ramp.
    base_faulted: bool,
}

impl Ramp {
    /// Whether the arm, measured at `q`, stands where the ramp ended.
    fn settled(&self, q: &[f64]) -> bool {
        self.position.iter().zip(q).all(|(p, q)| (p - q).abs() < SETTLED)
    }
}

/// A robot's base with its commands guarded ([`CommandGuard`]); everything else is the base's.
pub struct GuardedBase {
    base: Box<dyn Base>,
    guard: CommandGuard,
    ramp: Option<Ramp>,
}

impl GuardedBase {
    /// `base`, the engine's base for `robot` (its direct simulation, or the bus its drives are
    /// on), cycled every `period` s, with every command checked against the robot's limits and
    /// braking as `braking` says.
    pub fn wrap(robot: Arc<Robot>, base: Box<dyn Base>, period: f64, braking: Braking) -> Box<dyn Base> {
        let guard = CommandGuard::new(robot, base.info(), period);
        let n = guard.robot.dof();
        let ramp = match braking {
            Braking::Base => None,
            Braking::Ramp => guard.ports.iter().find(|p| p.asks == Asks::Position && p.joints.len() == n).map(|p| {
                let inputs = &base.info().inputs;
                let mut driven = vec![false; inputs.len()];
                driven[p.input] = true;
                Ramp {
                    input: p.input,
                    position: vec![0.0; n],
                    velocity: vec![0.0; n],
                    commands: inputs.iter().map(|i| Value::zero(i.ty)).collect(),
                    driven,
                    active: false,
                    done: false,
                    base_faulted: false,
                }
            }),
        };
        Box::new(GuardedBase { base, guard, ramp })
    }
}

impl Base for GuardedBase {
    fn name(&self) -> &str {
        self.base.name()
    }
    fn info(&self) -> &ComponentInfo {
        self.base.info()
    }
    fn sense(&mut self, tick: u64, outputs: &mut [Value]) -> Step {
        let step = self.base.sense(tick, outputs);
        self.guard.observe(outputs);
        if let (Some(ramp), Step::Fault(_)) = (&mut self.ramp, &step) {
            ramp.base_faulted = true;
            ramp.active = false;
        }
        step
    }
    fn guard(&mut self, commands: Commands) -> Result<(), (usize, String)> {
        self.guard.check(commands)
    }
    fn actuate(&mut self, tick: u64, commands: Option<Commands>) -> Step {
        if commands.is_none() {
            self.guard.forget();
        }
        if let Some(ramp) = &mut self.ramp {
            (ramp.active, ramp.done) = (false, false);
            ramp.base_faulted &= commands.is_none();
        }
        self.base.actuate(tick, commands)
    }
    fn stop(&mut self, tick: u64) -> Step {
        let Some(ramp) = &mut self.ramp else {
            self.guard.forget();
            return self.base.stop(tick);
        };
        if ramp.base_faulted {
            self.guard.forget();
            return self.base.stop(tick);
        }
        if !ramp.active && !ramp.done {
            // From the last command that went out, at the speed it was commanded.
            let g = &self.guard;
            for j in 0..ramp.position.len() {
                (ramp.position[j], ramp.velocity[j]) = match g.seen[j] {
                    0 => (g.q[j], 0.0),
                    1 => (g.past(j, 1), 0.0),
                    _ => (g.past(j, 1), (g.past(j, 1) - g.past(j, 2)) / g.period),
                };
            }
            ramp.active = ramp.position.iter().all(|x| x.is_finite());
            ramp.done = !ramp.active;
        }
        self.guard.forget();
        if !ramp.active && (!ramp.done || ramp.settled(&self.guard.q)) {
            return self.base.stop(tick);
        }
        // Braking, then holding where the ramp ended until the arm has caught up with it (it
        // trails its reference by the following error and the bus's latency): the drives then
        // latch their actual position as the hold, where the next motion starts from.
        let dt = self.guard.period;
        for (j, joint) in self.guard.robot.joints.iter().enumerate() {
            let v = ramp.velocity[j];
            let v_next = v - (joint.limits.acceleration * dt).min(v.abs()) * v.signum();
            ramp.position[j] += 0.5 * (v + v_next) * dt;
            ramp.velocity[j] = v_next;
        }
        ramp.commands[ramp.input].as_mut_slice().copy_from_slice(&ramp.position);
        if ramp.velocity.iter().all(|v| *v == 0.0) {
            (ramp.active, ramp.done) = (false, true);
        }
        self.base.actuate(tick, Some(Commands::new(&ramp.commands, &ramp.driven)))
    }
    fn is_still(&self) -> bool {
        self.ramp.as_ref().is_none_or(|r| r.base_faulted || (!r.active && (!r.done || r.settled(&self.guard.q)))) && self.base.is_still()
    }
    fn check_takeover(&self, commands: Commands) -> Result<(), (usize, String)> {
        self.base.check_takeover(commands)
    }
    fn diagnostics(&self) -> Option<Arc<dyn BusDiagnostics>> {
        self.base.diagnostics()
    }
    fn latency(&self) -> u32 {
        self.base.latency()
    }
}

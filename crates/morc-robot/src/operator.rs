//! The operator's hold on a robot's motions: the speed override (0–100 %, as `$OV_PRO` on a
//! KUKA), pause and resume, and what the running motion reports back (its progress and the
//! override it runs at) for `robot:state()`. Shared by every copy of a robot (a tool change
//! keeps it); set from any thread, read by the trajectory at each step without a lock.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// What jogging moves: one joint, or the tool along or about an axis of the base or the tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JogFrame {
    /// Joint `axis` (0-based).
    Joint,
    /// The tool along x, y, z (axis 0–2) or about them (3–5), axes of the robot's base.
    Base,
    /// As `Base`, axes of the tool.
    Tool,
}

/// The jog the operator asks for now (the jog component follows it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JogCommand {
    /// Joint or Cartesian, and in which frame.
    pub frame: JogFrame,
    /// The joint (0-based) or Cartesian axis (0–2 along x, y, z; 3–5 about them).
    pub axis: usize,
    /// +1 or −1 to move, 0 to stop.
    pub direction: f64,
    /// Share of the jog speed (0–1]: of the joint's velocity limit, or of the tool's jog speed.
    pub speed: f64,
    /// An increment to move (rad, m; > 0), or 0 to move while held.
    pub step: f64,
    /// Moving while held: until this monotonic time (ns) unless refreshed — the dead-man of a
    /// key held down, whose repeats refresh it. 0: no dead-man.
    pub until_ns: u64,
    /// Moving for this long (s, counted by the jog in its own time; 0: no such bound).
    pub time: f64,
    /// The jog's run ends once the robot is still (leaving a jog session).
    pub finish: bool,
    /// Bumped by each new command, so an increment is counted from where it was asked.
    pub id: u64,
}

impl Default for JogCommand {
    fn default() -> Self {
        JogCommand { frame: JogFrame::Joint, axis: 0, direction: 0.0, speed: 0.1, step: 0.0, until_ns: 0, time: 0.0, finish: false, id: 0 }
    }
}

/// Why a jog stopped by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JogStop {
    /// It did not (or was told to).
    None,
    /// Joint `n` (0-based) would have left its position limits.
    Limit(usize),
    /// The tool came close to a singularity (the smallest singular value of its Jacobian).
    Singularity,
}

/// The jog command and who follows it.
#[derive(Debug)]
struct JogState {
    command: JogCommand,
    /// Jog components running now (a jog session each).
    sessions: usize,
    /// The command was asked for while a session ran: it is that session's, and a later one
    /// does not act on it (a command asked for between sessions, as `robot:jog` does just
    /// before it starts its own, is the next session's).
    stored_in_session: bool,
}

/// Why a jog command from outside (the operator page) is not taken.
pub const NO_JOG_SESSION: &str = "no jog session: start `jog` in the REPL or the jog assembly in the program";

/// The override and pause a robot's motions follow, and what they report.
#[derive(Debug)]
pub struct Operator {
    /// The jog asked for (the jog component reads it with try_lock: never waits) and the jog
    /// sessions that follow it.
    jog: Mutex<JogState>,
    /// Why the last jog stopped by itself: 0 none, 1 + joint for a limit, usize::MAX singularity.
    jog_stop: AtomicUsize,
    /// The override asked for, as a fraction (f64 bits).
    override_target: AtomicU64,
    paused: AtomicBool,
    /// The running motion's progress along its path (0–1, f64 bits; NaN: none runs).
    progress: AtomicU64,
    /// The override the running motion moves at now (f64 bits).
    override_now: AtomicU64,
}

impl Default for Operator {
    fn default() -> Self {
        Operator {
            jog: Mutex::new(JogState { command: JogCommand::default(), sessions: 0, stored_in_session: false }),
            jog_stop: AtomicUsize::new(0),
            override_target: AtomicU64::new(1f64.to_bits()),
            paused: AtomicBool::new(false),
            progress: AtomicU64::new(f64::NAN.to_bits()),
            override_now: AtomicU64::new(1f64.to_bits()),
        }
    }
}

impl Operator {
    /// Asks for `fraction` (0–1) of the programmed speed; the running motion changes to it
    /// smoothly. Values outside are clamped; NaN is refused.
    pub fn set_override(&self, fraction: f64) -> Result<(), String> {
        if fraction.is_nan() {
            return Err("the override must be a number from 0 to 100 %".into());
        }
        self.override_target.store(fraction.clamp(0.0, 1.0).to_bits(), Ordering::Relaxed);
        Ok(())
    }
    /// The override asked for (0–1), pause aside.
    pub fn override_setting(&self) -> f64 {
        f64::from_bits(self.override_target.load(Ordering::Relaxed))
    }
    /// What the motion steers towards: 0 while paused, else the override.
    #[inline]
    pub fn target(&self) -> f64 {
        if self.paused.load(Ordering::Relaxed) {
            0.0
        } else {
            self.override_setting()
        }
    }
    /// Stops the running motion on its path (it slows down smoothly and waits).
    pub fn pause(&self) {
        self.paused.store(true, Ordering::Relaxed);
    }
    /// Goes on from where the motion paused, at the override.
    pub fn resume(&self) {
        self.paused.store(false, Ordering::Relaxed);
    }
    /// Whether a pause is asked for.
    pub fn paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }
    /// The running motion reports (from its step): its progress 0–1 and the override now.
    #[inline]
    pub fn report(&self, progress: f64, override_now: f64) {
        self.progress.store(progress.to_bits(), Ordering::Relaxed);
        self.override_now.store(override_now.to_bits(), Ordering::Relaxed);
    }
    /// No motion runs any more (its progress is forgotten).
    pub fn clear_report(&self) {
        self.progress.store(f64::NAN.to_bits(), Ordering::Relaxed);
    }
    /// The running motion's progress (0–1), if one runs.
    pub fn progress(&self) -> Option<f64> {
        Some(f64::from_bits(self.progress.load(Ordering::Relaxed))).filter(|p| !p.is_nan())
    }
    /// The override the motion moves at now (0–1).
    pub fn override_now(&self) -> f64 {
        f64::from_bits(self.override_now.load(Ordering::Relaxed))
    }
    /// Asks for a jog (off the real-time path); a new command gets a new id. Between jog
    /// sessions it waits for the next one to start (as `robot:jog` asks before it starts its
    /// own); a command from outside uses [`Operator::jog_in_session`] instead.
    pub fn jog(&self, mut command: JogCommand) {
        let mut j = self.jog.lock().unwrap_or_else(|e| e.into_inner());
        command.id = j.command.id + 1;
        j.command = command;
        j.stored_in_session = j.sessions > 0;
        self.jog_stop.store(0, Ordering::Relaxed);
    }
    /// Asks for a jog only if a jog session runs now, else refuses and stores nothing (a press
    /// on a page is acted on now or never); the command's id.
    pub fn jog_in_session(&self, mut command: JogCommand) -> Result<u64, String> {
        let mut j = self.jog.lock().unwrap_or_else(|e| e.into_inner());
        if j.sessions == 0 {
            return Err(NO_JOG_SESSION.into());
        }
        command.id = j.command.id + 1;
        j.command = command;
        j.stored_in_session = true;
        self.jog_stop.store(0, Ordering::Relaxed);
        Ok(command.id)
    }
    /// A jog session starts (the jog component's `initialize`): a command left from an earlier
    /// session is dropped (the new one starts still), one asked for since is kept.
    pub fn begin_jog_session(&self) {
        let mut j = self.jog.lock().unwrap_or_else(|e| e.into_inner());
        if j.stored_in_session {
            j.command = JogCommand { id: j.command.id + 1, ..JogCommand::default() };
            j.stored_in_session = false;
        }
        j.sessions += 1;
    }
    /// A jog session ends (the jog component's `terminate`).
    pub fn end_jog_session(&self) {
        let mut j = self.jog.lock().unwrap_or_else(|e| e.into_inner());
        j.sessions = j.sessions.saturating_sub(1);
        // What this session was asked is not for the next one.
        j.stored_in_session = true;
    }
    /// Whether a jog session runs.
    pub fn jog_session(&self) -> bool {
        self.jog.lock().unwrap_or_else(|e| e.into_inner()).sessions > 0
    }
    /// Keeps the jog held down until `until_ns` (a key's repeat, a page's heartbeat), if it is
    /// still command `id` and has not run out (a heartbeat late for its dead-man does not start
    /// it again: the operator presses anew); whether it was held.
    pub fn hold_jog(&self, id: u64, until_ns: u64) -> bool {
        let mut j = self.jog.lock().unwrap_or_else(|e| e.into_inner());
        let ran_out = j.command.until_ns != 0 && morc_kernel::monotonic_ns() >= j.command.until_ns;
        if j.command.id == id && j.command.direction != 0.0 && !ran_out {
            j.command.until_ns = until_ns;
            true
        } else {
            false
        }
    }
    /// Stops jogging (the jog decelerates to a standstill).
    pub fn stop_jog(&self) {
        self.jog.lock().unwrap_or_else(|e| e.into_inner()).command.direction = 0.0;
    }
    /// Stops jogging and ends the jog's run once the robot is still.
    pub fn finish_jog(&self) {
        let mut j = self.jog.lock().unwrap_or_else(|e| e.into_inner());
        j.command.direction = 0.0;
        j.command.finish = true;
    }
    /// The jog asked for, or None when another thread holds it this instant (real-time safe).
    #[inline]
    pub fn jog_command(&self) -> Option<JogCommand> {
        self.jog.try_lock().ok().map(|j| j.command)
    }
    /// The current command (off the real-time path).
    pub fn jog_now(&self) -> JogCommand {
        self.jog.lock().unwrap_or_else(|e| e.into_inner()).command
    }
    /// The jog stopped by itself (from the jog component).
    #[inline]
    pub fn report_jog_stop(&self, why: JogStop) {
        let code = match why {
            JogStop::None => 0,
            JogStop::Limit(j) => j + 1,
            JogStop::Singularity => usize::MAX,
        };
        self.jog_stop.store(code, Ordering::Relaxed);
    }
    /// Why the last jog stopped by itself.
    pub fn jog_stopped(&self) -> JogStop {
        match self.jog_stop.load(Ordering::Relaxed) {
            0 => JogStop::None,
            usize::MAX => JogStop::Singularity,
            j => JogStop::Limit(j - 1),
        }
    }
}

/// The fastest an override changes when nothing else limits it: 0 → 100 % in half a second.
pub const OVERRIDE_RATE_MAX: f64 = 2.0;

/// The rate (1/s) at which the override `now` may move towards `target` in the step of `dt`
/// from path time τ to τ + now·dt, without any joint leaving its acceleration limit. Along the
/// path the joint acceleration is `ov²·q''(τ) + (dov/dt)·q'(τ)`, and the velocity, `ov·q'(τ)`,
/// changes over the step by `ov·(q'(τ+) − q'(τ)) + dov·q'(τ+)`: each bounds dov/dt per joint to
/// an interval that holds 0 (the plan keeps `ov²·q''` within the limit when ov ≤ 1), so the
/// intersection does too. It is clamped to ±[`OVERRIDE_RATE_MAX`] and to what reaches `target`.
/// `velocity`, `acceleration`: q' and q'' at τ; `velocity_next`: q' at τ + now·dt.
pub fn override_rate(now: f64, target: f64, dt: f64, velocity: &[f64], acceleration: &[f64], velocity_next: &[f64], limit: &[f64]) -> f64 {
    let wanted = ((target - now) / dt).clamp(-OVERRIDE_RATE_MAX, OVERRIDE_RATE_MAX);
    let (mut lo, mut hi) = (-OVERRIDE_RATE_MAX, OVERRIDE_RATE_MAX);
    // |c + r·d| ≤ a bounds r to an interval.
    let mut bound = |c: f64, d: f64, a: f64| {
        if d.abs() > 1e-9 {
            let (r1, r2) = ((-a - c) / d, (a - c) / d);
            lo = lo.max(r1.min(r2));
            hi = hi.min(r1.max(r2));
        }
    };
    for j in 0..limit.len() {
        bound(now * now * acceleration[j], velocity[j], limit[j]);
        bound(now * (velocity_next[j] - velocity[j]) / dt, velocity_next[j], limit[j]);
    }
    if lo > hi {
        // Only when the plan itself is at a limit: keep the override as it is.
        return 0.0;
    }
    wanted.clamp(lo.min(0.0), hi.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_keeps_every_joint_within_its_acceleration_limit() {
        // Joint 0 accelerates at its limit while moving: raising the override would exceed it,
        // lowering it may go as fast as the limit allows.
        let dt = 1e-3;
        let (v, a, limit) = ([1.0, 0.5], [2.0, 0.0], [2.0, 4.0]);
        let v_next = [v[0] + a[0] * dt, v[1]];
        assert_eq!(override_rate(1.0, 1.0, dt, &v, &a, &v_next, &limit), 0.0);
        let down = override_rate(1.0, 0.2, dt, &v, &a, &v_next, &limit);
        assert!(down < 0.0);
        for j in 0..2 {
            assert!((a[j] + down * v[j]).abs() <= limit[j] + 1e-12, "joint {j}");
            assert!(((v_next[j] - v[j]) / dt + down * v_next[j]).abs() <= limit[j] + 1e-9, "joint {j}: velocity step");
        }
        // Cruising (no path acceleration): as fast as OVERRIDE_RATE_MAX.
        assert_eq!(override_rate(1.0, 0.2, dt, &v, &[0.0, 0.0], &v, &limit), -OVERRIDE_RATE_MAX);
        // Cruising into a braking phase at the limit: lowering the override would add to the
        // braking in the next step, so it waits.
        let braking = [v[0] - limit[0] * dt, v[1]];
        assert_eq!(override_rate(1.0, 0.2, dt, &v, &[0.0, 0.0], &braking, &limit), 0.0);
        // Close to the target: exactly onto it.
        assert!((override_rate(0.2005, 0.2, dt, &v, &[0.0, 0.0], &v, &limit) - (-0.5)).abs() < 1e-9);
    }

    #[test]
    fn a_jog_from_outside_is_taken_in_a_session_only_and_a_new_session_starts_still() {
        let o = Operator::default();
        let press = JogCommand { direction: 1.0, step: 0.1, ..JogCommand::default() };
        assert_eq!(o.jog_in_session(press), Err(NO_JOG_SESSION.to_string()));
        assert_eq!(o.jog_now().direction, 0.0, "a refused press is not stored");
        o.begin_jog_session();
        let id = o.jog_in_session(press).unwrap();
        assert_eq!((o.jog_now().id, o.jog_now().direction), (id, 1.0));
        o.end_jog_session();
        assert!(o.jog_in_session(press).is_err());
        // The press of the ended session is not the next one's.
        o.begin_jog_session();
        assert_eq!(o.jog_now().direction, 0.0);
        o.end_jog_session();
        // robot:jog asks just before its session starts: that one is kept.
        o.jog(press);
        o.begin_jog_session();
        assert_eq!(o.jog_now().direction, 1.0);
        assert!(o.hold_jog(o.jog_now().id, 0) && !o.hold_jog(o.jog_now().id + 1, 0));
        // Held until a moment that has passed: a later heartbeat does not revive it.
        assert!(o.hold_jog(o.jog_now().id, 1));
        assert!(!o.hold_jog(o.jog_now().id, u64::MAX));
    }

    #[test]
    fn pause_steers_to_zero_and_resume_back_to_the_override() {
        let o = Operator::default();
        o.set_override(0.4).unwrap();
        o.pause();
        assert_eq!(o.target(), 0.0);
        o.resume();
        assert_eq!(o.target(), 0.4);
        assert!(o.set_override(f64::NAN).is_err());
        o.set_override(3.0).unwrap();
        assert_eq!(o.target(), 1.0);
    }
}

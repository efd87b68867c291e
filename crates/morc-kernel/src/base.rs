//! The Engine's base: what cycles every base period whether or not an
//! assembly runs — the bus and the Robot, the only component that talks to
//! the drives. Assemblies connect to its ports by its name ("robot").

use super::component::{ComponentInfo, Step};
use super::diagnostics::BusDiagnostics;
use super::value::Value;
use std::sync::Arc;

/// What the engine cycles every base period: the robot on its bus, or a simulated stand-in.
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
    /// there is none (`None`: between assemblies, after a fault). Inputs
    /// the assembly does not drive hold too ([`Commands::get`] is `None`).
    fn actuate(&mut self, tick: u64, commands: Option<Commands>) -> Step;
    /// End of a tick after a fault or a cancellation: bring the robot to a standstill (a
    /// quick stop: decelerate, then hold where it stopped). The engine calls it every tick
    /// until [`Base::is_still`], before the run's result is handed back, so the next command
    /// starts from a robot at rest. By default the base holds as between assemblies.
    fn stop(&mut self, tick: u64) -> Step {
        self.actuate(tick, None)
    }
    /// Whether the robot stands still (after [`Base::stop`]). Bases whose hold is immediate
    /// are always still.
    fn is_still(&self) -> bool {
        true
    }
    /// Whether `commands`, the first of an assembly swapped in for a running one
    /// ([`crate::Engine::swap`]), would move the robot past a limit from where the last
    /// commands left it (a joint's velocity or acceleration): then the input port and what
    /// the robot would do ("moves A5 at 7.1 rad/s, past its limit 5.76 rad/s"); the engine
    /// faults and the robot holds instead. By default nothing is checked.
    fn check_takeover(&self, _commands: Commands) -> Result<(), (usize, String)> {
        Ok(())
    }
    /// The last line, every tick an assembly commands the robot, before [`Base::actuate`]:
    /// whether `commands` would take a joint past its position limit or ask for more than its
    /// velocity, acceleration or torque limit — then the input port and what it asks ("commands
    /// A2 to 60.0°, past its upper limit 35.0°"). The engine faults naming the component and
    /// port that wrote it, and the robot brakes ([`Base::stop`]) instead: the commands never go
    /// out. When it passes, the commands are the ones that go out (a guard keeps their history).
    /// By default nothing is checked (the ideal axes have no limits).
    fn guard(&mut self, _commands: Commands) -> Result<(), (usize, String)> {
        Ok(())
    }
    /// Its bus's diagnostics for other threads (the live view, the page, Lua's `engine.bus`),
    /// taken before the engine moves the base to its thread; none when it runs no bus.
    fn diagnostics(&self) -> Option<Arc<dyn BusDiagnostics>> {
        None
    }
    /// Base periods by which a measurement lags the commands, beyond the one period a plant
    /// stepped directly takes (a command actuated at tick n shows in `sense` at tick
    /// n + 1 + latency). Known to the base, not measured: 0 for a simulated robot stepped
    /// directly; a bus sends commands at the next exchange and reads what the devices latched
    /// before applying them. Components that compare a measurement with its reference (the
    /// robot's `monitor`) delay the reference by as much ([`crate::InitContext::base_latency`]).
    fn latency(&self) -> u32 {
        0
    }
}

/// The assembly's commands to the base for one tick.
#[derive(Clone, Copy)]
pub struct Commands<'a> {
    values: &'a [Value],
    /// Which inputs are driven; `None`: all of them.
    driven: Option<&'a [bool]>,
}

impl<'a> Commands<'a> {
    /// The commands `values`, input `i` driven when `driven[i]`.
    pub fn new(values: &'a [Value], driven: &'a [bool]) -> Self {
        Commands { values, driven: Some(driven) }
    }
    /// Every input driven with `values`.
    pub fn all(values: &'a [Value]) -> Self {
        Commands { values, driven: None }
    }
    /// The command on input `port`, or `None` when the assembly leaves it alone.
    #[inline]
    pub fn get(&self, port: usize) -> Option<&'a Value> {
        match self.driven {
            Some(d) if !d.get(port).copied().unwrap_or(false) => None,
            _ => self.values.get(port),
        }
    }
}

/// Part of a joint's velocity limit below which it counts as standing (0.5 %): a drive
/// holding position never reads exactly 0, and a fixed 1e-3 rad/s sat below the simulated
/// hold's own jitter (Coulomb friction flips sign each cycle: ±1.8e-3 rad/s on the stacker's
/// platform), so stops waited out their whole time limit. 0.5 % of the limit is far below
/// any motion a program commands, and a joint that slow stops in under a cycle at its
/// acceleration limit.
pub const STANDSTILL_FRACTION_OF_LIMIT: f64 = 0.005;
/// How many times the measured velocity's resolution (or the plant's noise) a standing
/// joint may read: a count of dither is not motion.
pub const STANDSTILL_NOISE_MULTIPLE: f64 = 4.0;
/// How long every joint must stay below its threshold (s) before the robot counts as
/// standing: a zero crossing of an oscillation is not standstill. At least
/// [`STANDSTILL_MIN_CYCLES`] cycles.
pub const STANDSTILL_TIME: f64 = 0.02;
/// The fewest consecutive cycles a standstill must last, whatever the period.
pub const STANDSTILL_MIN_CYCLES: u32 = 3;

/// A joint's standstill speed, in its own unit per second (rad/s, m/s for a prismatic
/// joint): the larger of [`STANDSTILL_FRACTION_OF_LIMIT`] of its velocity limit and
/// [`STANDSTILL_NOISE_MULTIPLE`] times `noise`, what its measured velocity reads while it
/// holds (one encoder count per cycle, the plant's friction dither). An unknown limit
/// (not finite or not positive) leaves the noise term, or 1e-3 if that is 0 too.
pub fn standstill_speed(velocity_limit: f64, noise: f64) -> f64 {
    let by_limit = if velocity_limit.is_finite() && velocity_limit > 0.0 { STANDSTILL_FRACTION_OF_LIMIT * velocity_limit } else { 0.0 };
    let by_noise = if noise.is_finite() { STANDSTILL_NOISE_MULTIPLE * noise.abs() } else { 0.0 };
    let speed = by_limit.max(by_noise);
    if speed > 0.0 {
        speed
    } else {
        1e-3
    }
}

/// Whether a robot stands still, judged per joint and over time, for [`Base::is_still`]:
/// every joint's measured speed below its own threshold ([`standstill_speed`]) for
/// [`STANDSTILL_TIME`] of consecutive cycles. A base feeds it each cycle's velocities.
#[derive(Clone, Debug)]
pub struct Standstill {
    speeds: Vec<f64>,
    cycles: u32,
    still_for: u32,
}

impl Standstill {
    /// A standstill test with each joint's threshold `speeds` (its unit per second) for a
    /// base cycling every `period` seconds.
    pub fn new(speeds: Vec<f64>, period: f64) -> Self {
        let cycles = if period.is_finite() && period > 0.0 { (STANDSTILL_TIME / period).ceil() as u32 } else { 0 };
        Standstill { speeds, cycles: cycles.max(STANDSTILL_MIN_CYCLES), still_for: 0 }
    }
    /// Each joint's threshold (rad/s or m/s).
    pub fn speeds(&self) -> &[f64] {
        &self.speeds
    }
    /// Consecutive cycles a standstill must last.
    pub fn cycles(&self) -> u32 {
        self.cycles
    }
    /// One cycle's measured velocities (joint order; a joint beyond the thresholds given
    /// is held to the last one's).
    pub fn observe(&mut self, velocities: impl IntoIterator<Item = f64>) {
        let last = self.speeds.last().copied().unwrap_or(1e-3);
        let still = velocities.into_iter().enumerate().all(|(i, v)| v.abs() < self.speeds.get(i).copied().unwrap_or(last));
        self.still_for = if still { self.still_for.saturating_add(1) } else { 0 };
    }
    /// Forgets what was seen: the next standstill counts from the next cycle.
    pub fn reset(&mut self) {
        self.still_for = 0;
    }
    /// Every joint has been below its threshold for the last [`Standstill::cycles`] cycles.
    pub fn is_still(&self) -> bool {
        self.still_for >= self.cycles
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_joint_stands_below_its_share_of_the_limit_or_its_noise() {
        assert_eq!(standstill_speed(3.0, 0.0), 0.015);
        assert_eq!(standstill_speed(3.0, 0.01), 0.04, "four times the noise when that is more");
        assert_eq!(standstill_speed(f64::INFINITY, 0.0), 1e-3, "nothing known: the old fixed speed");
    }

    #[test]
    fn a_zero_crossing_is_not_a_standstill() {
        let mut s = Standstill::new(vec![0.01, 0.01], 0.001);
        assert_eq!(s.cycles(), 20);
        for v in [0.5, 0.0, -0.5] {
            s.observe([v, 0.0]);
            assert!(!s.is_still());
        }
        for k in 0..20 {
            assert!(!s.is_still(), "still after {k} cycles");
            s.observe([0.009, -0.009]);
        }
        assert!(s.is_still());
        s.observe([0.0, 0.02]);
        assert!(!s.is_still(), "one joint moving is motion");
        assert_eq!(Standstill::new(vec![0.01], 0.01).cycles(), STANDSTILL_MIN_CYCLES);
    }
}

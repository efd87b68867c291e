//! Model exchange: morc's fixed-step solver over an FMU's continuous states,
//! with the FMI event loop (FMI 2.0 §3.2.3, FMI 3.0 §3.2.1).
//!
//! One sample period [t, t + h] is `substeps` explicit Euler or classic RK4
//! steps on a fixed grid, with the continuous inputs held (set at the start of
//! the period, in continuous-time mode). Events:
//! - **time events** (nextEventTime from the last event iteration): a step is cut
//!   to end exactly at the event time, the rest of the grid step follows; an
//!   event time within 1e-9 (relative) of a grid point happens at the grid point;
//! - **state events** (an event indicator changes domain, z > 0 ↔ z ≤ 0):
//!   [`EventMode::Locate`] finds the crossing inside the step on the interpolated
//!   state (linear for Euler, cubic Hermite for RK4) by the Illinois method to
//!   [`event_time_tolerance`], ends the step there, and integrates the rest of it
//!   afterwards; [`EventMode::StepEnd`] handles the event at the end of the step
//!   in which the sign changed, exactly as FMPy's fixed-step Euler does;
//! - **step events** (fmiCompletedIntegratorStep asks for event mode) at the step's end;
//! - **discrete inputs** (FMI forbids setting them in continuous-time mode): when
//!   one changed, event mode at the start of the period, the inputs set there.
//!
//! Each event runs the event iteration (newDiscreteStatesNeeded), reads the states
//! again when their values changed, and takes the new next event time; a request
//! to terminate ends the run normally. Nominals are not used by fixed-step
//! solvers: nominalsChanged has no effect. Every buffer is sized at the start:
//! stepping does not allocate.

use morc_kernel::Value;

use super::component::{start_value, Fmu};
use super::description::Variable;
use super::instance::{EventInfo, Instance};
use super::values::{port_type, Values};
use super::FmiError;

/// The integration method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Explicit (forward) Euler.
    Euler,
    /// Classic 4th-order Runge–Kutta.
    Rk4,
}

impl Method {
    /// "euler" or "rk4".
    pub fn parse(name: &str) -> Option<Method> {
        match name {
            "euler" => Some(Method::Euler),
            "rk4" => Some(Method::Rk4),
            _ => None,
        }
    }
}

/// How state events are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventMode {
    /// "locate": the zero crossing is located inside the step and the step ends there.
    Locate,
    /// "step_end": the event happens at the end of the step in which an indicator
    /// changed sign, as FMPy's Euler: indicators are compared between step ends
    /// (z < 0 → z ≥ 0 or z > 0 → z ≤ 0), read after the new states are set and
    /// before the new time is.
    StepEnd,
}

impl EventMode {
    /// "locate" or "step_end".
    pub fn parse(name: &str) -> Option<EventMode> {
        match name {
            "locate" => Some(EventMode::Locate),
            "step_end" => Some(EventMode::StepEnd),
            _ => None,
        }
    }
}

/// The solver's settings (the component's parameters me_solver, me_substeps, me_events).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Euler or RK4.
    pub method: Method,
    /// Grid steps per sample period (at least 1).
    pub substeps: usize,
    /// How state events are found.
    pub events: EventMode,
}

/// State events in one sample period beyond which the FMU is taken to chatter.
pub const MAX_EVENTS_PER_PERIOD: usize = 1000;

/// Iterations of the root finder: Illinois first, then bisection, which
/// reaches any tolerance above 2⁻⁵⁰ of the step well within this.
const MAX_ROOT_ITERATIONS: usize = 80;
/// Illinois iterations before the root finder falls back to bisection.
const ILLINOIS_ITERATIONS: usize = 12;

/// The width (s) to which a state event at about time `t` in a step of `h` is
/// located: 100 rounding units of the larger, as CVODE's root finder does.
pub fn event_time_tolerance(t: f64, h: f64) -> f64 {
    100.0 * f64::EPSILON * t.abs().max(h.abs())
}

/// Python's `math.isclose` with its default relative tolerance, which FMPy uses
/// to decide whether an event time is a grid point.
fn is_close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Inputs of a model-exchange FMU: continuous ones set each period,
/// discrete ones only in event mode, when they changed.
struct Inputs {
    continuous: Values,
    /// Port index of each continuous input.
    continuous_ports: Vec<usize>,
    discrete: Values,
    /// Port index of each discrete input.
    discrete_ports: Vec<usize>,
    /// The discrete inputs as the FMU holds them (as set in initialisation mode until set again).
    held: Vec<Value>,
}

/// A variable that FMI lets the importer set only in event mode (not continuous-time mode).
fn is_discrete(v: &Variable) -> bool {
    !(v.ty.is_float() && v.variability == "continuous")
}

impl Inputs {
    fn new(fmu: &Fmu, inputs: &[usize], initial: &[Value]) -> Inputs {
        let md = &fmu.description;
        let (mut continuous, mut discrete) = (Vec::new(), Vec::new());
        for (port, &i) in inputs.iter().enumerate() {
            let v = &md.variables[i];
            if is_discrete(v) { &mut discrete } else { &mut continuous }.push((port, v));
        }
        let held = discrete.iter().filter_map(|&(p, v)| initial.get(p).cloned().or_else(|| Some(start_value(v, port_type(v)?)))).collect();
        Inputs {
            continuous: Values::new(continuous.iter().map(|(_, v)| *v), md.version),
            continuous_ports: continuous.iter().map(|(p, _)| *p).collect(),
            discrete: Values::new(discrete.iter().map(|(_, v)| *v), md.version),
            discrete_ports: discrete.iter().map(|(p, _)| *p).collect(),
            held,
        }
    }

    /// True when a discrete input differs from what the FMU holds.
    fn discrete_changed(&self, inputs: &[Value]) -> bool {
        self.discrete_ports.iter().zip(&self.held).any(|(&p, held)| inputs[p] != *held)
    }
}

/// The continuous state, the event indicators and scratch space, allocated once.
pub struct Solver {
    options: Options,
    /// How messages name the FMU.
    label: String,
    inputs: Inputs,
    /// The state at the current time.
    x: Vec<f64>,
    /// The candidate state at the end of a step, and one inside it (root finding).
    x_end: Vec<f64>,
    x_try: Vec<f64>,
    /// RK4's stage state and the four slopes (k[0]: the slope at the step's start).
    stage: Vec<f64>,
    k: [Vec<f64>; 4],
    /// The slope at the end of the step (RK4's Hermite interpolation).
    dx_end: Vec<f64>,
    /// Event indicators: the reference (at the current time, or FMPy's last step end), at the step's end, inside it.
    z: Vec<f64>,
    z_end: Vec<f64>,
    z_try: Vec<f64>,
    /// The root finder's bracket ends (Illinois scales them).
    z_left: Vec<f64>,
    z_right: Vec<f64>,
    /// The next time event, if the FMU has one.
    next_event_time: Option<f64>,
}

impl Solver {
    /// Runs the event iteration that follows initialisation (the FMU is in event
    /// mode after fmiExitInitializationMode), enters continuous-time mode and reads
    /// the initial state and event indicators. `inputs`: the FMU variables (indices
    /// into the model description) of the component's input ports, in port order; `initial`:
    /// the values the ports were set to in initialisation mode.
    pub fn start(instance: &mut dyn Instance, fmu: &Fmu, inputs: &[usize], initial: &[Value], options: Options) -> Result<Solver, FmiError> {
        let md = &fmu.description;
        let events = instance.settle_discrete_states()?;
        if events.terminate {
            return Err(FmiError::Behaviour(format!("{}: the FMU asked to terminate during initialisation", fmu.label)));
        }
        instance.enter_continuous_time_mode()?;
        let (nx, nz) = (md.continuous_state_count(), md.number_of_event_indicators);
        let z = |n: usize| vec![0.0; n];
        let mut solver = Solver {
            options: Options { substeps: options.substeps.max(1), ..options },
            label: fmu.label.clone(),
            inputs: Inputs::new(fmu, inputs, initial),
            x: z(nx),
            x_end: z(nx),
            x_try: z(nx),
            stage: z(nx),
            k: [z(nx), z(nx), z(nx), z(nx)],
            dx_end: z(nx),
            z: z(nz),
            z_end: z(nz),
            z_try: z(nz),
            z_left: z(nz),
            z_right: z(nz),
            next_event_time: events.next_event_time,
        };
        if nx > 0 {
            instance.get_continuous_states(&mut solver.x)?;
        }
        if nz > 0 {
            instance.get_event_indicators(&mut solver.z)?;
        }
        Ok(solver)
    }

    /// Sets the inputs and integrates over [t0, t0 + h], handling the events in it;
    /// true when the FMU asks to end the simulation.
    pub fn advance(&mut self, fmu: &mut dyn Instance, inputs: &[Value], t0: f64, h: f64) -> Result<bool, FmiError> {
        let ins = &mut self.inputs;
        ins.continuous.load(ins.continuous_ports.iter().map(|&p| &inputs[p]));
        for g in &ins.continuous.groups {
            fmu.set(g)?;
        }
        if ins.discrete_changed(inputs) {
            fmu.set_time(t0)?;
            fmu.enter_event_mode()?;
            ins.discrete.load(ins.discrete_ports.iter().map(|&p| &inputs[p]));
            for g in &ins.discrete.groups {
                fmu.set(g)?;
            }
            for (&p, held) in ins.discrete_ports.iter().zip(&mut ins.held) {
                held.copy_from(&inputs[p]);
            }
            if self.event_iteration(fmu)? {
                return Ok(true);
            }
        }
        let dt = h / self.options.substeps as f64;
        let mut t = t0;
        let mut events = 0;
        for j in 0..self.options.substeps {
            let (from, grid) = (t0 + j as f64 * dt, t0 + (j + 1) as f64 * dt);
            // Several steps when events cut this one.
            loop {
                let (mut end, mut time_event) = (grid, false);
                if let Some(te) = self.next_event_time {
                    if is_close(te, grid) {
                        time_event = true;
                    } else if te < grid {
                        if te <= t {
                            return Err(FmiError::Behaviour(format!("{}: the next event time {te} s is not after the current time {t} s", self.label)));
                        }
                        (end, time_event) = (te, true);
                    }
                }
                let planned = end;
                // A whole grid step is dt exactly (as a native block steps), a cut one what is left.
                let h = if t == from && end == grid { dt } else { end - t };
                let (end, state_event) = self.step(fmu, t, end, h)?;
                // A state event located before the time event ends the step first.
                let time_event = time_event && end == planned;
                let (step_event, terminate) = fmu.completed_integrator_step()?;
                if terminate {
                    return Ok(true);
                }
                if time_event || state_event || step_event {
                    events += 1;
                    if events > MAX_EVENTS_PER_PERIOD {
                        return Err(FmiError::Behaviour(format!("{}: more than {MAX_EVENTS_PER_PERIOD} events in the period from {t0} s: the FMU chatters", self.label)));
                    }
                    fmu.enter_event_mode()?;
                    if self.event_iteration(fmu)? {
                        return Ok(true);
                    }
                }
                t = end;
                if end == grid {
                    break;
                }
            }
        }
        Ok(false)
    }

    /// Sets `values` (tunable parameters) in event mode at time `t`, between two periods,
    /// and runs the event iteration; true when the FMU asks to end the simulation.
    pub fn set_in_event_mode(&mut self, fmu: &mut dyn Instance, values: &Values, t: f64) -> Result<bool, FmiError> {
        fmu.set_time(t)?;
        fmu.enter_event_mode()?;
        for g in &values.groups {
            fmu.set(g)?;
        }
        self.event_iteration(fmu)
    }

    /// One step of `h` from (t, x) to `end`, or to a state event located before it:
    /// the FMU is left at the step's end (time and states set), `x` is the state
    /// there. Returns the end and whether a state event happened there.
    fn step(&mut self, fmu: &mut dyn Instance, t: f64, end: f64, h: f64) -> Result<(f64, bool), FmiError> {
        self.integrate(fmu, t, h)?;
        let (nx, indicators) = (self.x.len(), !self.z.is_empty());
        match self.options.events {
            EventMode::StepEnd => {
                // FMPy's Euler: states, then the indicators, then the time.
                if nx > 0 {
                    fmu.set_continuous_states(&self.x_end)?;
                }
                let mut crossed = false;
                if indicators {
                    fmu.get_event_indicators(&mut self.z_end)?;
                    crossed = self.z.iter().zip(&self.z_end).any(|(&a, &b)| (a < 0.0 && b >= 0.0) || (a > 0.0 && b <= 0.0));
                    std::mem::swap(&mut self.z, &mut self.z_end);
                }
                fmu.set_time(end)?;
                std::mem::swap(&mut self.x, &mut self.x_end);
                Ok((end, crossed))
            }
            EventMode::Locate => {
                fmu.set_time(end)?;
                if nx > 0 {
                    fmu.set_continuous_states(&self.x_end)?;
                }
                if indicators {
                    fmu.get_event_indicators(&mut self.z_end)?;
                    if crossed(&self.z, &self.z_end) {
                        return self.locate(fmu, t, end, h);
                    }
                }
                std::mem::swap(&mut self.x, &mut self.x_end);
                Ok((end, false))
            }
        }
    }

    /// One Euler or RK4 step of `h` from (t, x) into `x_end`; `k[0]` is the slope at t.
    fn integrate(&mut self, fmu: &mut dyn Instance, t: f64, h: f64) -> Result<(), FmiError> {
        let n = self.x.len();
        if n == 0 {
            return Ok(());
        }
        let Solver { options, x, x_end, stage, k, .. } = self;
        fmu.set_time(t)?;
        fmu.set_continuous_states(x)?;
        fmu.get_derivatives(&mut k[0])?;
        match options.method {
            Method::Euler => {
                for i in 0..n {
                    x_end[i] = x[i] + h * k[0][i];
                }
            }
            Method::Rk4 => {
                // Stages at t + h/2, t + h/2, t + h, each from the previous slope.
                for (s, fraction) in [(1, 0.5), (2, 0.5), (3, 1.0)] {
                    for i in 0..n {
                        stage[i] = x[i] + fraction * h * k[s - 1][i];
                    }
                    fmu.set_time(t + fraction * h)?;
                    fmu.set_continuous_states(stage)?;
                    fmu.get_derivatives(&mut k[s])?;
                }
                for i in 0..n {
                    x_end[i] = x[i] + h / 6.0 * (k[0][i] + 2.0 * k[1][i] + 2.0 * k[2][i] + k[3][i]);
                }
            }
        }
        Ok(())
    }

    /// An indicator changed domain between t and `end` (the FMU is at `end`, `z_end`
    /// holds the indicators there): finds the first crossing by the Illinois method,
    /// bisecting once that is slow, leaves the FMU and `x` at the crossing's right
    /// side (the indicator in its new domain) and returns that time.
    fn locate(&mut self, fmu: &mut dyn Instance, t: f64, end: f64, h: f64) -> Result<(f64, bool), FmiError> {
        if self.options.method == Method::Rk4 && !self.x.is_empty() {
            fmu.get_derivatives(&mut self.dx_end)?;
        }
        let tolerance = event_time_tolerance(t + h, h) / h.abs();
        self.z_left.copy_from_slice(&self.z);
        self.z_right.copy_from_slice(&self.z_end);
        let (mut left, mut right) = (0.0f64, 1.0f64);
        // Which end the last iterations kept (Illinois halves the z of an end kept twice).
        let mut kept_left = 0;
        let mut kept_right = 0;
        let mut at = 1.0; // where the FMU was last set (1: the step's end)
        for iteration in 0..MAX_ROOT_ITERATIONS {
            if right - left <= tolerance {
                break;
            }
            let mut theta = if iteration < ILLINOIS_ITERATIONS {
                // The earliest secant root over the indicators that crossed.
                let mut first = right;
                for i in 0..self.z.len() {
                    let (a, b) = (self.z_left[i], self.z_right[i]);
                    if (self.z[i] > 0.0) != (self.z_end[i] > 0.0) && a != b {
                        first = first.min(left + (right - left) * a / (a - b));
                    }
                }
                first
            } else {
                0.5 * (left + right)
            };
            // Never on (or too near) an end: each iteration shrinks the bracket.
            theta = theta.clamp(left + 0.5 * tolerance, right - 0.5 * tolerance);
            self.evaluate(fmu, t, h, theta)?;
            at = theta;
            if crossed(&self.z, &self.z_try) {
                right = theta;
                self.z_right.copy_from_slice(&self.z_try);
                self.z_end.copy_from_slice(&self.z_try);
                (kept_left, kept_right) = (kept_left + 1, 0);
                if kept_left >= 2 {
                    self.z_left.iter_mut().for_each(|z| *z *= 0.5);
                }
            } else {
                left = theta;
                self.z_left.copy_from_slice(&self.z_try);
                (kept_left, kept_right) = (0, kept_right + 1);
                if kept_right >= 2 {
                    self.z_right.iter_mut().for_each(|z| *z *= 0.5);
                }
            }
        }
        if right == 1.0 {
            // Nothing narrowed the step (one shorter than the tolerance): the FMU is still at its end.
            if at != right {
                fmu.set_time(end)?;
                if !self.x.is_empty() {
                    fmu.set_continuous_states(&self.x_end)?;
                }
            }
            std::mem::swap(&mut self.x, &mut self.x_end);
            return Ok((end, true));
        }
        if at != right {
            self.evaluate(fmu, t, h, right)?;
        }
        self.x.copy_from_slice(&self.x_try);
        Ok((t + right * h, true))
    }

    /// Sets the FMU to the interpolated state at t + θh and reads its indicators into `z_try`.
    fn evaluate(&mut self, fmu: &mut dyn Instance, t: f64, h: f64, theta: f64) -> Result<(), FmiError> {
        let n = self.x.len();
        match self.options.method {
            // Euler's step is a line: the state at θ is a shorter Euler step.
            Method::Euler => {
                for i in 0..n {
                    self.x_try[i] = self.x[i] + theta * (self.x_end[i] - self.x[i]);
                }
            }
            Method::Rk4 => {
                // Cubic Hermite between (x, k[0]) and (x_end, dx_end).
                let (s, s2, s3) = (theta, theta * theta, theta * theta * theta);
                let (h00, h10, h01, h11) = (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2);
                for i in 0..n {
                    self.x_try[i] = h00 * self.x[i] + h10 * h * self.k[0][i] + h01 * self.x_end[i] + h11 * h * self.dx_end[i];
                }
            }
        }
        fmu.set_time(t + theta * h)?;
        if n > 0 {
            fmu.set_continuous_states(&self.x_try)?;
        }
        fmu.get_event_indicators(&mut self.z_try)
    }

    /// The event iteration (the FMU is in event mode), then continuous-time mode:
    /// the states read again if they changed, the next time event taken, and (when
    /// events are located) the indicators read as the new reference. True when the
    /// FMU asks to end the simulation.
    fn event_iteration(&mut self, fmu: &mut dyn Instance) -> Result<bool, FmiError> {
        let EventInfo { terminate, values_changed, next_event_time, .. } = fmu.settle_discrete_states()?;
        if terminate {
            return Ok(true);
        }
        fmu.enter_continuous_time_mode()?;
        if values_changed && !self.x.is_empty() {
            fmu.get_continuous_states(&mut self.x)?;
        }
        self.next_event_time = next_event_time;
        // FMPy's Euler keeps comparing with the indicators before the event.
        if self.options.events == EventMode::Locate && !self.z.is_empty() {
            fmu.get_event_indicators(&mut self.z)?;
        }
        Ok(false)
    }
}

/// Whether an indicator changed domain (z > 0 against z ≤ 0, FMI's definition) from `a` to `b`.
fn crossed(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).any(|(&a, &b)| (a > 0.0) != (b > 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_points_take_event_times_as_fmpy_does() {
        assert!(is_close(0.1, 100.0 * 0.001));
        assert!(is_close(1.0, 1.0 + 5e-10));
        assert!(!is_close(1.0, 1.0 + 2e-9));
        assert!(!is_close(0.0, 1e-300));
    }

    #[test]
    fn the_event_tolerance_follows_the_larger_of_time_and_step() {
        assert_eq!(event_time_tolerance(0.0, 1e-3), 100.0 * f64::EPSILON * 1e-3);
        assert_eq!(event_time_tolerance(-2.0, 1e-3), 200.0 * f64::EPSILON);
    }

    #[test]
    fn names_parse() {
        assert_eq!(EventMode::parse("locate"), Some(EventMode::Locate));
        assert_eq!(EventMode::parse("step_end"), Some(EventMode::StepEnd));
        assert_eq!(EventMode::parse("fmpy"), None);
        assert_eq!(Method::parse("rk4"), Some(Method::Rk4));
    }
}

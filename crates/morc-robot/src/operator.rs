//! The operator's hold on a robot's motions: the speed override (0–100 %, as `$OV_PRO` on a
//! KUKA), pause and resume, and what the running motion reports back (its progress and the
//! override it runs at) for `robot:state()`. Shared by every copy of a robot (a tool change
//! keeps it); set from any thread, read by the trajectory at each step without a lock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The override and pause a robot's motions follow, and what they report.
#[derive(Debug)]
pub struct Operator {
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

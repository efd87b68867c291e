//! Rest-to-rest time profiles of a path parameter: s goes from 0 to `length` within
//! velocity, acceleration and (optionally) jerk limits, time-optimally for those limits.
//!
//! With a jerk limit this is the seven-segment "double S" profile (Biagiotti & Melchiorri,
//! *Trajectory Planning for Automatic Machines and Robots*, §3.4, rest to rest); without one
//! (jerk = ∞) the same formulas give the trapezoid (or triangle). The profile is symmetric:
//! deceleration mirrors acceleration.

/// A planned rest-to-rest profile; [`Profile::sample`] gives (s, ṡ, s̈) at any time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    length: f64,
    jerk: f64,
    /// Jerk phase, whole acceleration phase and cruise durations (s).
    t_jerk: f64,
    t_accel: f64,
    t_cruise: f64,
    /// Acceleration and velocity reached.
    accel: f64,
    velocity: f64,
}

impl Profile {
    /// A profile that stays at 0 (nothing to move).
    pub const STILL: Profile = Profile { length: 0.0, jerk: 0.0, t_jerk: 0.0, t_accel: 0.0, t_cruise: 0.0, accel: 0.0, velocity: 0.0 };

    /// The time-optimal profile over `length` ≥ 0 with limits `velocity`, `accel` > 0 and
    /// `jerk` > 0 (∞: no jerk limit, a trapezoid).
    pub fn plan(length: f64, velocity: f64, accel: f64, jerk: f64) -> Profile {
        debug_assert!(velocity > 0.0 && accel > 0.0 && jerk > 0.0, "limits must be positive");
        if !(length > 0.0 && length.is_finite()) {
            return Profile::STILL;
        }
        // Acceleration phase reaching `velocity` (with or without reaching `accel`).
        let (mut t_jerk, mut t_accel) = if velocity * jerk >= accel * accel {
            (accel / jerk, accel / jerk + velocity / accel)
        } else {
            let tj = (velocity / jerk).sqrt();
            (tj, 2.0 * tj)
        };
        let mut t_cruise = length / velocity - t_accel;
        if t_cruise < 0.0 {
            // Too short to cruise: the velocity peak is lower.
            t_cruise = 0.0;
            if length >= 2.0 * accel * accel * accel / (jerk * jerk) {
                t_jerk = accel / jerk;
                t_accel = 0.5 * t_jerk + (0.25 * t_jerk * t_jerk + length / accel).sqrt();
            } else {
                t_jerk = (0.5 * length / jerk).cbrt();
                t_accel = 2.0 * t_jerk;
            }
        }
        let reached_accel = if t_jerk > 0.0 { jerk * t_jerk } else { accel };
        let velocity = reached_accel * (t_accel - t_jerk);
        Profile { length, jerk, t_jerk, t_accel, t_cruise, accel: reached_accel, velocity }
    }

    /// The same shape stretched in time by `factor` ≥ 1 (slower): used to make several
    /// profiles end together.
    pub fn stretched(&self, factor: f64) -> Profile {
        let f = factor.max(1.0);
        Profile {
            length: self.length,
            jerk: self.jerk / (f * f * f),
            t_jerk: self.t_jerk * f,
            t_accel: self.t_accel * f,
            t_cruise: self.t_cruise * f,
            accel: self.accel / (f * f),
            velocity: self.velocity / f,
        }
    }

    /// Total time from rest to rest (s): acceleration, cruise and the mirrored braking.
    pub fn duration(&self) -> f64 {
        2.0 * self.t_accel + self.t_cruise
    }

    /// Distance the path parameter covers, in the units it was planned in.
    pub fn length(&self) -> f64 {
        self.length
    }

    /// Duration of the acceleration phase (= the braking phase).
    pub fn ramp_time(&self) -> f64 {
        self.t_accel
    }

    /// Peak velocity and acceleration of the profile.
    pub fn peaks(&self) -> (f64, f64) {
        (self.velocity, self.accel)
    }

    /// (s, ṡ, s̈) at time t (clamped to [0, duration]).
    pub fn sample(&self, t: f64) -> (f64, f64, f64) {
        if self.length == 0.0 || t < 0.0 {
            return (0.0, 0.0, 0.0);
        }
        let total = self.duration();
        if t >= total {
            return (self.length, 0.0, 0.0);
        }
        if t < self.t_accel {
            self.accelerating(t)
        } else if t <= self.t_accel + self.t_cruise {
            (0.5 * self.velocity * self.t_accel + self.velocity * (t - self.t_accel), self.velocity, 0.0)
        } else {
            let (s, v, a) = self.accelerating(total - t);
            (self.length - s, v, -a)
        }
    }

    /// The acceleration phase, 0 ≤ t < t_accel.
    fn accelerating(&self, t: f64) -> (f64, f64, f64) {
        let (tj, ta, a, v) = (self.t_jerk, self.t_accel, self.accel, self.velocity);
        if t < tj {
            let j = self.jerk;
            (j * t * t * t / 6.0, 0.5 * j * t * t, j * t)
        } else if t <= ta - tj {
            (a / 6.0 * (3.0 * t * t - 3.0 * tj * t + tj * tj), a * (t - 0.5 * tj), a)
        } else {
            let r = ta - t;
            let j = if tj > 0.0 { a / tj } else { 0.0 };
            (0.5 * v * ta - v * r + j * r * r * r / 6.0, v - 0.5 * j * r * r, j * r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks continuity, limits and the end point by sampling finely.
    fn check(p: &Profile, v: f64, a: f64, j: f64) {
        let total = p.duration();
        let h = total / 20_000.0;
        let (mut last_s, mut last_v, mut last_a) = p.sample(0.0);
        for k in 1..=20_000 {
            let t = k as f64 * h;
            let (s, sd, sdd) = p.sample(t);
            assert!(sd <= v * (1.0 + 1e-9) && sd >= -1e-12, "velocity {sd} at {t}");
            assert!(sdd.abs() <= a * (1.0 + 1e-9), "acceleration {sdd} at {t}");
            // Position and velocity are continuous (their slopes are bounded by the limits).
            assert!((s - last_s).abs() <= v * h * 1.0001 + 1e-12, "s jumps at {t}");
            assert!((sd - last_v).abs() <= a * h * 1.0001 + 1e-12, "ṡ jumps at {t}");
            if j.is_finite() {
                assert!((sdd - last_a).abs() <= j * h * 1.0001 + 1e-9, "s̈ jumps at {t}: {last_a} → {sdd}");
            }
            // ṡ is the derivative of s (trapezoidal rule is exact to O(h³·jerk)).
            let ds = 0.5 * (sd + last_v) * h;
            assert!((s - last_s - ds).abs() <= 1e-9 * p.length().max(1.0), "ṡ is not ds/dt at {t}");
            (last_s, last_v, last_a) = (s, sd, sdd);
        }
        assert_eq!(p.sample(total), (p.length(), 0.0, 0.0));
    }

    #[test]
    fn trapezoid_and_triangle() {
        let p = Profile::plan(2.0, 1.0, 2.0, f64::INFINITY);
        assert!((p.duration() - (2.0 / 1.0 + 1.0 / 2.0)).abs() < 1e-12);
        check(&p, 1.0, 2.0, f64::INFINITY);
        let p = Profile::plan(0.1, 1.0, 2.0, f64::INFINITY);
        assert!((p.duration() - 2.0 * (0.1f64 / 2.0).sqrt()).abs() < 1e-12);
        check(&p, 1.0, 2.0, f64::INFINITY);
    }

    #[test]
    fn double_s_in_all_its_cases() {
        // Cruise with full acceleration; cruise without reaching it; no cruise; pure jerk phases.
        for (l, v, a, j) in [(10.0, 1.0, 2.0, 10.0), (10.0, 1.0, 2.0, 1.0), (0.5, 1.0, 2.0, 10.0), (0.01, 1.0, 2.0, 10.0)] {
            let p = Profile::plan(l, v, a, j);
            check(&p, v, a, j);
        }
        // B&M's example 3.9 numbers for the cruise case: v = 5, a = 10, j = 30, L = 10.
        let p = Profile::plan(10.0, 5.0, 10.0, 30.0);
        assert!((p.t_jerk - 1.0 / 3.0).abs() < 1e-12 && (p.t_accel - (1.0 / 3.0 + 0.5)).abs() < 1e-12);
        assert!((p.duration() - (10.0 / 5.0 + 1.0 / 3.0 + 0.5)).abs() < 1e-12);
    }

    #[test]
    fn jerk_limit_costs_time_and_stretching_keeps_the_end() {
        let fast = Profile::plan(1.0, 1.0, 2.0, f64::INFINITY);
        let smooth = Profile::plan(1.0, 1.0, 2.0, 8.0);
        assert!(smooth.duration() > fast.duration());
        let slow = smooth.stretched(1.7);
        assert!((slow.duration() - 1.7 * smooth.duration()).abs() < 1e-12);
        check(&slow, 1.0 / 1.7, 2.0 / 1.7 / 1.7, 8.0 / 1.7f64.powi(3));
    }
}

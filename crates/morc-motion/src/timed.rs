//! A joint trajectory whose timing is given: points at times from its start, as ROS's
//! `trajectory_msgs/JointTrajectory` carries them (what MoveIt plans). Between two points runs a
//! quintic through both points' positions, velocities and accelerations. Where the points give
//! no accelerations they are 0 there; where they give no velocities, a point's velocity is the
//! mean of its neighbouring segments' slopes (0 where the motion turns back, and at the ends),
//! as the via-point spline does. So the reference is smooth even from a positions-only goal;
//! ros2_control's joint_trajectory_controller would run such a goal with linear segments,
//! velocity steps at every point.
//!
//! Built off the real-time path ([`TimedTrajectory::new`]); [`TimedTrajectory::sample`]
//! allocates nothing.

use crate::spline::{evaluate_quintic, quintic, via_velocity};

/// One point of a timed trajectory: time from the start (s) and, per joint, position, and
/// velocity and acceleration where given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimedPoint {
    /// Time from the trajectory's start (s).
    pub time: f64,
    /// Joint positions.
    pub positions: Vec<f64>,
    /// Joint velocities, empty when not given.
    pub velocities: Vec<f64>,
    /// Joint accelerations, empty when not given.
    pub accelerations: Vec<f64>,
}

/// A trajectory through timed points: quintic segments per joint.
#[derive(Clone, Debug)]
pub struct TimedTrajectory {
    dof: usize,
    /// Knot times, the first 0.
    times: Vec<f64>,
    /// Knot positions, one row of `dof` per knot.
    positions: Vec<f64>,
    /// Coefficients c0..c5 per segment and joint.
    coefficients: Vec<[f64; 6]>,
}

impl TimedTrajectory {
    /// The trajectory through `points` (the first at time 0), each with `dof` positions and, where
    /// given, `dof` velocities and accelerations. Says what is wrong with them otherwise.
    pub fn new(dof: usize, points: &[TimedPoint]) -> Result<TimedTrajectory, String> {
        if points.len() < 2 {
            return Err("a trajectory needs two points at least (the start and one more)".into());
        }
        if points[0].time != 0.0 {
            return Err(format!("the first point must be at time 0, it is at {} s", points[0].time));
        }
        for (i, p) in points.iter().enumerate() {
            let n = i + 1;
            if p.positions.len() != dof {
                return Err(format!("point {n} has {} positions, the joints are {dof}", p.positions.len()));
            }
            for (what, v) in [("velocities", &p.velocities), ("accelerations", &p.accelerations)] {
                if !v.is_empty() && v.len() != dof {
                    return Err(format!("point {n} has {} {what}: give none or one per joint ({dof})", v.len()));
                }
            }
            if p.positions.iter().chain(&p.velocities).chain(&p.accelerations).any(|x| !x.is_finite()) || !p.time.is_finite() {
                return Err(format!("point {n} holds a number that is not finite"));
            }
            if i > 0 && p.time <= points[i - 1].time {
                return Err(format!("point {n} is at {} s, not after point {i} at {} s: times from start must increase", p.time, points[i - 1].time));
            }
        }
        let m = points.len();
        let slope = |k: usize, j: usize| (points[k + 1].positions[j] - points[k].positions[j]) / (points[k + 1].time - points[k].time);
        let velocity = |k: usize, j: usize| match points[k].velocities.get(j) {
            Some(v) => *v,
            None if k == 0 || k + 1 == m => 0.0,
            None => via_velocity(slope(k - 1, j), slope(k, j)),
        };
        let acceleration = |k: usize, j: usize| points[k].accelerations.get(j).copied().unwrap_or(0.0);
        let mut coefficients = Vec::with_capacity((m - 1) * dof);
        for k in 0..m - 1 {
            let t = points[k + 1].time - points[k].time;
            for j in 0..dof {
                let from = [points[k].positions[j], velocity(k, j), acceleration(k, j)];
                let to = [points[k + 1].positions[j], velocity(k + 1, j), acceleration(k + 1, j)];
                coefficients.push(quintic(from, to, t));
            }
        }
        Ok(TimedTrajectory {
            dof,
            times: points.iter().map(|p| p.time).collect(),
            positions: points.iter().flat_map(|p| p.positions.iter().copied()).collect(),
            coefficients,
        })
    }

    /// The time of its last point (s).
    pub fn duration(&self) -> f64 {
        *self.times.last().expect("two points at least")
    }

    /// The joint positions of its last point.
    pub fn end(&self) -> &[f64] {
        &self.positions[self.positions.len() - self.dof..]
    }

    /// The joint positions of its first point.
    pub fn start(&self) -> &[f64] {
        &self.positions[..self.dof]
    }

    /// Position, velocity and acceleration at time `t` (before 0: the start; after the end: the
    /// last point's position, velocity and acceleration as given).
    pub fn sample(&self, t: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        let segments = self.times.len() - 1;
        let t = t.clamp(0.0, self.duration());
        // The segment holding t: few points, a binary search (no allocation).
        let k = self.times.partition_point(|x| *x <= t).saturating_sub(1).min(segments - 1);
        let tau = t - self.times[k];
        for j in 0..self.dof {
            (q[j], qd[j], qdd[j]) = evaluate_quintic(&self.coefficients[k * self.dof + j], tau);
        }
        if t >= self.duration() {
            // Exactly the last point, not the polynomial's rounding of it.
            q.copy_from_slice(self.end());
        }
    }

    /// The largest |velocity| and |acceleration| of each joint and the range of its position,
    /// sampled every `step` seconds and at every point: (max |qd|, max |qdd|, min q, max q) per
    /// joint, each with the time it happens.
    pub fn extremes(&self, step: f64) -> Vec<JointExtremes> {
        let n = self.dof;
        let mut out = vec![JointExtremes { min_position: (f64::INFINITY, 0.0), max_position: (f64::NEG_INFINITY, 0.0), ..Default::default() }; n];
        let (mut q, mut qd, mut qdd) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let mut times: Vec<f64> = (0..=(self.duration() / step).ceil() as usize).map(|i| (i as f64 * step).min(self.duration())).collect();
        times.extend(&self.times);
        for t in times {
            self.sample(t, &mut q, &mut qd, &mut qdd);
            for j in 0..n {
                let e = &mut out[j];
                if qd[j].abs() > e.velocity.0 {
                    e.velocity = (qd[j].abs(), t);
                }
                if qdd[j].abs() > e.acceleration.0 {
                    e.acceleration = (qdd[j].abs(), t);
                }
                if q[j] < e.min_position.0 {
                    e.min_position = (q[j], t);
                }
                if q[j] > e.max_position.0 {
                    e.max_position = (q[j], t);
                }
            }
        }
        out
    }
}

/// What a joint reaches along a trajectory, each as (value, time it happens).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointExtremes {
    /// Largest |velocity|.
    pub velocity: (f64, f64),
    /// Largest |acceleration|.
    pub acceleration: (f64, f64),
    /// Lowest position.
    pub min_position: (f64, f64),
    /// Highest position.
    pub max_position: (f64, f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(time: f64, positions: &[f64], velocities: &[f64], accelerations: &[f64]) -> TimedPoint {
        TimedPoint { time, positions: positions.to_vec(), velocities: velocities.to_vec(), accelerations: accelerations.to_vec() }
    }

    #[test]
    fn passes_each_point_at_its_time_with_its_derivatives() {
        let points = [point(0.0, &[0.0, 1.0], &[0.0, 0.0], &[0.0, 0.0]), point(0.5, &[0.3, 0.8], &[0.9, -0.2], &[0.5, 0.1]), point(1.2, &[1.0, 0.5], &[0.0, 0.0], &[0.0, 0.0])];
        let tr = TimedTrajectory::new(2, &points).unwrap();
        let (mut q, mut qd, mut qdd) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        for p in &points {
            // Just before and at each point: continuous.
            for t in [p.time - 1e-9, p.time] {
                tr.sample(t.max(0.0), &mut q, &mut qd, &mut qdd);
                for j in 0..2 {
                    assert!((q[j] - p.positions[j]).abs() < 1e-8, "q at {t}");
                    assert!((qd[j] - p.velocities[j]).abs() < 1e-6, "qd at {t}");
                    assert!((qdd[j] - p.accelerations[j]).abs() < 1e-4, "qdd at {t}: {} vs {}", qdd[j], p.accelerations[j]);
                }
            }
        }
        assert_eq!(tr.duration(), 1.2);
        assert_eq!(tr.end(), &[1.0, 0.5]);
        tr.sample(5.0, &mut q, &mut qd, &mut qdd);
        assert_eq!(q, [1.0, 0.5]);
    }

    #[test]
    fn positions_alone_give_a_smooth_reference_that_stops_where_the_motion_turns() {
        let points = [point(0.0, &[0.0], &[], &[]), point(1.0, &[1.0], &[], &[]), point(2.0, &[2.0], &[], &[]), point(3.0, &[0.5], &[], &[])];
        let tr = TimedTrajectory::new(1, &points).unwrap();
        let (mut q, mut qd, mut qdd) = ([0.0], [0.0], [0.0]);
        tr.sample(1.0, &mut q, &mut qd, &mut qdd);
        assert!((qd[0] - 1.0).abs() < 1e-12, "the mean of the slopes around point 2");
        tr.sample(2.0, &mut q, &mut qd, &mut qdd);
        assert_eq!(qd[0], 0.0, "it turns back at point 3");
        // Velocity continuous across a point.
        let (mut a, mut b) = ([0.0], [0.0]);
        tr.sample(1.0 - 1e-7, &mut q, &mut a, &mut qdd);
        tr.sample(1.0 + 1e-7, &mut q, &mut b, &mut qdd);
        assert!((a[0] - b[0]).abs() < 1e-5);
        let e = tr.extremes(1e-3);
        assert!(e[0].max_position.0 >= 2.0 && e[0].max_position.0 < 2.0 + 1e-9, "no overshoot where it stops: {:?}", e[0]);
    }

    #[test]
    fn bad_points_are_named() {
        let e = TimedTrajectory::new(2, &[point(0.0, &[0.0, 0.0], &[], &[]), point(0.0, &[1.0, 0.0], &[], &[])]).unwrap_err();
        assert!(e.contains("point 2 is at 0 s, not after point 1"), "{e}");
        let e = TimedTrajectory::new(2, &[point(0.0, &[0.0, 0.0], &[], &[]), point(1.0, &[1.0], &[], &[])]).unwrap_err();
        assert!(e.contains("point 2 has 1 positions"), "{e}");
        let e = TimedTrajectory::new(2, &[point(0.0, &[0.0, 0.0], &[], &[]), point(1.0, &[1.0, 0.0], &[1.0], &[])]).unwrap_err();
        assert!(e.contains("1 velocities"), "{e}");
        let e = TimedTrajectory::new(1, &[point(0.0, &[0.0], &[], &[]), point(1.0, &[f64::NAN], &[], &[])]).unwrap_err();
        assert!(e.contains("not finite"), "{e}");
    }
}

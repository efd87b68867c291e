//! Quintic segments through via points in joint space: position, velocity and acceleration
//! continuous, rest at both ends. The velocity at a via point is the mean of the neighbouring
//! segments' slopes (0 where the motion turns back), the acceleration there is 0; each
//! segment's duration is what its slowest joint needs, then the whole spline is stretched in
//! time until no joint exceeds its velocity or acceleration limit.

/// A via-point spline with its storage preallocated for `pieces` segments of `dof` joints.
#[derive(Clone, Debug)]
pub struct QuinticSpline {
    dof: usize,
    /// Knot positions, (pieces + 1) × dof, the first being the start.
    points: Vec<f64>,
    velocities: Vec<f64>,
    durations: Vec<f64>,
    /// Polynomial coefficients c0..c5 per piece and joint.
    coefficients: Vec<[f64; 6]>,
}

impl QuinticSpline {
    /// A spline from a start (given at [`plan`](Self::plan)) through `points` (one per piece,
    /// each `dof` long, flattened).
    pub fn new(dof: usize, points: &[f64]) -> QuinticSpline {
        let pieces = points.len() / dof;
        let mut knots = vec![0.0; (pieces + 1) * dof];
        knots[dof..].copy_from_slice(&points[..pieces * dof]);
        QuinticSpline { dof, points: knots, velocities: vec![0.0; (pieces + 1) * dof], durations: vec![0.0; pieces], coefficients: vec![[0.0; 6]; pieces * dof] }
    }

    /// Number of quintic segments (one per via point).
    pub fn pieces(&self) -> usize {
        self.durations.len()
    }

    /// The last via point: joint positions where the spline comes to rest.
    pub fn end(&self) -> &[f64] {
        &self.points[self.pieces() * self.dof..]
    }

    /// Sum of the segment durations (s); valid after [`plan`](Self::plan).
    pub fn duration(&self) -> f64 {
        self.durations.iter().sum()
    }

    /// Plans from `start` within per-joint `velocity` and `acceleration` limits.
    pub fn plan(&mut self, start: &[f64], velocity: &[f64], acceleration: &[f64]) {
        let n = self.dof;
        self.points[..n].copy_from_slice(start);
        // Rest-to-rest quintic peaks: 1.875·Δ/T and 5.7735·Δ/T².
        for k in 0..self.pieces() {
            let mut t: f64 = 1e-3;
            for j in 0..n {
                let d = (self.points[(k + 1) * n + j] - self.points[k * n + j]).abs();
                t = t.max(1.875 * d / velocity[j]).max((5.773_502_691_896_258 * d / acceleration[j]).sqrt());
            }
            self.durations[k] = t;
        }
        self.fit();
        // The via velocities can make a segment faster than rest to rest: stretch to the limits.
        let (mut v_ratio, mut a_ratio): (f64, f64) = (0.0, 0.0);
        for k in 0..self.pieces() {
            for i in 0..=64 {
                let tau = self.durations[k] * i as f64 / 64.0;
                for j in 0..n {
                    let (_, v, a) = self.evaluate(k, j, tau);
                    v_ratio = v_ratio.max(v.abs() / velocity[j]);
                    a_ratio = a_ratio.max(a.abs() / acceleration[j]);
                }
            }
        }
        let stretch = v_ratio.max(a_ratio.sqrt());
        if stretch > 1.0 {
            self.durations.iter_mut().for_each(|t| *t *= stretch);
            self.fit();
        }
    }

    /// Via velocities and coefficients for the current durations.
    fn fit(&mut self) {
        let (n, m) = (self.dof, self.pieces());
        for k in 1..m {
            for j in 0..n {
                let before = (self.points[k * n + j] - self.points[(k - 1) * n + j]) / self.durations[k - 1];
                let after = (self.points[(k + 1) * n + j] - self.points[k * n + j]) / self.durations[k];
                self.velocities[k * n + j] = via_velocity(before, after);
            }
        }
        for k in 0..m {
            let t = self.durations[k];
            for j in 0..n {
                let (p0, p1) = (self.points[k * n + j], self.points[(k + 1) * n + j]);
                let (v0, v1) = (self.velocities[k * n + j], self.velocities[(k + 1) * n + j]);
                self.coefficients[k * n + j] = quintic([p0, v0, 0.0], [p1, v1, 0.0], t);
            }
        }
    }

    fn evaluate(&self, piece: usize, joint: usize, tau: f64) -> (f64, f64, f64) {
        evaluate_quintic(&self.coefficients[piece * self.dof + joint], tau)
    }

    /// Position, velocity and acceleration at time t (clamped to the spline's span).
    pub fn sample(&self, t: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        let mut tau = t.max(0.0);
        let mut piece = 0;
        while piece + 1 < self.pieces() && tau > self.durations[piece] {
            tau -= self.durations[piece];
            piece += 1;
        }
        if self.pieces() == 0 || (piece + 1 == self.pieces() && tau >= self.durations[piece]) {
            let end = self.end();
            q.copy_from_slice(end);
            qd.fill(0.0);
            qdd.fill(0.0);
            return;
        }
        for j in 0..self.dof {
            (q[j], qd[j], qdd[j]) = self.evaluate(piece, j, tau);
        }
    }
}

/// The velocity at a via point between segments of mean slopes `before` and `after`: their
/// mean, or 0 where the motion turns back (or stops on one side), so the spline does not
/// overshoot the point.
pub(crate) fn via_velocity(before: f64, after: f64) -> f64 {
    if before * after > 0.0 {
        0.5 * (before + after)
    } else {
        0.0
    }
}

/// The quintic c0 + c1·τ + … + c5·τ⁵ from (position, velocity, acceleration) `from` at τ = 0 to
/// `to` at τ = `t`.
pub(crate) fn quintic(from: [f64; 3], to: [f64; 3], t: f64) -> [f64; 6] {
    let ([p0, v0, a0], [p1, v1, a1]) = (from, to);
    let d = p1 - p0;
    [
        p0,
        v0,
        0.5 * a0,
        (20.0 * d - (8.0 * v1 + 12.0 * v0) * t - (3.0 * a0 - a1) * t * t) / (2.0 * t.powi(3)),
        (-30.0 * d + (14.0 * v1 + 16.0 * v0) * t + (3.0 * a0 - 2.0 * a1) * t * t) / (2.0 * t.powi(4)),
        (12.0 * d - 6.0 * (v1 + v0) * t - (a0 - a1) * t * t) / (2.0 * t.powi(5)),
    ]
}

/// Position, velocity and acceleration of the quintic `c` at τ.
pub(crate) fn evaluate_quintic(c: &[f64; 6], tau: f64) -> (f64, f64, f64) {
    let p = c[0] + tau * (c[1] + tau * (c[2] + tau * (c[3] + tau * (c[4] + tau * c[5]))));
    let v = c[1] + tau * (2.0 * c[2] + tau * (3.0 * c[3] + tau * (4.0 * c[4] + tau * 5.0 * c[5])));
    let a = 2.0 * c[2] + tau * (6.0 * c[3] + tau * (12.0 * c[4] + tau * 20.0 * c[5]));
    (p, v, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_its_points_continuously_within_limits() {
        let points = [1.0, 0.0, 2.0, 1.0, 2.0, -1.0, 0.5, 0.5];
        let mut spline = QuinticSpline::new(2, &points);
        let (vmax, amax) = ([1.0, 2.0], [3.0, 3.0]);
        spline.plan(&[0.0, 0.0], &vmax, &amax);
        let (mut q, mut qd, mut qdd) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        // Through every knot at its time.
        let mut t = 0.0;
        for k in 0..spline.pieces() {
            t += spline.durations[k];
            spline.sample(t, &mut q, &mut qd, &mut qdd);
            assert!((q[0] - points[2 * k]).abs() < 1e-12 && (q[1] - points[2 * k + 1]).abs() < 1e-12, "knot {k}");
        }
        // Continuous and within the limits.
        let h = 1e-4;
        let (mut last_q, mut last_qd) = ([0.0; 2], [0.0; 2]);
        let steps = (spline.duration() / h) as usize;
        for i in 0..=steps {
            spline.sample(i as f64 * h, &mut q, &mut qd, &mut qdd);
            for j in 0..2 {
                assert!(qd[j].abs() <= vmax[j] * (1.0 + 1e-6) && qdd[j].abs() <= amax[j] * 1.02, "limits at {}", i as f64 * h);
                if i > 0 {
                    assert!((q[j] - last_q[j]).abs() <= vmax[j] * h * 1.01);
                    assert!((qd[j] - last_qd[j]).abs() <= amax[j] * h * 1.05);
                }
            }
            (last_q, last_qd) = (q, qd);
        }
        spline.sample(spline.duration(), &mut q, &mut qd, &mut qdd);
        assert_eq!((q, qd), ([0.5, 0.5], [0.0; 2]));
        // The via point where joint 1 turns back has velocity 0 there; the others do not stop.
        assert_eq!(spline.velocities[2 * 2 + 1], 0.0);
        assert!(spline.velocities[2] > 0.0);
    }
}

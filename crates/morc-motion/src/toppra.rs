//! Time-optimal path parameterisation by reachability analysis (TOPP-RA, Pham and Pham 2018):
//! along a joint path q(s), s ∈ [s₀, s_N] on a grid, find the fastest ṡ(s) within joint
//! velocity, acceleration and (with a model) torque limits, starting and ending at rest.
//!
//! With x = ṡ² and u = s̈, every limit is linear in (u, x) at a grid point: q̇ = q'ṡ gives
//! x·q'² ≤ v²; q̈ = q'u + q''x gives −a ≤ q'u + q''x ≤ a; τ = M q̈ + C q̇ + g gives
//! τ = A u + B x + C with A = rnea(q, 0, q') − g, B = rnea(q, q', q'') − g, C = g(q) (RNEA
//! with v = q' makes the velocity terms quadratic in ṡ). A backward pass computes at each grid
//! point the set of x from which the end is still reachable (two small linear programs per
//! point, x_{i+1} = x_i + 2Δ u); a forward pass then takes the largest u that stays in those
//! sets: the time-optimal profile, found in one sweep each way, no iteration.
//! Off the real-time path (allocates).

use crate::{CartesianPath, Kinematics};
use morc_model::{Data, Model};

/// One point of a joint path: q, dq/ds, d²q/ds².
#[derive(Clone, Debug, PartialEq)]
pub struct PathPoint {
    /// Joint positions (rad, m).
    pub q: Vec<f64>,
    /// dq/ds.
    pub dq: Vec<f64>,
    /// d²q/ds².
    pub ddq: Vec<f64>,
}

/// The limits the parameterisation keeps (per joint, SI).
#[derive(Clone, Debug, Default)]
pub struct PathLimits {
    /// |q̇| ≤ velocity.
    pub velocity: Vec<f64>,
    /// |q̈| ≤ acceleration; empty: none (the torque limits bound it then).
    pub acceleration: Vec<f64>,
    /// |τ| ≤ torque (needs the model); empty: no torque limit.
    pub torque: Vec<f64>,
    /// ṡ ≤ path_speed: the tool's Cartesian speed limit on a LIN, as its speed over its length
    /// (1/s); None: no such limit.
    pub path_speed: Option<f64>,
}

/// The time-optimal timing of a path.
#[derive(Clone, Debug)]
pub struct TimedPath {
    /// The grid (s).
    pub s: Vec<f64>,
    /// ṡ at each grid point.
    pub sd: Vec<f64>,
    /// s̈ from each grid point to the next (one fewer).
    pub sdd: Vec<f64>,
    /// Time at each grid point (s), from 0.
    pub t: Vec<f64>,
    /// The limit the timing rides from each grid point to the next (one fewer): what makes it
    /// time-optimal, as the paper's figures mark it.
    pub active: Vec<Limit>,
    /// The jerk limit's averaging time (0: none); see [`TimedPath::with_ramp`].
    ramp: f64,
    /// ∫₀ᵗ s dτ at each grid time (with a ramp only).
    integral: Vec<f64>,
}

impl TimedPath {
    /// The motion's duration (s): the time-optimal one, plus the ramp when jerk-limited.
    pub fn duration(&self) -> f64 {
        self.t.last().copied().unwrap_or(0.0) + self.ramp
    }

    /// The same timing with a jerk limit: s(t) averaged over the last `ramp` seconds (a moving
    /// average, the FIR filter of Biagiotti & Melchiorri): s̈ then changes at most by its largest
    /// jump over `ramp` — a bang-bang switch of the time-optimal profile becomes a linear ramp, as
    /// the double-S profile ramps a trapezoid's — and the motion takes `ramp` longer. ṡ and s̈
    /// are averages of the time-optimal ones, so they stay within their ranges; the joints'
    /// limits, which also depend on where on the path the averages fall, are to be checked on
    /// the result (the time_optimal kind does).
    pub fn with_ramp(mut self, ramp: f64) -> TimedPath {
        self.ramp = if ramp > 0.0 && ramp.is_finite() { ramp } else { 0.0 };
        self.integral = vec![0.0; self.t.len()];
        for i in 1..self.t.len() {
            let (dt, u) = (self.t[i] - self.t[i - 1], self.sdd[i - 1]);
            self.integral[i] = self.integral[i - 1] + self.s[i - 1] * dt + 0.5 * self.sd[i - 1] * dt * dt + u * dt * dt * dt / 6.0;
        }
        self
    }

    /// (s, ṡ, s̈) at time `time` (clamped to the motion), constant s̈ between grid points; with a
    /// ramp, their moving averages.
    pub fn at(&self, time: f64) -> (f64, f64, f64) {
        if self.ramp == 0.0 {
            let (s, sd, sdd, _) = self.raw(time);
            return (s, sd, sdd);
        }
        let (a, b) = (self.raw(time), self.raw(time - self.ramp));
        ((a.3 - b.3) / self.ramp, (a.0 - b.0) / self.ramp, (a.1 - b.1) / self.ramp)
    }

    /// The limit ridden at `time` (of the time-optimal timing; with a ramp, at the middle of
    /// the averaged window).
    pub fn active_at(&self, time: f64) -> Limit {
        let time = time - 0.5 * self.ramp;
        if time < 0.0 || time >= self.t.last().copied().unwrap_or(0.0) {
            return Limit::None;
        }
        let i = self.t.partition_point(|t| *t <= time).saturating_sub(1);
        self.active.get(i).copied().unwrap_or(Limit::None)
    }

    /// (s, ṡ, s̈, ∫s) of the time-optimal timing at `time`, at rest before 0 and after the end.
    fn raw(&self, time: f64) -> (f64, f64, f64, f64) {
        let end = self.t.last().copied().unwrap_or(0.0);
        let s_end = self.s.last().copied().unwrap_or(0.0);
        if time <= 0.0 {
            return (self.s.first().copied().unwrap_or(0.0), 0.0, 0.0, time.min(0.0) * self.s.first().copied().unwrap_or(0.0));
        }
        // Arrived: at rest at the end (the last interval's s̈ must not outlive it, or a
        // feed-forward built on it keeps pushing the arm).
        if time >= end {
            let integral = self.integral.last().copied().unwrap_or(0.0) + s_end * (time - end);
            return (s_end, 0.0, 0.0, integral);
        }
        let i = self.t.partition_point(|t| *t <= time).saturating_sub(1).min(self.sdd.len().saturating_sub(1));
        let (dt, u) = (time - self.t[i], self.sdd.get(i).copied().unwrap_or(0.0));
        let integral = self.integral.get(i).map_or(0.0, |g| g + self.s[i] * dt + 0.5 * self.sd[i] * dt * dt + u * dt * dt * dt / 6.0);
        (self.s[i] + self.sd[i] * dt + 0.5 * u * dt * dt, self.sd[i] + u * dt, u, integral)
    }
}

/// A half-plane α·u + β·x ≤ γ, and the limit it stands for.
#[derive(Clone, Copy, Debug)]
struct Row {
    alpha: f64,
    beta: f64,
    gamma: f64,
    limit: Limit,
}

/// Which limit a timing rides at a grid point (joints counted from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// None holds with equality (or the bounds that keep x ≥ 0 and finite).
    None,
    /// A joint's velocity limit.
    Velocity(usize),
    /// A joint's acceleration limit.
    Acceleration(usize),
    /// A joint's torque limit.
    Torque(usize),
    /// The tool's speed limit along the path ([`PathLimits::path_speed`]).
    PathSpeed,
}

impl Limit {
    /// A number for a plot: 0 none, 100 + j velocity, 200 + j acceleration, 300 + j torque of
    /// joint j (from 1), 400 the tool's speed.
    pub fn code(self) -> i64 {
        match self {
            Limit::None => 0,
            Limit::Velocity(j) => 101 + j as i64,
            Limit::Acceleration(j) => 201 + j as i64,
            Limit::Torque(j) => 301 + j as i64,
            Limit::PathSpeed => 400,
        }
    }
}

/// A bound on x that keeps the sets finite where the path stands still (q' = 0).
const X_MAX: f64 = 1e10;

/// The constraints at one grid point, as rows in (u, x).
/// `torque`: A, B and the constant terms of the upper and lower torque bounds (gravity and the
/// drives' friction), with the limits: A·u + B·x + up ≤ τ and −τ ≤ A·u + B·x + lo.
fn rows_at(p: &PathPoint, limits: &PathLimits, torque: Option<([&[f64]; 4], &[f64])>) -> Vec<Row> {
    let mut rows = Vec::with_capacity(2 + 5 * p.q.len());
    let x_max = limits.path_speed.map_or(X_MAX, |v| (v * v).min(X_MAX));
    let x_max_limit = if limits.path_speed.is_some_and(|v| v * v < X_MAX) { Limit::PathSpeed } else { Limit::None };
    rows.extend([Row { alpha: 0.0, beta: -1.0, gamma: 0.0, limit: Limit::None }, Row { alpha: 0.0, beta: 1.0, gamma: x_max, limit: x_max_limit }]);
    for j in 0..p.q.len() {
        if let Some(&v) = limits.velocity.get(j) {
            if p.dq[j] != 0.0 {
                rows.push(Row { alpha: 0.0, beta: p.dq[j] * p.dq[j], gamma: v * v, limit: Limit::Velocity(j) });
            }
        }
        if let Some(&a) = limits.acceleration.get(j) {
            rows.push(Row { alpha: p.dq[j], beta: p.ddq[j], gamma: a, limit: Limit::Acceleration(j) });
            rows.push(Row { alpha: -p.dq[j], beta: -p.ddq[j], gamma: a, limit: Limit::Acceleration(j) });
        }
    }
    if let Some(([a, b, up, lo], tau)) = torque {
        for j in 0..tau.len() {
            rows.push(Row { alpha: a[j], beta: b[j], gamma: tau[j] - up[j], limit: Limit::Torque(j) });
            rows.push(Row { alpha: -a[j], beta: -b[j], gamma: tau[j] + lo[j], limit: Limit::Torque(j) });
        }
    }
    rows
}

/// The interval [min, max] of x over the polygon {rows, extra}: u eliminated by Fourier–Motzkin
/// (every row bounding u from above paired with every row bounding it from below gives one
/// bound on x), so a stage costs |rows|²/4 products, not a vertex enumeration. None when empty.
/// `upper`/`lower` are scratch (the rows bounding u from above / below), kept between stages.
fn x_interval(rows: &[Row], extra: &[Row], upper: &mut Vec<Row>, lower: &mut Vec<Row>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
    let mut empty = false;
    // c·x ≤ d
    let mut bound = |c: f64, d: f64| {
        if c > 0.0 {
            hi = hi.min(d / c);
        } else if c < 0.0 {
            lo = lo.max(d / c);
        } else if d < -1e-9 * (1.0 + d.abs()) {
            empty = true;
        }
    };
    upper.clear();
    lower.clear();
    for r in rows.iter().chain(extra) {
        if r.alpha == 0.0 {
            bound(r.beta, r.gamma);
        } else if r.alpha > 0.0 {
            upper.push(*r);
        } else {
            lower.push(*r);
        }
    }
    // u ≤ (γ_r − β_r x)/α_r and u ≥ (γ_k − β_k x)/α_k (α_k < 0) meet when
    // x(β_k α_r − β_r α_k) ≤ γ_k α_r − γ_r α_k.
    for r in upper.iter() {
        for k in lower.iter() {
            bound(k.beta * r.alpha - r.beta * k.alpha, k.gamma * r.alpha - r.gamma * k.alpha);
        }
    }
    // Rounding may leave the interval a hair inverted where it is a single point.
    if empty || lo > hi + 1e-9 * (1.0 + hi.abs()) {
        return None;
    }
    Some((lo.min(hi), hi))
}

/// The time-optimal parameterisation of `path` (points at `grid`) within `limits`, from rest
/// to rest. `model` is needed for torque limits (its RNEA gives the dynamics along the path).
pub fn parameterize(grid: &[f64], path: &[PathPoint], limits: &PathLimits, model: Option<&Model>) -> Result<TimedPath, String> {
    let n = grid.len();
    if n < 2 || path.len() != n {
        return Err(format!("the path needs at least two grid points and one point per grid value (got {} and {})", n, path.len()));
    }
    if grid.windows(2).any(|w| w[1] <= w[0]) {
        return Err("the grid must increase".into());
    }
    let torque_terms: Vec<Option<[Vec<f64>; 4]>> = match (model, limits.torque.is_empty()) {
        (Some(model), false) => {
            let mut data = Data::new(model);
            let zero = vec![0.0; model.nv()];
            let drives = model.drive_trains();
            let mut terms = Vec::with_capacity(n);
            for (i, p) in path.iter().enumerate() {
                let g = morc_model::rnea(model, &mut data, &p.q, &zero, &zero).as_slice().to_vec();
                // Holding still must be possible everywhere: gravity alone within the torque limits.
                if let Some(j) = (0..g.len()).find(|&j| g[j].abs() > limits.torque[j]) {
                    return Err(format!(
                        "joint {} needs {:.1} N·m to hold the arm at s = {:.4} (grid point {}), more than its limit {:.1} N·m: the path goes where the arm cannot carry itself",
                        j + 1,
                        g[j].abs(),
                        grid[i],
                        i + 1,
                        limits.torque[j]
                    ));
                }
                let a: Vec<f64> = morc_model::rnea(model, &mut data, &p.q, &zero, &p.dq).as_slice().iter().zip(&g).map(|(t, g)| t - g).collect();
                let b: Vec<f64> = morc_model::rnea(model, &mut data, &p.q, &p.dq, &p.ddq).as_slice().iter().zip(&g).map(|(t, g)| t - g).collect();
                // The drives' friction D·q'ṡ + C·sign(q') is not of the form A·u + B·x (RNEA,
                // rigid-body only, leaves it out of B): it is kept as a bound instead, Coulomb
                // exactly, viscous at the fastest ṡ the velocity limits allow here — so the
                // torque limits hold whatever the speed (conservative by the viscous share).
                let sd_max = limits
                    .path_speed
                    .unwrap_or(f64::INFINITY)
                    .min(limits.velocity.iter().zip(&p.dq).filter(|(_, d)| **d != 0.0).map(|(v, d)| v / d.abs()).fold(f64::INFINITY, f64::min));
                let (mut up, mut lo) = (g.clone(), g.clone());
                for j in 0..b.len() {
                    let drive = drives.get(j).copied().unwrap_or_default();
                    let (viscous, coulomb) = (drive.viscous_friction * p.dq[j], drive.coulomb_friction * p.dq[j].signum());
                    if viscous != 0.0 && !sd_max.is_finite() {
                        return Err(format!("joint {} has viscous friction: torque limits then need velocity limits (grid point {})", j + 1, i + 1));
                    }
                    if p.dq[j] != 0.0 {
                        up[j] += coulomb + viscous.max(0.0) * sd_max;
                        lo[j] += coulomb + viscous.min(0.0) * sd_max;
                    } else {
                        // Starting from rest on the path: static friction either way.
                        up[j] += drive.coulomb_friction;
                        lo[j] -= drive.coulomb_friction;
                    }
                }
                terms.push(Some([a, b, up, lo]));
            }
            terms
        }
        (None, false) => return Err("torque limits need the robot's model".into()),
        _ => vec![None; n],
    };
    let rows: Vec<Vec<Row>> = path
        .iter()
        .zip(&torque_terms)
        .map(|(p, t)| rows_at(p, limits, t.as_ref().map(|[a, b, up, lo]| ([a.as_slice(), b.as_slice(), up.as_slice(), lo.as_slice()], limits.torque.as_slice()))))
        .collect();
    // Backward: the controllable sets [lo, hi] of x, ending at rest.
    let mut sets = vec![(0.0, 0.0); n];
    let (mut upper, mut lower) = (Vec::new(), Vec::new());
    for i in (0..n - 1).rev() {
        let delta = grid[i + 1] - grid[i];
        let (lo, hi) = sets[i + 1];
        // lo ≤ x + 2Δu ≤ hi
        let next = [Row { alpha: 2.0 * delta, beta: 1.0, gamma: hi, limit: Limit::None }, Row { alpha: -2.0 * delta, beta: -1.0, gamma: -lo, limit: Limit::None }];
        let Some((min, max)) = x_interval(&rows[i], &next, &mut upper, &mut lower) else {
            return Err(format!("no motion along the path stays within the limits at s = {:.4} (grid point {})", grid[i], i + 1));
        };
        sets[i] = (min.max(0.0), max);
    }
    if sets[0].0 > 1e-12 {
        return Err("the path cannot start from rest within the limits".into());
    }
    // Forward: the largest s̈ that stays controllable.
    let mut x = vec![0.0; n];
    let mut sdd = Vec::with_capacity(n - 1);
    let mut active = Vec::with_capacity(n - 1);
    for i in 0..n - 1 {
        let delta = grid[i + 1] - grid[i];
        let (lo, hi) = sets[i + 1];
        let (mut u_lo, mut u_hi) = ((lo - x[i]) / (2.0 * delta), (hi - x[i]) / (2.0 * delta));
        for r in &rows[i] {
            let rest = r.gamma - r.beta * x[i];
            if r.alpha > 0.0 {
                u_hi = u_hi.min(rest / r.alpha);
            } else if r.alpha < 0.0 {
                u_lo = u_lo.max(rest / r.alpha);
            }
        }
        // Rounding may leave the interval a hair inverted: take its middle then.
        let u = if u_hi >= u_lo { u_hi } else { 0.5 * (u_lo + u_hi) };
        x[i + 1] = (x[i] + 2.0 * delta * u).clamp(lo.max(0.0), hi);
        let u = (x[i + 1] - x[i]) / (2.0 * delta);
        sdd.push(u);
        // The limit that holds with equality here (the tightest, relative to its bound).
        let slack = |r: &Row| (r.gamma - r.alpha * u - r.beta * x[i]) / (1.0 + r.gamma.abs());
        active.push(
            rows[i]
                .iter()
                .filter(|r| r.limit != Limit::None)
                .map(|r| (slack(r), r.limit))
                .filter(|(d, _)| *d < 1e-6)
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map_or(Limit::None, |(_, l)| l),
        );
    }
    let sd: Vec<f64> = x.iter().map(|x| x.max(0.0).sqrt()).collect();
    let mut t = vec![0.0; n];
    for i in 0..n - 1 {
        let v = sd[i] + sd[i + 1];
        if v <= 0.0 {
            return Err(format!("the motion stops inside the path at s = {:.4}: the limits leave no speed there", grid[i]));
        }
        t[i + 1] = t[i] + 2.0 * (grid[i + 1] - grid[i]) / v;
    }
    Ok(TimedPath { s: grid.to_vec(), sd, sdd, t, active, ramp: 0.0, integral: Vec::new() })
}

/// A path through joint waypoints: a natural cubic spline in each joint over s ∈ [0, 1], the
/// waypoints at s proportional to the cumulative joint-space distance.
pub fn spline_path(waypoints: &[Vec<f64>], grid_points: usize) -> Result<(Vec<f64>, Vec<PathPoint>), String> {
    let m = waypoints.len();
    if m < 2 {
        return Err("a path needs two waypoints at least".into());
    }
    let dof = waypoints[0].len();
    let mut knots = vec![0.0];
    for w in waypoints.windows(2) {
        let d = w[0].iter().zip(&w[1]).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
        if d == 0.0 {
            return Err("two consecutive waypoints are the same".into());
        }
        knots.push(knots.last().unwrap() + d);
    }
    let total = *knots.last().unwrap();
    knots.iter_mut().for_each(|k| *k /= total);
    // Second derivatives of the natural spline per joint (tridiagonal solve).
    let mut second = vec![vec![0.0; m]; dof];
    for (j, sec) in second.iter_mut().enumerate() {
        let (mut c, mut d) = (vec![0.0; m], vec![0.0; m]);
        for i in 1..m - 1 {
            let (h0, h1) = (knots[i] - knots[i - 1], knots[i + 1] - knots[i]);
            let r = 6.0 * ((waypoints[i + 1][j] - waypoints[i][j]) / h1 - (waypoints[i][j] - waypoints[i - 1][j]) / h0);
            let diag = 2.0 * (h0 + h1) - h0 * c[i - 1];
            c[i] = h1 / diag;
            d[i] = (r - h0 * d[i - 1]) / diag;
        }
        for i in (1..m - 1).rev() {
            sec[i] = d[i] - c[i] * sec[i + 1];
        }
    }
    let grid: Vec<f64> = (0..grid_points).map(|k| k as f64 / (grid_points - 1) as f64).collect();
    let points = grid
        .iter()
        .map(|&s| {
            let i = knots.partition_point(|k| *k <= s).clamp(1, m - 1) - 1;
            let h = knots[i + 1] - knots[i];
            let (a, b) = ((knots[i + 1] - s) / h, (s - knots[i]) / h);
            let mut p = PathPoint { q: vec![0.0; dof], dq: vec![0.0; dof], ddq: vec![0.0; dof] };
            for j in 0..dof {
                let (y0, y1, m0, m1) = (waypoints[i][j], waypoints[i + 1][j], second[j][i], second[j][i + 1]);
                p.q[j] = a * y0 + b * y1 + ((a * a * a - a) * m0 + (b * b * b - b) * m1) * h * h / 6.0;
                p.dq[j] = (y1 - y0) / h - (3.0 * a * a - 1.0) / 6.0 * h * m0 + (3.0 * b * b - 1.0) / 6.0 * h * m1;
                p.ddq[j] = a * m0 + b * m1;
            }
            p
        })
        .collect();
    Ok((grid, points))
}

/// The joint path of the tool's `path` (a LIN or CIRC) from `start`: the inverse kinematics at
/// every grid point of s ∈ [0, 1] (each seeded by the one before, so the arm keeps its
/// configuration), q' and q'' by central differences of those solutions (second order, one-sided
/// at the ends). The tool follows `path` at the grid points; TOPP-RA then times it within the
/// joints' limits rather than the tool's Cartesian ones.
pub fn cartesian_path(arm: &mut dyn Kinematics, path: &CartesianPath, start: &[f64], grid_points: usize) -> Result<(Vec<f64>, Vec<PathPoint>), String> {
    if grid_points < 4 {
        return Err("a Cartesian path needs four grid points at least".into());
    }
    let n = grid_points - 1;
    let grid: Vec<f64> = (0..=n).map(|k| k as f64 / n as f64).collect();
    let mut qs: Vec<Vec<f64>> = Vec::with_capacity(grid_points);
    let mut seed = start.to_vec();
    for &s in &grid {
        let mut q = vec![0.0; start.len()];
        if !arm.inverse(&path.pose(s), &seed, &mut q) {
            let p = path.pose(s).translation * 1e3;
            return Err(format!("the tool's path leaves the arm's reach (or its joint limits) at s = {s:.3}, ({:.1}, {:.1}, {:.1}) mm", p.x, p.y, p.z));
        }
        // A jump between neighbours is the solver switching configuration, not a path.
        let jump = q.iter().zip(&seed).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        if jump > 0.2 {
            return Err(format!("the arm's configuration flips at s = {s:.3} (a joint jumps {:.1}°): a singularity lies on the path", jump.to_degrees()));
        }
        seed.copy_from_slice(&q);
        qs.push(q);
    }
    let h = 1.0 / n as f64;
    let points = (0..=n)
        .map(|k| {
            let dof = start.len();
            let (mut dq, mut ddq) = (vec![0.0; dof], vec![0.0; dof]);
            for j in 0..dof {
                let q = |i: usize| qs[i][j];
                (dq[j], ddq[j]) = match k {
                    0 => ((-3.0 * q(0) + 4.0 * q(1) - q(2)) / (2.0 * h), (2.0 * q(0) - 5.0 * q(1) + 4.0 * q(2) - q(3.min(n))) / (h * h)),
                    k if k == n => ((3.0 * q(n) - 4.0 * q(n - 1) + q(n - 2)) / (2.0 * h), (2.0 * q(n) - 5.0 * q(n - 1) + 4.0 * q(n - 2) - q(n.saturating_sub(3))) / (h * h)),
                    k => ((q(k + 1) - q(k - 1)) / (2.0 * h), (q(k + 1) - 2.0 * q(k) + q(k - 1)) / (h * h)),
                };
            }
            PathPoint { q: qs[k].clone(), dq, ddq }
        })
        .collect();
    Ok((grid, points))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_single_joint_path_gets_the_trapezoid() {
        // q = 2 s over s ∈ [0, 1]: 2 rad at ≤ 1 rad/s and ≤ 2 rad/s²: 0.5 s ramps, 1.5 s cruise.
        let grid: Vec<f64> = (0..=1000).map(|k| k as f64 / 1000.0).collect();
        let path: Vec<PathPoint> = grid.iter().map(|s| PathPoint { q: vec![2.0 * s], dq: vec![2.0], ddq: vec![0.0] }).collect();
        let limits = PathLimits { velocity: vec![1.0], acceleration: vec![2.0], torque: vec![], path_speed: None };
        let timed = parameterize(&grid, &path, &limits, None).unwrap();
        assert!((timed.duration() - 2.5).abs() < 0.01, "duration {}", timed.duration());
        let (_, sd, _) = timed.at(1.25);
        assert!((2.0 * sd - 1.0).abs() < 1e-6, "cruising at the velocity limit: {}", 2.0 * sd);
        // What it rides: the acceleration limit up, the velocity limit across, the acceleration down.
        assert_eq!([timed.active_at(0.25), timed.active_at(1.25), timed.active_at(2.25)], [Limit::Acceleration(0), Limit::Velocity(0), Limit::Acceleration(0)]);
        assert_eq!(Limit::Velocity(0).code(), 101);
        for (i, u) in timed.sdd.iter().enumerate() {
            assert!((2.0 * u).abs() <= 2.0 + 1e-6, "acceleration {} at {i}", 2.0 * u);
        }
    }

    #[test]
    fn a_ramp_turns_the_trapezoid_into_the_double_s() {
        // The trapezoid above averaged over 0.2 s: B&M's double S with jerk a/0.2 = 10 rad/s³,
        // 0.2 s longer, the same end, velocity and acceleration within the trapezoid's.
        let grid: Vec<f64> = (0..=1000).map(|k| k as f64 / 1000.0).collect();
        let path: Vec<PathPoint> = grid.iter().map(|s| PathPoint { q: vec![2.0 * s], dq: vec![2.0], ddq: vec![0.0] }).collect();
        let limits = PathLimits { velocity: vec![1.0], acceleration: vec![2.0], torque: vec![], path_speed: None };
        let timed = parameterize(&grid, &path, &limits, None).unwrap().with_ramp(0.2);
        assert!((timed.duration() - 2.7).abs() < 0.01, "duration {}", timed.duration());
        assert_eq!(timed.at(0.0), (0.0, 0.0, 0.0));
        let (s, sd, sdd) = timed.at(timed.duration());
        assert!((s - 1.0).abs() < 1e-9 && sd.abs() < 1e-9 && sdd.abs() < 1e-9, "{s} {sd} {sdd}");
        let dt = 1e-3;
        let mut last = timed.at(0.0).2;
        for k in 1..=(timed.duration() / dt) as usize {
            let (_, sd, sdd) = timed.at(k as f64 * dt);
            assert!(2.0 * sd <= 1.0 + 1e-6 && (2.0 * sdd).abs() <= 2.0 + 1e-6, "at {k}: {sd} {sdd}");
            // Jerk: 2·Δs̈/Δt ≤ 2/0.2 · (1 + grid rounding).
            assert!(2.0 * (sdd - last).abs() / dt <= 10.0 * 1.05, "jerk {} at {k}", 2.0 * (sdd - last) / dt);
            last = sdd;
        }
        // Halfway through the first ramp the acceleration is half the limit.
        assert!((2.0 * timed.at(0.1).2 - 1.0).abs() < 0.02, "{}", 2.0 * timed.at(0.1).2);
    }

    #[test]
    fn a_spline_through_waypoints_passes_them() {
        let w = vec![vec![0.0, 0.0], vec![1.0, 0.5], vec![1.5, -0.5], vec![2.0, 0.0]];
        let (grid, path) = spline_path(&w, 301).unwrap();
        assert_eq!(path[0].q, w[0]);
        assert!(path[300].q.iter().zip(&w[3]).all(|(a, b)| (a - b).abs() < 1e-12));
        // dq is the derivative of q (central differences).
        for k in [50, 150, 250] {
            let h = grid[k + 1] - grid[k - 1];
            for j in 0..2 {
                let numeric = (path[k + 1].q[j] - path[k - 1].q[j]) / h;
                assert!((numeric - path[k].dq[j]).abs() < 1e-3, "joint {j} at {k}: {numeric} vs {}", path[k].dq[j]);
            }
        }
    }
}

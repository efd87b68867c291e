//! The simulated operator: a scripted hand on the robot's tool, so that hand guiding and
//! teaching run and are tested without a person. The hand pushes with a force profile, or
//! pulls the tool with a spring towards a sequence of targets, pressing the teach button on
//! each arrival; it holds the enabling switch while it guides. The simulated plant applies its
//! force to the arm and its wrist F/T sensor measures it (with the tool's weight, an offset
//! and noise, [`SimFtSpec`]).

use nalgebra::Vector3;

/// What the hand does during one segment of its script.
#[derive(Clone, Debug, PartialEq)]
pub enum HandAction {
    /// A constant force on the tool (N, base axes).
    Push {
        /// The force (N, base axes).
        force: [f64; 3],
    },
    /// A spring-damper pulling the tool towards each target in turn (m, base axes); on
    /// arrival (within `tolerance`, slower than 10·`tolerance` per second) it waits `dwell`,
    /// presses the teach button for 50 ms and moves on. The segment ends after the last target.
    Tour {
        /// The points to guide the tool to (m, base axes).
        targets: Vec<[f64; 3]>,
        /// Spring stiffness (N/m).
        stiffness: f64,
        /// Damping against the tool's velocity (N·s/m).
        damping: f64,
        /// The most the hand pushes (N).
        max_force: f64,
        /// How close counts as arrived (m).
        tolerance: f64,
        /// How long it waits on a target before pressing the button (s).
        dwell: f64,
    },
    /// Hands off: no force.
    Release,
}

/// One segment of the hand's script.
#[derive(Clone, Debug, PartialEq)]
pub struct HandSegment {
    /// How long it lasts at most (s).
    pub duration: f64,
    /// What the hand does.
    pub action: HandAction,
    /// Whether it holds the enabling switch meanwhile.
    pub enable: bool,
}

/// The hand's whole script, run from the tick the plant picks it up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HandScript {
    /// Segments, one after the other.
    pub segments: Vec<HandSegment>,
}

impl HandScript {
    /// The longest the script can take (s).
    pub fn duration(&self) -> f64 {
        self.segments.iter().map(|s| s.duration).sum()
    }
}

/// How long the teach button stays pressed (s).
const BUTTON_PRESS: f64 = 0.05;

/// What the hand does at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HandOutput {
    /// Its force on the tool (N, base axes).
    pub force: Vector3<f64>,
    /// Whether it holds the enabling switch.
    pub enable: bool,
    /// Whether it presses the teach button.
    pub button: bool,
    /// The segment it is in (1-based; 0 once the script is over).
    pub segment: usize,
}

/// Where the hand is in its script (kept by the plant; no allocation).
#[derive(Clone, Debug, Default)]
pub struct HandState {
    segment: usize,
    segment_start: f64,
    target: usize,
    arrived_at: Option<f64>,
    button_until: f64,
}

impl HandState {
    /// Advances the hand to time `t` (s since the script started) with the tool at `pos`
    /// moving at `vel` (m, m/s, base axes), and says what it does.
    pub fn step(&mut self, script: &HandScript, t: f64, pos: &Vector3<f64>, vel: &Vector3<f64>) -> HandOutput {
        loop {
            let Some(seg) = script.segments.get(self.segment) else {
                return HandOutput::default();
            };
            let elapsed = t - self.segment_start;
            let tour_done = matches!(&seg.action, HandAction::Tour { targets, .. } if self.target >= targets.len() && t >= self.button_until);
            if elapsed >= seg.duration || tour_done {
                self.segment += 1;
                self.segment_start = t;
                self.target = 0;
                self.arrived_at = None;
                continue;
            }
            let mut out = HandOutput { enable: seg.enable, button: t < self.button_until, segment: self.segment + 1, ..HandOutput::default() };
            match &seg.action {
                HandAction::Push { force } => out.force = Vector3::from(*force),
                HandAction::Release => {}
                HandAction::Tour { targets, stiffness, damping, max_force, tolerance, dwell } => {
                    if let Some(target) = targets.get(self.target) {
                        let error = Vector3::from(*target) - pos;
                        let mut f = error * *stiffness - vel * *damping;
                        let norm = f.norm();
                        if norm > *max_force {
                            f *= max_force / norm;
                        }
                        out.force = f;
                        if error.norm() < *tolerance && vel.norm() < 10.0 * *tolerance {
                            let since = *self.arrived_at.get_or_insert(t);
                            if t - since >= *dwell {
                                self.button_until = t + BUTTON_PRESS;
                                out.button = true;
                                self.target += 1;
                                self.arrived_at = None;
                            }
                        } else {
                            self.arrived_at = None;
                        }
                    }
                }
            }
            return out;
        }
    }
}

/// What a simulated wrist F/T sensor measures besides the hand: the tool behind it, an offset
/// (which biasing removes) and noise.
#[derive(Clone, Debug, PartialEq)]
pub struct SimFtSpec {
    /// The tool's mass on the sensor (kg).
    pub load_mass: f64,
    /// Its centre of mass in the sensor frame (m).
    pub load_com: [f64; 3],
    /// The sensor's offset: Fx Fy Fz (N), Tx Ty Tz (N·m).
    pub bias: [f64; 6],
    /// Standard deviation of the noise on forces (N) and torques (N·m).
    pub noise: [f64; 2],
}

/// A wrist force/torque sensor on a robot: the frame it measures in, and how it is simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct FtSensor {
    /// The sensor's frame in the robot's model (its origin is where the hand grips).
    pub frame: morc_model::FrameIndex,
    /// What the simulated sensor adds to the hand's force.
    pub sim: SimFtSpec,
}

/// Gaussian noise from a fixed seed (xorshift64* and Box–Muller): the same run measures the
/// same noise, so tests on the virtual clock are deterministic.
#[derive(Clone, Debug)]
pub struct Noise {
    state: u64,
}

impl Noise {
    /// A generator seeded with `seed` (non-zero).
    pub fn new(seed: u64) -> Noise {
        Noise { state: seed.max(1) }
    }
    /// A sample uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let x = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// A standard normal sample.
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tour() -> HandScript {
        HandScript {
            segments: vec![
                HandSegment { duration: 0.1, action: HandAction::Push { force: [10.0, 0.0, 0.0] }, enable: true },
                HandSegment {
                    duration: 10.0,
                    action: HandAction::Tour { targets: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], stiffness: 100.0, damping: 0.0, max_force: 20.0, tolerance: 0.01, dwell: 0.2 },
                    enable: true,
                },
            ],
        }
    }

    #[test]
    fn a_push_then_a_tour_that_presses_the_button_on_arrival() {
        let script = tour();
        let mut hand = HandState::default();
        let (zero, still) = (Vector3::zeros(), Vector3::zeros());
        let out = hand.step(&script, 0.0, &zero, &still);
        assert_eq!((out.force.x, out.segment, out.enable, out.button), (10.0, 1, true, false));
        // At the first target already: it dwells, then presses.
        assert_eq!(hand.step(&script, 0.1, &zero, &still).segment, 2);
        assert!(!hand.step(&script, 0.25, &zero, &still).button);
        assert!(hand.step(&script, 0.31, &zero, &still).button);
        // Then it pulls towards the second target, saturated at 20 N.
        let out = hand.step(&script, 0.4, &zero, &still);
        assert_eq!(out.force.x, 20.0);
        assert!(!out.button);
        let there = Vector3::new(1.0, 0.0, 0.0);
        hand.step(&script, 1.0, &there, &still);
        assert!(hand.step(&script, 1.21, &there, &still).button);
        // Over once the button is let go after the last target.
        assert_eq!(hand.step(&script, 1.3, &there, &still), HandOutput::default());
    }

    #[test]
    fn noise_is_standard_normal_and_repeatable() {
        let mut a = Noise::new(7);
        let xs: Vec<f64> = (0..20000).map(|_| a.normal()).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.03 && (var - 1.0).abs() < 0.05, "mean {mean} var {var}");
        assert_eq!(Noise::new(7).normal(), xs[0]);
    }
}

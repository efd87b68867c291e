//! The simulated robot: the arm's forward dynamics driven by simulated servo drives, as the
//! engine's base. Each drive runs in cyclic synchronous position mode with a torque
//! feed-forward: a P position loop feeding a PI velocity loop, both at the bus rate, and its
//! output torque saturates at the joint's torque limit. The plant is integrated with
//! semi-implicit (symplectic) Euler at the bus rate: one ABA per tick, which a real drive's
//! sampled control also assumes; it is stable and energy-conserving enough for loop
//! bandwidths well below the bus rate (ours: 25 Hz velocity loop at 1 kHz), where RK4 would
//! cost four ABAs per tick and still see the controller's torque as piecewise constant.
//! The drives' friction (the model's drive trains: viscous·q̇ + Coulomb·sign(q̇)) opposes the
//! drive torque before it reaches the arm: ABA is rigid-body only, as Pinocchio's, so the plant
//! moves as `aba(q, q̇, tau − friction(q̇))`. A robot whose drive trains have a stiffness is
//! integrated as an elastic arm instead ([`crate::elastic`]): the drives then measure and move
//! the motors, and the links (outputs `q_link`, `qd_link`) follow through the gears' springs.

use crate::RobotError;
use std::sync::Arc;

use morc_kernel::{Base, Commands, Standstill};
use morc_kernel::{ComponentInfo, PortInfo, Step};
use morc_kernel::{Value, ValueType};
use morc_model::Data;

use super::Robot;
use crate::elastic::ElasticPlant;
use crate::sim_hand::{FtSensor, HandOutput, HandScript, HandState, Noise};
use nalgebra::Vector3;

/// The simulated operator's hand on the tool and the wrist F/T sensor that feels it.
struct SimWrist {
    sensor: FtSensor,
    script: Arc<HandScript>,
    seen: u64,
    hand: HandState,
    /// Time since the script was picked up (s): the plant's time, which stands still between assemblies.
    t: f64,
    /// What the hand did in the last step.
    out: HandOutput,
    noise: Noise,
    /// The drives' torques less their friction, plus the hand's, for the dynamics.
    tau_total: Vec<f64>,
}

/// Servo-drive loop tuning, as bandwidths; gains follow from each joint's inertia.
#[derive(Clone, Copy, Debug)]
pub struct DriveGains {
    /// Velocity-loop bandwidth (rad/s).
    pub velocity_bandwidth: f64,
    /// Position-loop gain (1/s); a quarter of the velocity bandwidth keeps the cascade damped.
    pub position_gain: f64,
    /// Velocity-loop integral corner (rad/s).
    pub integral_corner: f64,
}

impl Default for DriveGains {
    fn default() -> Self {
        let wv = std::f64::consts::TAU * 25.0;
        DriveGains { velocity_bandwidth: wv, position_gain: wv / 4.0, integral_corner: wv / 8.0 }
    }
}

/// The simulated arm as an engine base: outputs measured q (rad), qd (rad/s), tau (N·m); takes q_cmd, qd_ff, tau_ff.
pub struct SimulatedRobot {
    info: ComponentInfo,
    robot: Arc<Robot>,
    /// The arm as it is now: follows payload changes published at runtime.
    model: Arc<morc_model::Model>,
    seen: u64,
    data: Data,
    period: f64,
    q: Vec<f64>,
    qd: Vec<f64>,
    tau: Vec<f64>,
    /// The drives' torques less their friction: what moves the arm's rigid body.
    tau_net: Vec<f64>,
    /// Position held while no assembly commands q_cmd (latched at the switch).
    hold: Vec<f64>,
    holding: bool,
    /// A quick stop in progress ([`Base::stop`]): the braking reference's velocity per joint,
    /// reaching 0 at the joints' acceleration limits, and the reference as commands.
    stopping: bool,
    stop_velocity: Vec<f64>,
    stop_commands: Vec<Value>,
    /// Whether the arm has stood still for the last few cycles, joint by joint.
    standstill: Standstill,
    /// Velocity-loop integrator state (N·m).
    integral: Vec<f64>,
    /// The position references of the last two servo cycles (last, the one before) and how
    /// many of them there were: what a swapped-in controller's first command is checked against.
    references: [Vec<f64>; 2],
    references_seen: u8,
    /// Whether the torque feed-forward was driven in the last cycle.
    ff_driven: bool,
    /// Velocity-loop proportional gain per joint (N·m·s/rad).
    kv: Vec<f64>,
    kp: f64,
    ki: f64,
    wrist: Option<SimWrist>,
    /// The links behind elastic gears, when the robot has any: `q`, `qd` are then the motors'.
    elastic: Option<ElasticPlant>,
}

impl SimulatedRobot {
    /// The robot at rest at `q0` (rad), stepped every `period` seconds.
    pub fn new(robot: Arc<Robot>, q0: &[f64], period: f64) -> Result<Self, RobotError> {
        Self::with_gains(robot, q0, period, DriveGains::default())
    }

    /// As [`SimulatedRobot::new`], with the drives tuned by `gains` instead of the defaults.
    pub fn with_gains(robot: Arc<Robot>, q0: &[f64], period: f64, gains: DriveGains) -> Result<Self, RobotError> {
        let n = robot.dof();
        if q0.len() != n {
            return Err(RobotError::Start(format!("robot '{}' has {n} joints, the start position {} values", robot.name, q0.len())));
        }
        let mut info = ComponentInfo::new("simulated_robot", "the arm's forward dynamics driven by simulated servo drives (P-PI cascade, torque feed-forward); holds when not commanded")
            .output(robot.joint_port("q", "rad", "m").doc("measured joint positions"))
            .output(robot.joint_port("qd", "rad/s", "m/s").doc("measured joint velocities"))
            .output(robot.joint_port("tau", "N·m", "N").doc("joint torques (forces, prismatic) the drives applied in the last cycle"))
            .input(robot.joint_port("q_cmd", "rad", "m").doc("commanded positions (hold when not driven)"))
            .input(robot.joint_port("qd_ff", "rad/s", "m/s").doc("velocity feed-forward"))
            .input(robot.joint_port("tau_ff", "N·m", "N").doc("torque (force) feed-forward"));
        if robot.ft.is_some() {
            info = info
                .output(PortInfo::wrench("ft").doc("the wrist F/T sensor: Fx Fy Fz Tx Ty Tz in its own frame, raw (offset and the tool's weight included)"))
                .output(PortInfo::new("enable", ValueType::Boolean).doc("the enabling switch of the hand-guiding handle (held: true)"))
                .output(PortInfo::new("button", ValueType::Boolean).doc("the teach button on the handle"))
                .output(PortInfo::new("hand", ValueType::Integer).doc("the simulated operator's script segment (1-based; 0: none or over)"));
        }
        let mut data = Data::new(&robot.model);
        let names: Vec<String> = robot.joints.iter().map(|j| j.name.clone()).collect();
        let elastic = ElasticPlant::new(&robot.model, &mut data, q0, period, &names).map_err(|e| RobotError::Start(format!("robot '{}': {e}", robot.name)))?;
        if elastic.is_some() {
            if robot.ft.is_some() {
                return Err(RobotError::Start(format!("robot '{}': the simulated hand on the F/T sensor is not simulated on an elastic arm yet: give its drives no stiffness", robot.name)));
            }
            info = info
                .output(robot.joint_port("q_link", "rad", "m").doc("the links' positions behind the elastic gears (what a tracker sees; q is the motors')"))
                .output(robot.joint_port("qd_link", "rad/s", "m/s").doc("the links' velocities"));
        }
        info.description = match robot.payload {
            Some(kg) => format!("{} (simulated, {kg} kg payload)", robot.name),
            None => format!("{} (simulated)", robot.name),
        };
        // Gains from the inertia each joint sees at the start (mass matrix diagonal, armature included).
        let inertia: Vec<f64> = {
            let m = morc_model::crba(&robot.model, &mut data, q0);
            (0..n).map(|i| m[(i, i)].max(1e-3)).collect()
        };
        // What the plant's velocity dithers by while it holds: Coulomb friction flips sign with
        // the velocity, so a holding joint chatters by about coulomb·period/inertia each cycle.
        let dither: Vec<f64> = robot.model.drive_trains().iter().zip(&inertia).map(|(d, m)| d.coulomb_friction.abs() * period / m).collect();
        let standstill = Standstill::new(robot.standstill_speeds(period, &dither), period);
        // Start in equilibrium: the integrator already carries gravity, so nothing sags at t = 0.
        // (On an elastic arm, gravity at the links' position: the springs pass it to the motors.)
        let integral = morc_model::gravity(&robot.model, &mut data, elastic.as_ref().map_or(q0, |p| &p.q[..])).iter().copied().collect();
        Ok(SimulatedRobot {
            info,
            data,
            period,
            q: q0.to_vec(),
            qd: vec![0.0; n],
            tau: vec![0.0; n],
            tau_net: vec![0.0; n],
            hold: q0.to_vec(),
            holding: true,
            stopping: false,
            stop_velocity: vec![0.0; n],
            stop_commands: vec![Value::Vector(q0.to_vec()), Value::Vector(vec![0.0; n])],
            standstill,
            integral,
            references: [q0.to_vec(), q0.to_vec()],
            references_seen: 0,
            ff_driven: false,
            kv: inertia.iter().map(|j| j * gains.velocity_bandwidth).collect(),
            kp: gains.position_gain,
            ki: gains.integral_corner,
            model: robot.live.current(),
            seen: 0,
            wrist: robot.ft.clone().map(|sensor| SimWrist {
                sensor,
                script: Arc::new(HandScript::default()),
                seen: 0,
                hand: HandState::default(),
                t: 0.0,
                out: HandOutput::default(),
                noise: Noise::new(0x5eed_f00d),
                tau_total: vec![0.0; n],
            }),
            elastic,
            robot,
        })
    }
}

impl Base for SimulatedRobot {
    fn info(&self) -> &ComponentInfo {
        &self.info
    }

    fn sense(&mut self, _tick: u64, outputs: &mut [Value]) -> Step {
        outputs[0].as_mut_slice().copy_from_slice(&self.q);
        outputs[1].as_mut_slice().copy_from_slice(&self.qd);
        outputs[2].as_mut_slice().copy_from_slice(&self.tau);
        if let Some(w) = &mut self.wrist {
            // What the sensor feels: the hand's force (gripped at its origin) and the tool's
            // weight, in the sensor's axes, plus its offset and noise.
            let placement = {
                morc_model::forward_kinematics_placements(&self.model, &mut self.data, &self.q);
                morc_model::frame_placement(&self.model, &self.data, w.sensor.frame)
            };
            let rt = placement.rotation.transpose();
            let spec = &w.sensor.sim;
            let weight = rt * Vector3::new(0.0, 0.0, -9.81 * spec.load_mass);
            let force = rt * w.out.force + weight;
            let torque = Vector3::from(spec.load_com).cross(&weight);
            let ft = outputs[3].as_mut_slice();
            for k in 0..3 {
                ft[k] = force[k] + spec.bias[k] + spec.noise[0] * w.noise.normal();
                ft[k + 3] = torque[k] + spec.bias[k + 3] + spec.noise[1] * w.noise.normal();
            }
            outputs[4] = Value::Boolean(w.out.enable);
            outputs[5] = Value::Boolean(w.out.button);
            outputs[6] = Value::Integer(w.out.segment as i64);
        }
        if let Some(plant) = &self.elastic {
            outputs[3].as_mut_slice().copy_from_slice(&plant.q);
            outputs[4].as_mut_slice().copy_from_slice(&plant.qd);
        }
        Step::Continue
    }

    fn actuate(&mut self, _tick: u64, commands: Option<Commands>) -> Step {
        // A payload picked up (published at runtime) weighs on the arm from this tick on.
        self.robot.live.refresh(&mut self.model, &mut self.seen);
        // Between assemblies the simulated plant's time stands still, as virtual time does:
        // how long the engine idles (not at all on the virtual clock, some ms on the wall
        // clock) must not change what the next assembly sees, or the two clocks would
        // disagree. (A real robot holds under its drives' control meanwhile.)
        if commands.is_none() {
            return Step::Continue;
        }
        self.stopping = false;
        self.servo(commands)
    }

    /// Quick stop: the reference decelerates from the measured velocity at each joint's
    /// acceleration limit, and holds where it stopped. Braking by holding the position of the
    /// moment of the fault instead would slam the drives into their torque limits.
    fn stop(&mut self, _tick: u64) -> Step {
        self.robot.live.refresh(&mut self.model, &mut self.seen);
        if !self.stopping {
            self.stopping = true;
            self.hold.copy_from_slice(&self.q);
            self.stop_velocity.copy_from_slice(&self.qd);
        }
        let dt = self.period;
        for (i, joint) in self.robot.joints.iter().enumerate() {
            let v = self.stop_velocity[i];
            let dv = (joint.limits.acceleration * dt).min(v.abs());
            let v_next = v - dv * v.signum();
            self.hold[i] += 0.5 * (v + v_next) * dt;
            self.stop_velocity[i] = v_next;
        }
        let mut commands = std::mem::take(&mut self.stop_commands);
        commands[0].as_mut_slice().copy_from_slice(&self.hold);
        commands[1].as_mut_slice().copy_from_slice(&self.stop_velocity);
        let step = self.servo(Some(Commands::new(&commands, &[true, true, false])));
        self.stop_commands = commands;
        step
    }

    fn check_takeover(&self, commands: Commands) -> Result<(), (usize, String)> {
        let Some(next) = commands.get(0).map(Value::as_slice) else { return Ok(()) };
        if self.references_seen == 0 {
            return Ok(());
        }
        let before = (self.references_seen > 1).then_some(&self.references[1][..]);
        match self.robot.command_past_limits(self.period, before, &self.references[0], next) {
            Some((_, what)) => Err((0, what)),
            None => Ok(()),
        }
    }

    fn is_still(&self) -> bool {
        // Still: the braking reference has stopped, every joint has been slower than its own
        // standstill speed for the last few cycles, and the arm has settled on the reference.
        self.stop_velocity.iter().all(|v| *v == 0.0) && self.standstill.is_still() && self.q.iter().zip(&self.hold).all(|(q, h)| (q - h).abs() < 1e-3)
    }
}

impl SimulatedRobot {
    /// The integration steps per base period of an elastic arm (None: rigid, one ABA per period).
    pub fn elastic_substeps(&self) -> Option<u32> {
        self.elastic.as_ref().map(|p| p.substeps)
    }

    /// One servo cycle of every drive and one step of the arm's dynamics.
    fn servo(&mut self, commands: Option<Commands>) -> Step {
        let q_cmd = commands.and_then(|c| c.get(0)).map(Value::as_slice);
        let qd_ff = commands.and_then(|c| c.get(1)).map(Value::as_slice);
        let tau_ff = commands.and_then(|c| c.get(2)).map(Value::as_slice);
        match q_cmd {
            Some(_) => self.holding = false,
            None if !self.holding => {
                self.holding = true;
                self.hold.copy_from_slice(&self.q);
            }
            None => {}
        }
        // Bumpless transfer: a torque feed-forward is taken to carry gravity (RNEA's does), so
        // when one starts the integrator hands over the gravity torque it held, and takes it
        // back when the feed-forward stops; otherwise gravity would be applied twice (or not
        // at all) until the integrator unwound.
        if tau_ff.is_some() != self.ff_driven {
            self.ff_driven = tau_ff.is_some();
            let sign = if self.ff_driven { -1.0 } else { 1.0 };
            let g = morc_model::gravity(&self.model, &mut self.data, &self.q);
            for (i, gi) in self.integral.iter_mut().zip(g.iter()) {
                *i += sign * gi;
            }
        }
        let dt = self.period;
        for i in 0..self.q.len() {
            let target = q_cmd.map_or(self.hold[i], |c| c[i]);
            let v_ff = qd_ff.map_or(0.0, |v| v[i]);
            let t_ff = tau_ff.map_or(0.0, |t| t[i]);
            if !(target.is_finite() && v_ff.is_finite() && t_ff.is_finite()) {
                // Quick stop: hold where it is; the fault names the joint.
                self.hold.copy_from_slice(&self.q);
                self.holding = true;
                return Step::Fault(format!("{}: non-finite command on joint {}: holding", self.robot.name, self.robot.joints[i].name));
            }
            self.references[1][i] = self.references[0][i];
            self.references[0][i] = target;
            let limit = self.robot.joints[i].limits.torque;
            let v_ref = self.kp * (target - self.q[i]) + v_ff;
            let v_error = v_ref - self.qd[i];
            let p_term = self.kv[i] * v_error;
            // Conditional integration (anti-windup): the integrator stops while the output saturates.
            let candidate = self.integral[i] + self.kv[i] * self.ki * v_error * dt;
            let unsaturated = p_term + candidate + t_ff;
            if unsaturated.abs() <= limit {
                self.integral[i] = candidate;
            }
            self.tau[i] = (p_term + self.integral[i] + t_ff).clamp(-limit, limit);
        }
        self.references_seen = self.references_seen.saturating_add(1).min(2);
        if let Some(plant) = &mut self.elastic {
            if let Err(e) = plant.step(&self.model, &mut self.data, &mut self.q, &mut self.qd, &self.tau) {
                self.qd.fill(0.0);
                self.stop_velocity.fill(0.0);
                self.hold.copy_from_slice(&self.q);
                self.holding = true;
                return Step::Fault(format!("{}: {e}: holding", self.robot.name));
            }
            self.standstill.observe(self.qd.iter().copied());
            return Step::Continue;
        }
        let friction = morc_model::friction(&self.model, &mut self.data, &self.qd);
        for ((net, tau), f) in self.tau_net.iter_mut().zip(&self.tau).zip(friction.iter()) {
            *net = tau - f;
        }
        let qdd = match &mut self.wrist {
            None => morc_model::aba(&self.model, &mut self.data, &self.q, &self.qd, &self.tau_net),
            Some(w) => {
                // A new script starts from now.
                if self.robot.hand.refresh(&mut w.script, &mut w.seen) {
                    (w.hand, w.t) = (HandState::default(), 0.0);
                }
                // The hand acts at the sensor's origin: its force enters the joints as Jᵀ·F.
                morc_model::compute_frame_jacobian(&self.model, &mut self.data, &self.q, w.sensor.frame);
                let origin = {
                    let f = &self.model.frames()[w.sensor.frame];
                    self.data.joint_placements[f.parent_joint].act_point(&f.placement.translation)
                };
                let linear = self.data.jacobian.fixed_rows::<3>(0);
                let velocity = linear * nalgebra::DVectorView::from_slice(&self.qd, self.qd.len());
                w.out = w.hand.step(&w.script, w.t, &origin, &Vector3::new(velocity[0], velocity[1], velocity[2]));
                w.t += dt;
                for (i, total) in w.tau_total.iter_mut().enumerate() {
                    *total = self.tau_net[i] + self.data.jacobian.fixed_rows::<3>(0).column(i).dot(&w.out.force);
                }
                morc_model::aba(&self.model, &mut self.data, &self.q, &self.qd, &w.tau_total)
            }
        };
        // A state that stops being finite would be reported as measurements and "ok": the
        // plant stops where it last was sound and the run faults, naming the joint.
        if let Some(i) = qdd.iter().position(|a| !a.is_finite()) {
            self.qd.fill(0.0);
            self.stop_velocity.fill(0.0);
            self.hold.copy_from_slice(&self.q);
            self.holding = true;
            // Off the normal path: say why when the model can tell (it names the link).
            let why = self.model.check_mass_matrix().err().map_or_else(|| "the arm's model or its commands drove it beyond numbers".to_string(), |e| e.to_string());
            return Step::Fault(format!("{}: the simulated arm's acceleration of joint {} is {}: {why}: holding", self.robot.name, self.robot.joints[i].name, qdd[i]));
        }
        for i in 0..self.q.len() {
            self.qd[i] += qdd[i] * dt;
            self.q[i] += self.qd[i] * dt;
        }
        self.standstill.observe(self.qd.iter().copied());
        Step::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JointDrive, Limits, RobotJoint};
    use morc_kernel::StepContext;

    /// The UR5 with viscous and Coulomb friction on every drive.
    fn damped_ur5() -> Arc<Robot> {
        let mut model = morc_model::load_urdf(concat!(env!("CARGO_MANIFEST_DIR"), "/../../robots/ur5/ur5_robot.urdf")).unwrap();
        for j in 1..model.njoints() {
            model
                .set_drive_train(j, morc_model::DriveTrain { armature: 0.2, viscous_friction: 3.0 * j as f64, coulomb_friction: 2.0, ..Default::default() })
                .unwrap();
        }
        let joints = (0..model.nv())
            .map(|i| RobotJoint {
                name: model.joint_names()[i + 1].clone(),
                drive: JointDrive { slave: i as u32 + 1, gear: 101.0, counts: Some(524288.0), offset: 0.0, direction: 1.0, ..Default::default() },
                limits: Limits { lower: -6.0, upper: 6.0, velocity: 3.0, acceleration: 8.0, torque: 150.0 },
            })
            .collect();
        Arc::new(Robot::new("damped UR5", model, joints, "tests").unwrap())
    }

    const Q0: [f64; 6] = [0.0, -1.2, 1.4, -0.5, 0.3, 0.0];
    const QD0: [f64; 6] = [0.5, -0.3, 0.2, 0.0, 0.4, -0.6];

    /// ABA is rigid-body only, so the plant subtracts the drives' friction itself: one step
    /// moves the arm as `aba(q, q̇, tau − friction(q̇))`, not `aba(q, q̇, tau)`.
    #[test]
    fn the_drives_friction_brakes_the_simulated_arm() {
        let robot = damped_ur5();
        let mut plant = SimulatedRobot::new(robot.clone(), &Q0, 1e-3).unwrap();
        plant.qd.copy_from_slice(&QD0);
        assert_eq!(plant.servo(None), Step::Continue);
        let mut data = Data::new(&robot.model);
        let friction = morc_model::friction(&robot.model, &mut data, &QD0).clone();
        assert!(friction.amax() > 1.0, "{friction}");
        let net: Vec<f64> = plant.tau.iter().zip(friction.iter()).map(|(t, f)| t - f).collect();
        let qdd = morc_model::aba(&robot.model, &mut data, &Q0, &QD0, &net).clone();
        for i in 0..6 {
            assert_eq!(plant.qd[i], QD0[i] + qdd[i] * 1e-3, "joint {}", i + 1);
        }
    }

    /// The `rnea` feed-forward is the rigid-body torque plus the drives' friction, which the
    /// plant has: what the motion needs at the drives.
    #[test]
    fn the_rnea_feed_forward_adds_the_drives_friction() {
        let robot = damped_ur5();
        let mut ff = (crate::components::factory(&robot, "rnea").unwrap())().unwrap();
        let qdd = [1.0, -0.5, 0.3, 2.0, -1.0, 0.7];
        let inputs = [Value::Vector(Q0.to_vec()), Value::Vector(QD0.to_vec()), Value::Vector(qdd.to_vec())];
        let mut outputs = [Value::Vector(vec![0.0; 6])];
        assert_eq!(ff.step(&StepContext { step: 0, time: 0.0, period: 1e-3 }, &inputs, &mut outputs), Step::Continue);
        let mut data = Data::new(&robot.model);
        let expected = morc_model::rnea(&robot.model, &mut data, &Q0, &QD0, &qdd).clone() + morc_model::friction(&robot.model, &mut data, &QD0);
        assert_eq!(outputs[0].as_slice(), expected.as_slice());
    }
}

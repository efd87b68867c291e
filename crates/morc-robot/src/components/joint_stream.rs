//! Following a stream of joint positions (kind `joint_stream`): what another controller sends
//! sample by sample — ros2_control through `topic_based_ros2_control` (`/robot_joint_commands`),
//! a teleoperation master, a planner on the network. The stream is the robot's target, never its
//! command: the reference starts where the robot is and holds until the first sample comes;
//! from each sample to the next it moves along a straight line over the time the samples came
//! apart (a sample period's delay, no overshoot, no staircase at a slower sender's rate), and it
//! follows that line within the joints' velocity and acceleration limits. A sample outside a
//! joint's position limits, or farther from the reference than `max_jump` (a sender that starts
//! from zeros, a wrong joint order), faults naming the joint before the robot moves towards it.
//! Nothing here allocates after `initialize`.

use std::sync::Arc;

use crate::{Robot, RobotKinematics};
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_motion::Kinematics;

use super::kind_doc;

/// The follower's time constant near the target, in base periods: the feedback gain 1/τ.
const TIME_CONSTANT_PERIODS: f64 = 4.0;
/// A reference slower than this (rad/s; m/s) stands: an idle stream may finish.
const STANDING: f64 = 1e-6;
/// The longest a sample's line is stretched over (s): a sender that paused does not make the
/// next sample crawl.
const MAX_SPAN: f64 = 0.1;

/// The joint stream component.
pub struct JointStream {
    info: ComponentInfo,
    robot: Arc<Robot>,
    kinematics: RobotKinematics,
    /// The straight line the reference target runs along: from, to, and its length in steps.
    from: Vec<f64>,
    to: Vec<f64>,
    span_steps: u64,
    /// Steps since the last sample came (None: no sample yet).
    since_sample: Option<u64>,
    /// The reference: position and velocity.
    q: Vec<f64>,
    qd: Vec<f64>,
    /// The largest distance a sample may be from the reference (rad; m for prismatic joints).
    max_jump: f64,
    max_jump_prismatic: f64,
    /// Steps without a sample after which the stream is over (None: never).
    idle_steps: Option<u64>,
    samples: u64,
}

impl JointStream {
    /// A `joint_stream` component of `robot`.
    pub fn new(robot: Arc<Robot>) -> Self {
        let info = ComponentInfo::new("joint_stream", kind_doc("joint_stream"))
            .input(robot.joint_port("start", "rad", "m").doc("where the robot is at the first step: the reference starts there (connect robot.q)").required())
            .input(robot.joint_port("target", "rad", "m").doc("the stream's last sample (connect a ros.subscribe's position)"))
            .input(
                PortInfo::new("age", ValueType::Integer).doc("steps since the sample came: 0 when a new one came this step (connect the ros.subscribe's age); unconnected: every step is a new sample"),
            )
            .output(robot.joint_port("q", "rad", "m").doc("reference position"))
            .output(robot.joint_port("qd", "rad/s", "m/s").doc("reference velocity"))
            .output(robot.joint_port("qdd", "rad/s²", "m/s²").doc("reference acceleration"))
            .output(PortInfo::new("done", ValueType::Boolean).doc("always false: a stream ends when its run does"))
            .output(PortInfo::position("tcp").doc("tool position of the reference (world frame)"))
            .param(
                ParamInfo::new("max_jump", Value::Real(5.0))
                    .unit("°")
                    .doc("the farthest a sample may be from the reference (mm for prismatic joints); farther faults, naming the joint"),
            )
            .param(
                ParamInfo::new("idle", Value::Real(0.0))
                    .unit("s")
                    .doc("finish once no sample came for this long and the reference stands (0: never; the run ends otherwise)"),
            );
        let n = robot.dof();
        JointStream {
            info,
            kinematics: RobotKinematics::new(robot.clone()),
            robot,
            from: vec![0.0; n],
            to: vec![0.0; n],
            span_steps: 1,
            since_sample: None,
            q: vec![0.0; n],
            qd: vec![0.0; n],
            max_jump: 0.0,
            max_jump_prismatic: 0.0,
            idle_steps: None,
            samples: 0,
        }
    }

    /// Where the line puts the target `k` steps after its sample, joint `j`.
    fn target(&self, j: usize, k: u64) -> f64 {
        let s = (k as f64 / self.span_steps as f64).min(1.0);
        self.from[j] + (self.to[j] - self.from[j]) * s
    }

    /// Why a sample cannot be followed, or None: a joint outside its limits or too far.
    fn refuse(&self, sample: &[f64]) -> Option<String> {
        for (j, &x) in sample.iter().enumerate() {
            let joint = &self.robot.joints[j];
            let show = |v: f64| self.robot.show(j, v, 2);
            if !x.is_finite() {
                return Some(format!("joint_stream: the sample for joint {} is {x}: the sender sends no number", joint.name));
            }
            if x < joint.limits.lower || x > joint.limits.upper {
                return Some(format!(
                    "joint_stream: the sample puts joint {} at {}, outside its limits [{}, {}]: the robot stops",
                    joint.name,
                    show(x),
                    show(joint.limits.lower),
                    show(joint.limits.upper)
                ));
            }
            let limit = if self.robot.is_prismatic(j) { self.max_jump_prismatic } else { self.max_jump };
            if (x - self.q[j]).abs() > limit {
                return Some(format!(
                    "joint_stream: the sample puts joint {} at {}, {} from the robot's reference {} (max_jump {}): the robot stops; \
a sender must start from where the robot is (in topic_based_ros2_control, use_initial_states_as_initial_commands = true) and send its joints by name",
                    joint.name,
                    show(x),
                    show((x - self.q[j]).abs()),
                    show(self.q[j]),
                    show(limit)
                ));
            }
        }
        None
    }
}

impl Component for JointStream {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        let max_jump = self.info.real("max_jump");
        if !(max_jump > 0.0 && max_jump.is_finite()) {
            return Err(format!("max_jump = {max_jump}: give the farthest a sample may be from the reference, more than 0 (° or mm)"));
        }
        self.max_jump = max_jump.to_radians();
        self.max_jump_prismatic = max_jump * 1e-3;
        let idle = self.info.real("idle");
        if !(idle >= 0.0 && idle.is_finite()) {
            return Err(format!("idle = {idle}: give the seconds without a sample after which the stream is over, 0 or more (0: never)"));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        let idle = self.info.real("idle");
        self.idle_steps = (idle > 0.0).then(|| (idle / ctx.period).round().max(1.0) as u64);
        self.since_sample = None;
        self.samples = 0;
        Ok(())
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let [start, target, age] = inputs else { unreachable!("three inputs") };
        if ctx.step == 0 {
            self.q.copy_from_slice(start.as_slice());
            self.qd.fill(0.0);
        }
        let period = ctx.period;
        if age.integer() == 0 {
            let sample = target.as_slice();
            if let Some(why) = self.refuse(sample) {
                return Step::Fault(why);
            }
            // The new line starts where the old one has the target now, and runs over the time
            // since the last sample: a steady stream is followed a sample period late, exactly.
            let span = match self.since_sample {
                Some(k) => k.clamp(1, (MAX_SPAN / period).round().max(1.0) as u64),
                None => 1,
            };
            for j in 0..self.q.len() {
                self.from[j] = match self.since_sample {
                    Some(k) => self.target(j, k),
                    None => self.q[j],
                };
            }
            self.to.copy_from_slice(sample);
            self.span_steps = span;
            self.since_sample = Some(0);
            self.samples += 1;
        }
        let [q_out, qd_out, qdd_out, done, tcp] = outputs else { unreachable!("five outputs") };
        let (q_out, qd_out, qdd_out) = (q_out.as_mut_slice(), qd_out.as_mut_slice(), qdd_out.as_mut_slice());
        if let Some(k) = self.since_sample.as_mut() {
            *k = k.saturating_add(1);
            let k = *k;
            let tau = TIME_CONSTANT_PERIODS * period;
            for (j, qdd) in qdd_out.iter_mut().enumerate() {
                let limits = &self.robot.joints[j].limits;
                // The line's own velocity, fed forward, and a braking-distance law towards it:
                // linear near the target, never faster than the acceleration limit can stop.
                let line_velocity = if k <= self.span_steps { (self.to[j] - self.from[j]) / (self.span_steps as f64 * period) } else { 0.0 };
                let error = self.target(j, k) - self.q[j];
                // The braking speed in discrete time: a step at it, then braking at the limit every
                // step, stops on the target (the continuous √(2a|e|) overshoots by a step's worth).
                let a = limits.acceleration;
                let braking = a * (-period / 2.0 + (period * period / 4.0 + 2.0 * error.abs() / a).sqrt());
                let feedback = error.signum() * (error.abs() / tau).min(braking);
                let wanted = (line_velocity + feedback).clamp(-limits.velocity, limits.velocity);
                let dv = (wanted - self.qd[j]).clamp(-limits.acceleration * period, limits.acceleration * period);
                *qdd = dv / period;
                self.qd[j] += dv;
                self.q[j] += self.qd[j] * period;
            }
        } else {
            qdd_out.fill(0.0);
        }
        q_out.copy_from_slice(&self.q);
        qd_out.copy_from_slice(&self.qd);
        *done = Value::Boolean(false);
        tcp.as_mut_slice().copy_from_slice(self.kinematics.tool_pose(&self.q).translation.as_slice());
        // The sender stopped (a ros2_control system shut down): once the reference stands at its
        // last sample, the stream is over and the robot holds there.
        if let (Some(idle), Some(k)) = (self.idle_steps, self.since_sample) {
            if k >= idle && self.qd.iter().all(|v| v.abs() < STANDING) {
                return Step::Finish(format!("joint_stream: no sample for {:.3} s, the stream is over: the robot holds at its last", k as f64 * period));
            }
        }
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        results.set("samples", Value::Integer(self.samples as i64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{JointDrive, Limits, RobotJoint};

    /// The UR5 of the repository's URDF, ±6 rad, 3 rad/s, 8 rad/s² on every joint.
    fn robot() -> Arc<Robot> {
        let model = morc_model::load_urdf(concat!(env!("CARGO_MANIFEST_DIR"), "/../../robots/ur5/ur5_robot.urdf")).unwrap();
        let joints = (0..model.nv())
            .map(|i| RobotJoint {
                name: model.joint_names()[i + 1].clone(),
                drive: JointDrive { slave: i as u32 + 1, gear: 101.0, counts: Some(524288.0), offset: 0.0, direction: 1.0, ..Default::default() },
                limits: Limits { lower: -6.0, upper: 6.0, velocity: 3.0, acceleration: 8.0, torque: 150.0 },
            })
            .collect();
        Arc::new(Robot::new("UR5", model, joints, "tests").unwrap())
    }

    /// Steps `c` from `start` through `samples` (Some: a new sample that step); returns q per step.
    fn follow(c: &mut JointStream, start: &[f64], samples: &[Option<Vec<f64>>]) -> Result<Vec<Vec<f64>>, String> {
        let n = start.len();
        let data = AssemblyData::new();
        let thread = StepThread::default();
        let ctx = InitContext { name: "s", period: 1e-3, base_period: 1e-3, data: &data, thread: &thread, base_latency: 0 };
        c.configure()?;
        let mut outputs: Vec<Value> = c.info().outputs.iter().map(PortInfo::initial_value).collect();
        c.initialize(&ctx, &mut outputs)?;
        let mut target = Value::Vector(vec![0.0; n]);
        let mut qs = Vec::new();
        for (k, s) in samples.iter().enumerate() {
            let age = match s {
                Some(x) => {
                    target = Value::Vector(x.clone());
                    0
                }
                None => 1,
            };
            let inputs = [Value::Vector(start.to_vec()), target.clone(), Value::Integer(age)];
            match c.step(&StepContext { step: k as u64, time: k as f64 * 1e-3, period: 1e-3 }, &inputs, &mut outputs) {
                Step::Fault(f) => return Err(f),
                Step::Finish(_) => {
                    qs.push(outputs[0].as_slice().to_vec());
                    break;
                }
                _ => qs.push(outputs[0].as_slice().to_vec()),
            }
        }
        Ok(qs)
    }

    #[test]
    fn holds_where_the_robot_is_until_the_first_sample() {
        let start = [0.1, -1.0, 1.0, 0.0, 0.5, 0.0];
        let qs = follow(&mut JointStream::new(robot()), &start, &vec![None; 50]).unwrap();
        assert!(qs.iter().all(|q| q == &start));
    }

    #[test]
    fn a_ramp_sent_at_100_hz_is_followed_a_sample_period_late_without_a_staircase() {
        let start = [0.0, -1.0, 1.0, 0.0, 0.5, 0.0];
        let speed = 0.5; // rad/s on joint 0, within the UR5's limits
        let samples: Vec<Option<Vec<f64>>> = (0..1000)
            .map(|k| {
                (k % 10 == 0).then(|| {
                    let mut x = start.to_vec();
                    x[0] += speed * k as f64 * 1e-3;
                    x
                })
            })
            .collect();
        let qs = follow(&mut JointStream::new(robot()), &start, &samples).unwrap();
        // In steady state the reference moves every step (no staircase), at the ramp's speed,
        // one sample period (10 ms) behind the sender.
        for k in 500..990 {
            let v = (qs[k + 1][0] - qs[k][0]) / 1e-3;
            assert!((v - speed).abs() < 1e-6, "step {k}: {v} rad/s");
            let behind = speed * (k as f64 * 1e-3) - (qs[k][0] - start[0]);
            assert!((behind - speed * 0.009).abs() < 1e-3 * speed + 1e-9, "step {k}: {behind} rad behind");
        }
    }

    #[test]
    fn a_step_is_taken_within_the_velocity_and_acceleration_limits() {
        let r = robot();
        let start = [0.0, -1.0, 1.0, 0.0, 0.5, 0.0];
        let mut goal = start.to_vec();
        goal[1] += 4f64.to_radians();
        let mut samples = vec![None; 2000];
        samples[0] = Some(goal.clone());
        let qs = follow(&mut JointStream::new(r.clone()), &start, &samples).unwrap();
        let limits = &r.joints[1].limits;
        for k in 1..qs.len() - 1 {
            let v = (qs[k][1] - qs[k - 1][1]) / 1e-3;
            let a = (qs[k + 1][1] - 2.0 * qs[k][1] + qs[k - 1][1]) / 1e-6;
            assert!(v.abs() <= limits.velocity * (1.0 + 1e-9), "step {k}: {v} rad/s");
            assert!(a.abs() <= limits.acceleration * (1.0 + 1e-6), "step {k}: {a} rad/s²");
        }
        let last = qs.last().unwrap();
        assert!((last[1] - goal[1]).abs() < 1e-9, "ends at {} not {}", last[1], goal[1]);
        let overshoot = qs.iter().map(|q| q[1] - goal[1]).fold(f64::MIN, f64::max);
        assert!(overshoot < 0.01f64.to_radians(), "overshoots by {overshoot} rad");
    }

    #[test]
    fn an_idle_stream_finishes_once_its_reference_stands() {
        let start = [0.0, -1.0, 1.0, 0.0, 0.5, 0.0];
        let mut goal = start.to_vec();
        goal[2] += 2f64.to_radians();
        let mut c = JointStream::new(robot());
        c.set_parameter("idle", &Value::Real(0.5)).unwrap();
        let mut samples = vec![None; 3000];
        samples[0] = Some(goal.clone());
        let steps = follow(&mut c, &start, &samples).unwrap();
        assert!(steps.len() >= 500 && steps.len() < 3000, "finished after {} steps", steps.len());
        assert!((steps.last().unwrap()[2] - goal[2]).abs() < 1e-6, "holds at the last sample");
        // Without a sample at all it never finishes: the robot holds where it is.
        let mut c = JointStream::new(robot());
        c.set_parameter("idle", &Value::Real(0.5)).unwrap();
        assert_eq!(follow(&mut c, &start, &vec![None; 2000]).unwrap().len(), 2000);
    }

    #[test]
    fn a_sample_far_from_the_robot_or_outside_the_limits_faults_naming_the_joint() {
        let r = robot();
        let start = [0.0, -1.0, 1.0, 0.0, 0.5, 0.0];
        let zeros = vec![Some(vec![0.0; 6])];
        let e = follow(&mut JointStream::new(r.clone()), &start, &zeros).unwrap_err();
        assert!(e.contains(&format!("joint {}", r.joints[1].name)) && e.contains("max_jump") && e.contains("use_initial_states_as_initial_commands"), "{e}");
        let mut outside = start.to_vec();
        outside[0] = r.joints[0].limits.upper + 0.01;
        let mut c = JointStream::new(r.clone());
        c.set_parameter("max_jump", &Value::Real(1000.0)).unwrap();
        let e = follow(&mut c, &start, &[Some(outside)]).unwrap_err();
        assert!(e.contains(&format!("joint {}", r.joints[0].name)) && e.contains("outside its limits"), "{e}");
    }
}

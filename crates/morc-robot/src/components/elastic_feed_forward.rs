//! `elastic_feed_forward`: the feed-forward of an arm with elastic gears — from the links'
//! reference, the motors' positions, velocities and torques that make the links follow it
//! ([`morc_model::ElasticInverse`], the flatness-based inverse of Spong's model). It needs the
//! reference smooth to its 4th derivative: the jerk and snap are differences of the reference's
//! acceleration from step to step, so feed it a Bessel-filtered trajectory (`filter` of ptp and
//! the other motion kinds). On a rigid joint it is the rigid-body feed-forward (`rnea`).

use std::sync::Arc;

use crate::Robot;
use morc_kernel::Value;
use morc_kernel::*;
use morc_model::{Data, ElasticInverse};

use super::kind_doc;

/// The elastic feed-forward component.
pub struct ElasticFeedForward {
    info: ComponentInfo,
    robot: Arc<Robot>,
    data: Data,
    inverse: ElasticInverse,
    model: Arc<morc_model::Model>,
    seen: u64,
    /// The reference's acceleration and jerk at the last step, and its jerk and snap now.
    last_qdd: Vec<f64>,
    last_jerk: Vec<f64>,
    jerk: Vec<f64>,
    snap: Vec<f64>,
}

impl ElasticFeedForward {
    /// The `elastic_feed_forward` component of `robot`; reads the robot's live model, so payload changes apply.
    pub fn new(robot: Arc<Robot>) -> Self {
        let info = ComponentInfo::new("elastic_feed_forward", kind_doc("elastic_feed_forward"))
            .input(robot.joint_port("q", "rad", "m").doc("the links' reference position").required())
            .input(robot.joint_port("qd", "rad/s", "m/s").doc("its velocity").required())
            .input(robot.joint_port("qdd", "rad/s²", "m/s²").doc("its acceleration (smooth: Bessel-filtered)").required())
            .output(robot.joint_port("q", "rad", "m").doc("the motors' position: the drives' command (connect robot.q_cmd)"))
            .output(robot.joint_port("qd", "rad/s", "m/s").doc("the motors' velocity (connect robot.qd_ff)"))
            .output(robot.joint_port("tau", "N·m", "N").doc("the motors' torque: inertia, friction and the springs' (connect robot.tau_ff)"));
        let n = robot.dof();
        ElasticFeedForward {
            info,
            data: Data::new(&robot.model),
            inverse: ElasticInverse::new(&robot.model),
            model: robot.live.current(),
            seen: 0,
            robot,
            last_qdd: vec![0.0; n],
            last_jerk: vec![0.0; n],
            jerk: vec![0.0; n],
            snap: vec![0.0; n],
        }
    }
}

impl Component for ElasticFeedForward {
    morc_kernel::component_info!(info);

    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }

    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        self.robot.live.refresh(&mut self.model, &mut self.seen);
        let (q, qd, qdd) = (inputs[0].as_slice(), inputs[1].as_slice(), inputs[2].as_slice());
        for (i, &a) in qdd.iter().enumerate() {
            // At the first step the reference is taken to have been at rest (or as steady) before.
            let (jerk, snap) = if ctx.step == 0 {
                (0.0, 0.0)
            } else {
                let jerk = (a - self.last_qdd[i]) / ctx.period;
                (jerk, (jerk - self.last_jerk[i]) / ctx.period)
            };
            self.jerk[i] = jerk;
            self.snap[i] = snap;
            self.last_qdd[i] = a;
            self.last_jerk[i] = jerk;
        }
        self.inverse.compute(&self.model, &mut self.data, q, qd, qdd, &self.jerk, &self.snap);
        let [theta, theta_d, tau] = outputs else { unreachable!("three outputs") };
        theta.as_mut_slice().copy_from_slice(self.inverse.theta.as_slice());
        theta_d.as_mut_slice().copy_from_slice(self.inverse.theta_d.as_slice());
        tau.as_mut_slice().copy_from_slice(self.inverse.tau.as_slice());
        Step::Continue
    }
}

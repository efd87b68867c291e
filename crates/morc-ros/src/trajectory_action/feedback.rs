//! The feedback of a FollowJointTrajectory goal that runs: a tap on the run copies the
//! trajectory's reference (`traj.q`, `traj.qd`, `traj.qdd`) and the robot's measurement (the
//! base's q and qd) into a preallocated ring at [`FEEDBACK_RATE`]; the bridge sends each row as a
//! `FollowJointTrajectory` feedback message.

use std::sync::Arc;

use morc_kernel::*;
use morc_record::ring::{ring, RingProducer};

use super::ExecutingGoal;

/// Feedback messages per second (joint_trajectory_controller sends one per controller update,
/// 100 Hz and more; MoveIt reads none of them, so a viewer's rate is enough).
pub const FEEDBACK_RATE: f64 = 20.0;

/// The tap's name in an assembly.
pub const TAP_NAME: &str = "ros_feedback";

/// The attachment that puts a feedback tap for `goal` on the run; a run without a `traj`
/// reference (a probe, say) gets a tap that sends nothing.
pub fn attachment(goal: Arc<ExecutingGoal>) -> Attach {
    Arc::new(move |view| {
        let base = &view.base_name;
        let wanted = ["traj.q".to_string(), "traj.qd".into(), "traj.qdd".into(), format!("{base}.q"), format!("{base}.qd")];
        let mut widths = Vec::new();
        for name in &wanted {
            match view.signals.iter().find(|s| &s.name == name).map(|s| s.ty) {
                Some(ValueType::Vector(n)) => widths.push(n),
                _ => return Ok(Attachment { component: Box::new(FeedbackTap::new(goal.clone(), 0, &[], 1)), every: 1, inputs: Vec::new() }),
            }
        }
        let n = widths[0];
        if widths.iter().any(|w| *w != n) {
            return Err(format!("FollowJointTrajectory feedback: the reference and the robot's state differ in size ({widths:?})"));
        }
        let inputs: Vec<(String, String)> = wanted.iter().map(|s| (s.clone(), s.replace('.', "/"))).collect();
        let decimation = ((1.0 / (FEEDBACK_RATE * view.base_period)).round() as u64).max(1);
        Ok(Attachment { component: Box::new(FeedbackTap::new(goal.clone(), n, &inputs, decimation)), every: 1, inputs })
    })
}

/// The component on the real-time path: run time and its inputs into the ring every
/// `decimation` steps.
pub struct FeedbackTap {
    info: ComponentInfo,
    goal: Arc<ExecutingGoal>,
    /// Run time, then each input.
    row: Vec<f64>,
    decimation: u64,
    producer: Option<RingProducer>,
}

impl FeedbackTap {
    fn new(goal: Arc<ExecutingGoal>, n: usize, inputs: &[(String, String)], decimation: u64) -> FeedbackTap {
        let mut info = ComponentInfo::new(TAP_NAME, "sends the running FollowJointTrajectory goal's feedback (reference and measurement) on ROS 2, off the real-time path");
        for (_, port) in inputs {
            info = info.input(PortInfo::new(port, ValueType::Vector(n)).required());
        }
        FeedbackTap { info, goal, row: vec![0.0; 1 + inputs.len() * n], decimation, producer: None }
    }
}

impl Component for FeedbackTap {
    morc_kernel::component_info!(info);

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        if self.row.len() == 1 {
            return Ok(());
        }
        // Four seconds of rows: the bridge looks every half millisecond.
        let rows = ((4.0 / (ctx.period * self.decimation as f64)).ceil() as usize).max(64);
        let (producer, consumer) = ring(rows, self.row.len());
        self.goal.set_feedback(consumer, crate::run_epoch());
        self.producer = Some(producer);
        Ok(())
    }

    /// Real-time path: copies the inputs into the preallocated row and pushes it; never blocks
    /// or allocates.
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], _outputs: &mut [Value]) -> Step {
        let Some(producer) = self.producer.as_mut() else { return Step::Continue };
        if !ctx.step.is_multiple_of(self.decimation) {
            return Step::Continue;
        }
        self.row[0] = ctx.time;
        let mut at = 1;
        for v in inputs {
            let x = v.as_slice();
            self.row[at..at + x.len()].copy_from_slice(x);
            at += x.len();
        }
        producer.push_row(&self.row);
        Step::Continue
    }
}

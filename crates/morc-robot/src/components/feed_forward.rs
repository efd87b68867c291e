//! `rnea`: rigid-body feed-forward (computed torque) τ = RNEA(q, q̇, q̈) + friction(q̇) of the
//! robot's model. RNEA is Pinocchio's, rigid-body only (armature included); the drives'
//! friction (viscous·q̇ + Coulomb·sign(q̇) of the model's drive trains) is added explicitly, so
//! the feed-forward compensates what the drives lose as well as what the arm needs.

use std::sync::Arc;

use crate::Robot;
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_model::Data;

use super::kind_doc;

/// Rigid-body feed-forward: the torque the model says the reference motion needs.
pub struct RigidBodyFeedForward {
    info: ComponentInfo,
    robot: Arc<Robot>,
    data: Data,
    model: Arc<morc_model::Model>,
    seen: u64,
}

impl RigidBodyFeedForward {
    /// The `rnea` component of `robot`; reads the robot's live model, so payload changes apply.
    pub fn new(robot: Arc<Robot>) -> Self {
        let ty = ValueType::Vector(robot.dof());
        let info = ComponentInfo::new("rnea", kind_doc("rnea"))
            .input(PortInfo::new("q", ty).unit("rad").required())
            .input(PortInfo::new("qd", ty).unit("rad/s").required())
            .input(PortInfo::new("qdd", ty).unit("rad/s²").required())
            .output(PortInfo::new("tau", ty).unit("N·m").doc("feed-forward torque: rigid-body (RNEA) plus the drives' friction"));
        RigidBodyFeedForward { info, data: Data::new(&robot.model), model: robot.live.current(), seen: 0, robot }
    }
}

impl Component for RigidBodyFeedForward {
    morc_kernel::component_info!(info);
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        // A payload changed at runtime takes effect here at the next step.
        self.robot.live.refresh(&mut self.model, &mut self.seen);
        let (q, qd, qdd) = (inputs[0].as_slice(), inputs[1].as_slice(), inputs[2].as_slice());
        morc_model::rnea(&self.model, &mut self.data, q, qd, qdd);
        morc_model::friction(&self.model, &mut self.data, qd);
        for ((out, rigid), friction) in outputs[0].as_mut_slice().iter_mut().zip(self.data.tau.iter()).zip(self.data.friction.iter()) {
            *out = rigid + friction;
        }
        Step::Continue
    }
}

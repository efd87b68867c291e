//! `elastic_links`: where the links of an elastic arm at rest are, from its motors' positions
//! (what the drives measure): each elastic gear deflected by its spring's share of gravity,
//! q = θ − g(q)/K ([`morc_model::links_at_rest`]). A motion planned in the links' space starts
//! there (connect its `q` to a trajectory's `start`), so the elastic feed-forward's first motor
//! command is where the motors are. Exact at rest; it knows nothing of motion. Rigid joints pass
//! through.

use std::sync::Arc;

use crate::Robot;
use morc_kernel::Value;
use morc_kernel::*;
use morc_model::Data;

use super::kind_doc;

/// The elastic links' estimate.
pub struct ElasticLinks {
    info: ComponentInfo,
    robot: Arc<Robot>,
    data: Data,
    model: Arc<morc_model::Model>,
    seen: u64,
}

impl ElasticLinks {
    /// The `elastic_links` component of `robot`; reads the robot's live model, so payload changes apply.
    pub fn new(robot: Arc<Robot>) -> Self {
        let info = ComponentInfo::new("elastic_links", kind_doc("elastic_links"))
            .input(robot.joint_port("theta", "rad", "m").doc("the motors' positions (connect robot.q)").required())
            .output(robot.joint_port("q", "rad", "m").doc("the links' positions at rest"));
        ElasticLinks { info, data: Data::new(&robot.model), model: robot.live.current(), seen: 0, robot }
    }
}

impl Component for ElasticLinks {
    morc_kernel::component_info!(info);

    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }

    fn step(&mut self, _: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        self.robot.live.refresh(&mut self.model, &mut self.seen);
        morc_model::links_at_rest(&self.model, &mut self.data, inputs[0].as_slice(), outputs[0].as_mut_slice());
        Step::Continue
    }
}

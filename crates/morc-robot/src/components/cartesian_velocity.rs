//! `cartesian_velocity`: a frame velocity law with a damped pseudo-inverse and a null-space term,
//!
//! `qd = J⁺(v_ref + K·e) + (I − J⁺J)·(−k_null·(q − q_rest))`, `J⁺ = Jᵀ(JJᵀ + λ²I)⁻¹`,
//!
//! J the LOCAL_WORLD_ALIGNED Jacobian of a frame (linear rows first), e the frame's pose error to
//! `x_ref`, K = k on the position rows and k_rot on the orientation rows. The Lua library
//! component `controllers.cartesian_velocity` (stdlib/controllers) is the same law written with
//! morc's Lua linear algebra; the pseudo-inverse here is computed as `A:pinv_to` computes it
//! (normal matrix, LU with partial pivoting, solve per column), so both agree to rounding.

use std::sync::Arc;

use nalgebra::{DMatrix, DVector};

use crate::Robot;
use morc_kernel::*;
use morc_kernel::{Value, ValueType};
use morc_model::{DampedPinv, Data, FrameIndex, ReferenceFrame};

use super::kind_doc;

/// The Cartesian velocity law of one robot: a joint velocity command for a frame's velocity and
/// pose reference, with a null-space pull towards a rest posture. Allocates nothing per step.
pub struct CartesianVelocity {
    info: ComponentInfo,
    robot: Arc<Robot>,
    data: Data,
    frame: FrameIndex,
    /// damping λ, k, k_rot, k_null.
    gains: [f64; 4],
    jacobian: DMatrix<f64>,
    pinv: DampedPinv,
    jp: DMatrix<f64>,
    e: DVector<f64>,
    w: DVector<f64>,
    jz: DVector<f64>,
    z: DVector<f64>,
    qd: DVector<f64>,
}

impl CartesianVelocity {
    /// The law for `robot`, on its tool frame until the parameter `frame` names another.
    pub fn new(robot: Arc<Robot>) -> Self {
        let n = robot.dof();
        let six = ValueType::Vector(6);
        let tool = robot.model.frames()[robot.tool_frame].name.clone();
        let info = ComponentInfo::new("cartesian_velocity", kind_doc("cartesian_velocity"))
            .param(ParamInfo::new("frame", Value::String(tool)).doc("the frame moved (a frame of the robot's model)"))
            .param(ParamInfo::new("damping", Value::Real(0.01)).doc("λ of the damped pseudo-inverse Jᵀ(JJᵀ + λ²I)⁻¹"))
            .param(ParamInfo::new("k", Value::Real(10.0)).unit("1/s").doc("gain on the position error"))
            .param(ParamInfo::new("k_rot", Value::Real(10.0)).unit("1/s").doc("gain on the orientation error"))
            .param(ParamInfo::new("k_null", Value::Real(1.0)).unit("1/s").doc("gain of the null-space pull towards q_rest"))
            .input(robot.joint_port("q", "rad", "m").required().doc("measured joint positions"))
            .input(PortInfo::pose("x_ref").required().doc("reference pose { x, y, z, roll, pitch, yaw }, rotation Rz(yaw)·Ry(pitch)·Rx(roll)"))
            .input(PortInfo::twist("v_ref").doc("reference frame velocity (linear, angular; world axes)"))
            .input(robot.joint_port("q_rest", "rad", "m").doc("rest posture the null-space term pulls towards"))
            .output(robot.joint_port("qd", "rad/s", "m/s").doc("joint velocity command"))
            .output(
                PortInfo::new("e", six)
                    .units(&["m", "m", "m", "rad", "rad", "rad"])
                    .elements(&["x", "y", "z", "rx", "ry", "rz"])
                    .doc("pose error: position, then ½ Σ r_k × r_ref,k"),
            );
        CartesianVelocity {
            info,
            data: Data::new(&robot.model),
            frame: robot.tool_frame,
            gains: [0.0; 4],
            jacobian: DMatrix::zeros(6, n),
            pinv: DampedPinv::new(6, n),
            jp: DMatrix::zeros(n, 6),
            e: DVector::zeros(6),
            w: DVector::zeros(6),
            jz: DVector::zeros(6),
            z: DVector::zeros(n),
            qd: DVector::zeros(n),
            robot,
        }
    }
}

impl Component for CartesianVelocity {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        let model = &self.robot.model;
        let name = match self.info.param_value("frame") {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        self.frame = model.frame_index(&name).ok_or_else(|| {
            let frames: Vec<&str> = model.frames().iter().map(|f| f.name.as_str()).collect();
            format!("frame '{name}': robot '{}' has no such frame; its frames: {}", self.robot.name, frames.join(", "))
        })?;
        self.gains = ["damping", "k", "k_rot", "k_null"].map(|p| self.info.real(p));
        for (name, x) in ["damping", "k", "k_rot", "k_null"].iter().zip(self.gains) {
            if !x.is_finite() {
                return Err(format!("parameter {name} must be finite, got {x}"));
            }
        }
        if self.gains[0] < 0.0 {
            return Err(format!("parameter damping must be ≥ 0, got {}", self.gains[0]));
        }
        Ok(())
    }

    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }

    fn step(&mut self, _: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        let model = &self.robot.model;
        let (q, x_ref, v_ref, q_rest) = (inputs[0].as_slice(), inputs[1].as_slice(), inputs[2].as_slice(), inputs[3].as_slice());
        let [damping, k, k_rot, k_null] = self.gains;
        morc_model::forward_kinematics_joints(model, &mut self.data, q);
        let placement = morc_model::frame_placement(model, &self.data, self.frame);
        self.jacobian.copy_from(morc_model::frame_jacobian_in(model, &mut self.data, self.frame, ReferenceFrame::LocalWorldAligned));
        if self.pinv.compute(&self.jacobian, &mut self.jp, damping).is_err() {
            return Step::Fault("the Jacobian is rank deficient (J Jᵀ is singular): give a damping > 0".into());
        }
        pose_error(&mut self.e, &placement.translation, &placement.rotation, x_ref);
        for (i, (w, v)) in self.w.iter_mut().zip(v_ref).enumerate() {
            let gain = if i < 3 { k } else { k_rot };
            *w = v + gain * self.e[i];
        }
        self.qd.gemv(1.0, &self.jp, &self.w, 0.0);
        // (I − J⁺J)·z = z − J⁺(J z), z = −k_null·(q − q_rest).
        for (i, z) in self.z.iter_mut().enumerate() {
            *z = -k_null * (q[i] - q_rest[i]);
        }
        self.jz.gemv(1.0, &self.jacobian, &self.z, 0.0);
        self.qd.axpy(1.0, &self.z, 1.0);
        self.qd.gemv(-1.0, &self.jp, &self.jz, 1.0);
        outputs[0].as_mut_slice().copy_from_slice(self.qd.as_slice());
        outputs[1].as_mut_slice().copy_from_slice(self.e.as_slice());
        Step::Continue
    }
}

/// `e[0..3] = p_ref − p`, `e[3..6] = ½ Σ_k r_k × rd_k` (columns of R and of the reference's
/// `Rz(yaw)·Ry(pitch)·Rx(roll)`): the orientation error of Luh, Walker and Paul in world axes,
/// `sin θ·axis` for the rotation from R to the reference. The same sums in the same order as
/// the Lua library's helpers/pose.lua.
fn pose_error(e: &mut DVector<f64>, p: &nalgebra::Vector3<f64>, r: &nalgebra::Matrix3<f64>, x: &[f64]) {
    for i in 0..3 {
        e[i] = x[i] - p[i];
    }
    let d = morc_model::rotation_from_rpy(x[3], x[4], x[5]);
    let cross = |a: usize, b: usize| {
        let term = |c: usize| r[(a, c)] * d[(b, c)] - r[(b, c)] * d[(a, c)];
        (term(0) + term(1)) + term(2)
    };
    e[3] = 0.5 * cross(1, 2);
    e[4] = 0.5 * cross(2, 0);
    e[5] = 0.5 * cross(0, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pose_error_is_sin_theta_axis() {
        // The frame at the origin unrotated; the reference turned 0.3 rad about z, 0.1 m along x.
        let mut e = DVector::zeros(6);
        pose_error(&mut e, &nalgebra::Vector3::zeros(), &nalgebra::Matrix3::identity(), &[0.1, 0.0, 0.0, 0.0, 0.0, 0.3]);
        let want = [0.1, 0.0, 0.0, 0.0, 0.0, 0.3f64.sin()];
        for (i, w) in want.iter().enumerate() {
            assert!((e[i] - w).abs() < 1e-15, "e[{i}] = {} ≠ {w}", e[i]);
        }
    }
}

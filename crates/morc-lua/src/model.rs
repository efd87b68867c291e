//! Robot models from Lua, in SI units and Pinocchio's names: `morc.model "file.urdf"` (and
//! `morc.model.urdf/dh/build`, `robot.model`) give a model userdata that carries its own
//! `Data` workspace (Pinocchio's Model/Data split), so `model:rnea(q, v, a)` and the rest
//! run morc-model's algorithms without building a workspace per call. The `_to` forms write
//! into morc vectors and matrices (crate::linalg) and allocate nothing.

use std::sync::Arc;

use mlua::{AnyUserData, Lua, Table, UserData, UserDataFields, UserDataMethods, Value};
use nalgebra::constraint::{SameNumberOfColumns, SameNumberOfRows, ShapeConstraint};
use nalgebra::storage::RawStorage;
use nalgebra::{DMatrix, DVector, Dim, Dyn, Matrix};

use crate::linalg::{doc, mat_out, vec_out, Arg, LuaMat, LuaVec, VecIn};
use morc_model::{Data, FrameIndex, Model, ReferenceFrame};

/// A robot model with its workspace: what `morc.model "file.urdf"` returns.
#[derive(Clone)]
pub struct LuaModel {
    /// The model (shared with the robot it came from, if any).
    pub model: Arc<Model>,
    data: Data,
    /// Copies of the inputs (q, v, a or tau), so that tables are read without allocating.
    q: DVector<f64>,
    v: DVector<f64>,
    a: DVector<f64>,
    /// The reference's jerk and snap, and the elastic inverse's workspace (`elastic_inverse_to`).
    jerk: DVector<f64>,
    snap: DVector<f64>,
    elastic: morc_model::ElasticInverse,
}

impl LuaModel {
    /// A model and a workspace sized for it.
    pub fn new(model: Arc<Model>) -> Self {
        let data = Data::new(&model);
        let (nq, nv) = (model.nq(), model.nv());
        let elastic = morc_model::ElasticInverse::new(&model);
        LuaModel {
            model,
            data,
            q: DVector::zeros(nq),
            v: DVector::zeros(nv),
            a: DVector::zeros(nv),
            jerk: DVector::zeros(nv),
            snap: DVector::zeros(nv),
            elastic,
        }
    }

    /// Reads the reference (q, v, a, jerk, snap) and runs the elastic inverse on it.
    fn elastic_inverse_at(&mut self, what: &str, q: &Value, v: &Value, a: &Value, jerk: &Value, snap: &Value) -> mlua::Result<()> {
        self.read(what, q, Some(v), Some((a, "a")))?;
        let nv = self.model.nv();
        read_into(jerk, self.jerk.as_mut_slice(), what, "jerk", "nv", nv)?;
        read_into(snap, self.snap.as_mut_slice(), what, "snap", "nv", nv)?;
        self.elastic.compute(&self.model, &mut self.data, self.q.as_slice(), self.v.as_slice(), self.a.as_slice(), self.jerk.as_slice(), self.snap.as_slice());
        Ok(())
    }

    /// The index of the frame named `name`, or an error listing the model's frames.
    pub(crate) fn frame(&self, name: &Value, what: &str) -> mlua::Result<FrameIndex> {
        let Value::String(s) = name else {
            return Err(mlua::Error::runtime(format!("{what}: the frame must be given by its name (a string), got a {}", name.type_name())));
        };
        if let Some(i) = self.frame_index(&s.as_bytes()) {
            return Ok(i);
        }
        let names: Vec<&str> = self.model.frames().iter().map(|f| f.name.as_str()).collect();
        Err(mlua::Error::runtime(format!("{what}: model '{}' has no frame '{}'; its frames: {}", self.model.name(), s.to_string_lossy(), names.join(", "))))
    }

    /// The index of the frame named `name` (its bytes), if the model has one.
    pub(crate) fn frame_index(&self, name: &[u8]) -> Option<FrameIndex> {
        self.model.frames().iter().position(|f| f.name.as_bytes() == name)
    }

    /// The workspace copies of the inputs, (q, v, a or tau), to read into.
    pub(crate) fn inputs_mut(&mut self) -> (&mut [f64], &mut [f64], &mut [f64]) {
        (self.q.as_mut_slice(), self.v.as_mut_slice(), self.a.as_mut_slice())
    }

    /// What the in-place forms compute from the inputs last read: each result is in the
    /// workspace, for the caller to copy out.
    pub(crate) fn rnea_at(&mut self) -> &DVector<f64> {
        morc_model::rnea(&self.model, &mut self.data, self.q.as_slice(), self.v.as_slice(), self.a.as_slice())
    }

    pub(crate) fn gravity_at(&mut self) -> &DVector<f64> {
        morc_model::gravity(&self.model, &mut self.data, self.q.as_slice())
    }

    pub(crate) fn nle_at(&mut self) -> &DVector<f64> {
        morc_model::nle(&self.model, &mut self.data, self.q.as_slice(), self.v.as_slice())
    }

    pub(crate) fn aba_at(&mut self) -> &DVector<f64> {
        morc_model::aba(&self.model, &mut self.data, self.q.as_slice(), self.v.as_slice(), self.a.as_slice())
    }

    pub(crate) fn friction_at(&mut self) -> &DVector<f64> {
        morc_model::friction(&self.model, &mut self.data, self.v.as_slice())
    }

    pub(crate) fn crba_at(&mut self) -> &DMatrix<f64> {
        morc_model::crba(&self.model, &mut self.data, self.q.as_slice())
    }

    /// Reads q (and v, a) into the workspace copies, checking their sizes.
    fn read(&mut self, what: &str, q: &Value, v: Option<&Value>, a: Option<(&Value, &str)>) -> mlua::Result<()> {
        let (nq, nv) = (self.model.nq(), self.model.nv());
        read_into(q, self.q.as_mut_slice(), what, "q", "nq", nq)?;
        if let Some(v) = v {
            read_into(v, self.v.as_mut_slice(), what, "v", "nv", nv)?;
        }
        if let Some((a, name)) = a {
            read_into(a, self.a.as_mut_slice(), what, name, "nv", nv)?;
        }
        Ok(())
    }

    /// Reads v alone into the workspace copy, checking its size.
    fn read_v(&mut self, what: &str, v: &Value) -> mlua::Result<()> {
        let nv = self.model.nv();
        read_into(v, self.v.as_mut_slice(), what, "v", "nv", nv)
    }

    /// Joint placements for `q` (SI, nq entries), then the world placement of `frame`.
    pub(crate) fn placement(&mut self, q: &[f64], frame: FrameIndex) -> morc_model::Se3 {
        self.q.copy_from_slice(q);
        self.placement_at_q(frame)
    }

    /// The world placement of `frame` at the q last read.
    pub(crate) fn placement_at_q(&mut self, frame: FrameIndex) -> morc_model::Se3 {
        morc_model::forward_kinematics_joints(&self.model, &mut self.data, self.q.as_slice());
        morc_model::frame_placement(&self.model, &self.data, frame)
    }

    pub(crate) fn jacobian(&mut self, frame: FrameIndex, reference: ReferenceFrame) -> &nalgebra::Matrix6xX<f64> {
        morc_model::forward_kinematics_joints(&self.model, &mut self.data, self.q.as_slice());
        morc_model::frame_jacobian_in(&self.model, &mut self.data, frame, reference)
    }

    fn regressor(&mut self) -> &DMatrix<f64> {
        morc_model::joint_torque_regressor(&self.model, &mut self.data, self.q.as_slice(), self.v.as_slice(), self.a.as_slice())
    }
}

/// Copies the vector argument `name` of call `what` into `out`, whose size is the model's `dim`.
fn read_into(v: &Value, out: &mut [f64], what: &str, name: &str, dim: &str, n: usize) -> mlua::Result<()> {
    let x = VecIn::of(v, Arg(what, name))?;
    if x.len() != n {
        return Err(mlua::Error::runtime(format!("{what}: {name} has {} entries, the model's {dim} is {n}", x.len())));
    }
    x.copy_to(out, Arg(what, name))
}

fn reference(name: &Option<mlua::String>, what: &str) -> mlua::Result<ReferenceFrame> {
    match name {
        None => Ok(ReferenceFrame::LocalWorldAligned),
        Some(s) => {
            let s = s.to_str()?;
            ReferenceFrame::from_name(&s)
                .ok_or_else(|| mlua::Error::runtime(format!("{what}: reference frame \"{}\" is unknown: use \"local_world_aligned\" (the default), \"local\" or \"world\"", &*s)))
        }
    }
}

/// Copies `src` into the morc vector `out`, checking the size.
fn write_vec(out: &Value, src: &DVector<f64>, what: Arg) -> mlua::Result<()> {
    let mut out = vec_out(out, what)?;
    if out.0.len() != src.len() {
        return Err(mlua::Error::runtime(format!("{what}: the destination has {} entries, needs {}", out.0.len(), src.len())));
    }
    out.0.copy_from(src);
    Ok(())
}

/// Copies `src` into the morc matrix `out`, checking the shape.
fn write_mat<R: Dim, C: Dim, S: RawStorage<f64, R, C>>(out: &Value, src: &Matrix<f64, R, C, S>, what: Arg) -> mlua::Result<()>
where
    ShapeConstraint: SameNumberOfRows<Dyn, R> + SameNumberOfColumns<Dyn, C>,
{
    let mut out = mat_out(out, what)?;
    if out.m.shape() != src.shape() {
        return Err(mlua::Error::runtime(format!("{what}: the destination is {}×{}, needs {}×{}", out.m.nrows(), out.m.ncols(), src.nrows(), src.ncols())));
    }
    out.m.copy_from(src);
    Ok(())
}

fn placement_table(lua: &Lua, p: &morc_model::Se3) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("pos", LuaVec(DVector::from_column_slice(p.translation.as_slice())))?;
    t.set("rot", LuaMat::new(DMatrix::from_column_slice(3, 3, p.rotation.as_slice())))?;
    Ok(t)
}

impl UserData for LuaModel {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("name", |_, this| Ok(this.model.name().to_string()));
        fields.add_field_method_get("dof", |_, this| Ok(this.model.nv()));
        fields.add_field_method_get("nq", |_, this| Ok(this.model.nq()));
        fields.add_field_method_get("nv", |_, this| Ok(this.model.nv()));
        fields.add_field_method_get("joints", |_, this| Ok(this.model.joint_names()[1..].to_vec()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("model '{}' ({} joints)", this.model.name(), this.model.nv())));
        methods.add_method("frames", |lua, this, ()| {
            let list = lua.create_table()?;
            for f in this.model.frames() {
                list.raw_push(f.name.as_str())?;
            }
            Ok(list)
        });
        // Allocating forms: each returns a new vector or matrix.
        methods.add_method_mut("rnea", |_, this, (q, v, a): (Value, Value, Value)| {
            this.read("model:rnea(q, v, a)", &q, Some(&v), Some((&a, "a")))?;
            Ok(LuaVec(this.rnea_at().clone()))
        });
        methods.add_method_mut("gravity", |_, this, q: Value| {
            this.read("model:gravity(q)", &q, None, None)?;
            Ok(LuaVec(this.gravity_at().clone()))
        });
        methods.add_method_mut("nle", |_, this, (q, v): (Value, Value)| {
            this.read("model:nle(q, v)", &q, Some(&v), None)?;
            Ok(LuaVec(this.nle_at().clone()))
        });
        methods.add_method_mut("aba", |_, this, (q, v, tau): (Value, Value, Value)| {
            this.read("model:aba(q, v, tau)", &q, Some(&v), Some((&tau, "tau")))?;
            Ok(LuaVec(this.aba_at().clone()))
        });
        methods.add_method_mut("friction", |_, this, v: Value| {
            this.read_v("model:friction(v)", &v)?;
            Ok(LuaVec(this.friction_at().clone()))
        });
        methods.add_method_mut("crba", |_, this, q: Value| {
            this.read("model:crba(q)", &q, None, None)?;
            Ok(LuaMat::new(this.crba_at().clone()))
        });
        methods.add_method_mut("frame_placement", |lua, this, (q, frame): (Value, Value)| {
            let what = "model:frame_placement(q, frame)";
            this.read(what, &q, None, None)?;
            let f = this.frame(&frame, what)?;
            let p = this.placement_at_q(f);
            placement_table(lua, &p)
        });
        methods.add_method_mut("frame_jacobian", |_, this, (q, frame, rf): (Value, Value, Option<mlua::String>)| {
            let what = "model:frame_jacobian(q, frame [, reference])";
            this.read(what, &q, None, None)?;
            let (f, r) = (this.frame(&frame, what)?, reference(&rf, what)?);
            let j = this.jacobian(f, r);
            Ok(LuaMat::new(DMatrix::from_column_slice(6, j.ncols(), j.as_slice())))
        });
        methods.add_method_mut("joint_torque_regressor", |_, this, (q, v, a): (Value, Value, Value)| {
            this.read("model:joint_torque_regressor(q, v, a)", &q, Some(&v), Some((&a, "a")))?;
            Ok(LuaMat::new(this.regressor().clone()))
        });
        methods.add_method("dynamic_parameters", |_, this, ()| {
            let pi: Vec<f64> = (1..this.model.njoints()).flat_map(|j| morc_model::dynamic_parameters(&this.model.inertias()[j])).collect();
            Ok(LuaVec(DVector::from_vec(pi)))
        });
        methods.add_method_mut("elastic_inverse", |lua, this, (q, v, a, jerk, snap): (Value, Value, Value, Value, Value)| {
            this.elastic_inverse_at("model:elastic_inverse(q, v, a, jerk, snap)", &q, &v, &a, &jerk, &snap)?;
            let t = lua.create_table()?;
            t.set("theta", LuaVec(this.elastic.theta.clone()))?;
            t.set("theta_d", LuaVec(this.elastic.theta_d.clone()))?;
            t.set("tau", LuaVec(this.elastic.tau.clone()))?;
            Ok(t)
        });
        methods.add_method_mut("links_at_rest", |_, this, theta: Value| {
            this.read("model:links_at_rest(theta)", &theta, None, None)?;
            let mut q = DVector::zeros(this.model.nv());
            morc_model::links_at_rest(&this.model, &mut this.data, this.q.as_slice(), q.as_mut_slice());
            Ok(LuaVec(q))
        });
        // In-place forms: write into the given vector or matrix, allocate nothing.
        methods.add_method_mut("elastic_inverse_to", |_, this, (theta, theta_d, tau, q, v, a, jerk, snap): (Value, Value, Value, Value, Value, Value, Value, Value)| {
            let what = "model:elastic_inverse_to(theta, theta_d, tau, q, v, a, jerk, snap)";
            this.elastic_inverse_at(what, &q, &v, &a, &jerk, &snap)?;
            write_vec(&theta, &this.elastic.theta, Arg(what, "theta"))?;
            write_vec(&theta_d, &this.elastic.theta_d, Arg(what, "theta_d"))?;
            write_vec(&tau, &this.elastic.tau, Arg(what, "tau"))
        });
        methods.add_method_mut("rnea_to", |_, this, (tau, q, v, a): (Value, Value, Value, Value)| {
            let what = "model:rnea_to(tau, q, v, a)";
            this.read(what, &q, Some(&v), Some((&a, "a")))?;
            write_vec(&tau, this.rnea_at(), Arg(what, "tau"))
        });
        methods.add_method_mut("gravity_to", |_, this, (tau, q): (Value, Value)| {
            let what = "model:gravity_to(tau, q)";
            this.read(what, &q, None, None)?;
            write_vec(&tau, this.gravity_at(), Arg(what, "tau"))
        });
        methods.add_method_mut("nle_to", |_, this, (tau, q, v): (Value, Value, Value)| {
            let what = "model:nle_to(tau, q, v)";
            this.read(what, &q, Some(&v), None)?;
            write_vec(&tau, this.nle_at(), Arg(what, "tau"))
        });
        methods.add_method_mut("aba_to", |_, this, (ddq, q, v, tau): (Value, Value, Value, Value)| {
            let what = "model:aba_to(ddq, q, v, tau)";
            this.read(what, &q, Some(&v), Some((&tau, "tau")))?;
            write_vec(&ddq, this.aba_at(), Arg(what, "ddq"))
        });
        methods.add_method_mut("friction_to", |_, this, (tau, v): (Value, Value)| {
            let what = "model:friction_to(tau, v)";
            this.read_v(what, &v)?;
            write_vec(&tau, this.friction_at(), Arg(what, "tau"))
        });
        methods.add_method_mut("crba_to", |_, this, (m, q): (Value, Value)| {
            let what = "model:crba_to(M, q)";
            this.read(what, &q, None, None)?;
            write_mat(&m, this.crba_at(), Arg(what, "M"))
        });
        methods.add_method_mut("frame_jacobian_to", |_, this, (j, q, frame, rf): (Value, Value, Value, Option<mlua::String>)| {
            let what = "model:frame_jacobian_to(J, q, frame [, reference])";
            this.read(what, &q, None, None)?;
            let (f, r) = (this.frame(&frame, what)?, reference(&rf, what)?);
            let jac = this.jacobian(f, r);
            write_mat(&j, jac, Arg(what, "J"))
        });
        methods.add_method_mut("frame_placement_to", |_, this, (pos, rot, q, frame): (Value, Value, Value, Value)| {
            let what = "model:frame_placement_to(pos, rot, q, frame)";
            this.read(what, &q, None, None)?;
            let f = this.frame(&frame, what)?;
            let p = this.placement_at_q(f);
            {
                let mut pos = vec_out(&pos, Arg(what, "pos"))?;
                if pos.0.len() != 3 {
                    return Err(mlua::Error::runtime(format!("{what}: pos has {} entries, needs 3", pos.0.len())));
                }
                pos.0.copy_from_slice(p.translation.as_slice());
            }
            write_mat(&rot, &p.rotation, Arg(what, "rot"))
        });
        methods.add_method_mut("joint_torque_regressor_to", |_, this, (y, q, v, a): (Value, Value, Value, Value)| {
            let what = "model:joint_torque_regressor_to(Y, q, v, a)";
            this.read(what, &q, Some(&v), Some((&a, "a")))?;
            write_mat(&y, this.regressor(), Arg(what, "Y"))
        });
    }
}

/// The model of `robot`'s userdata `ud`, kept as its user value so that `robot.model` and
/// `robot:fk` reuse one workspace; made anew when the robot's model changed (set_tool).
pub(crate) fn robot_model(lua: &Lua, ud: &AnyUserData, model: &Arc<Model>) -> mlua::Result<AnyUserData> {
    if let Ok(Value::UserData(cached)) = ud.user_value::<Value>() {
        if cached.borrow::<LuaModel>().is_ok_and(|m| Arc::ptr_eq(&m.model, model)) {
            return Ok(cached);
        }
    }
    let fresh = lua.create_userdata(LuaModel::new(model.clone()))?;
    ud.set_user_value(fresh.clone())?;
    Ok(fresh)
}

/// Makes `morc.model` callable: `morc.model "file.urdf"` is `morc.model.urdf "file.urdf"`.
/// Creates the table when robots were not installed (a stepping thread's state).
pub(crate) fn register(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let table = match morc.get::<Option<Table>>("model")? {
        Some(t) => t,
        None => {
            let t = lua.create_table()?;
            t.set("urdf", lua.create_function(crate::model_define::model_urdf)?)?;
            morc.set("model", t.clone())?;
            t
        }
    };
    let meta = lua.create_table()?;
    meta.set("__call", lua.create_function(|lua, (_, file): (Value, String)| crate::model_define::model_urdf(lua, file))?)?;
    table.set_metatable(Some(meta));
    doc(
        morc,
        table,
        r#"morc.model "file.urdf" (= morc.model.urdf), morc.model.dh { … }, morc.model.build { … }, robot.model — a robot model
with its own workspace (Pinocchio's Model/Data), in SI units (rad, m, N·m, kg) and Pinocchio's names:
  m.nq, m.nv, m.name, m.joints, m:frames() (frame names)
  m:rnea(q, v, a) → tau = M a + C v + g      m:gravity(q) → g      m:nle(q, v) → C v + g
  m:aba(q, v, tau) → ddq = M⁻¹(tau − C v − g)      m:crba(q) → M (nv×nv)
    rigid-body only, exactly as Pinocchio's: the drives' armature is in M (Pinocchio's model.armature), their friction
    is not (as Pinocchio leaves its URDF damping and friction out)
  m:friction(v) → the drives' friction torque, viscous·v + coulomb·sign(v) per joint (URDF <dynamics damping friction>,
    a robot's drive viscous/coulomb); a real drive needs rnea(q, v, a) + friction(v), and moves as aba(q, v, tau − friction(v))
  m:frame_placement(q, "frame") → { pos = vec(3), rot = mat(3×3) } in the world
  m:frame_jacobian(q, "frame" [, "local_world_aligned" | "local" | "world"]) → J (6×nv, linear rows first), as
    Pinocchio's getFrameJacobian: local_world_aligned (default) = frame origin velocity and ω in world axes; local =
    the same in the frame's axes; world = the spatial velocity at the world origin (linear v_p + p × ω)
  m:joint_torque_regressor(q, v, a) → Y (nv × 10·nbodies) with Y·π = rnea (drive terms excluded), as Pinocchio's
    computeJointTorqueRegressor; m:dynamic_parameters() → π, per body [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]
    (inertia about the joint frame origin)
  m:elastic_inverse(q, v, a, jerk, snap) → { theta, theta_d, tau }: an arm with elastic gears (drive stiffness), the
    motors' position, velocity and torque that make the links follow the reference q…snap (docs/robots.md); rigid joints
    get rnea + friction      m:links_at_rest(theta) → q: where the links of the arm at rest hang, the motors at theta
In place, allocating nothing (the real-time path; destinations are morc.vec / morc.mat of the right size):
  m:rnea_to(tau, q, v, a)  m:gravity_to(tau, q)  m:nle_to(tau, q, v)  m:aba_to(ddq, q, v, tau)  m:crba_to(M, q)
  m:friction_to(tau, v)  m:elastic_inverse_to(theta, theta_d, tau, q, v, a, jerk, snap)
  m:frame_jacobian_to(J, q, "frame" [, ref])  m:frame_placement_to(pos, rot, q, "frame")  m:joint_torque_regressor_to(Y, q, v, a)
q, v, a and tau are morc vectors or tables of numbers; a frame not found is an error listing the model's frames.
Types:
  model.nq: integer   model.nv: integer   model:frames() → string[]
  model:rnea(q: vec|number[], v: vec|number[], a: vec|number[]) → vec   model:gravity(q: vec|number[]) → vec
  model:nle(q: vec|number[], v: vec|number[]) → vec   model:aba(q: vec|number[], v: vec|number[], tau: vec|number[]) → vec
  model:friction(v: vec|number[]) → vec   model:friction_to(tau: vec, v: vec|number[])
  model:crba(q: vec|number[]) → mat   model:frame_placement(q: vec|number[], frame: string) → { pos: vec, rot: mat }
  model:frame_jacobian(q: vec|number[], frame: string, reference?: "local_world_aligned"|"local"|"world") → mat
  model:joint_torque_regressor(q: vec|number[], v: vec|number[], a: vec|number[]) → mat   model:dynamic_parameters() → vec
  model:rnea_to(tau: vec, q: vec|number[], v: vec|number[], a: vec|number[])   model:gravity_to(tau: vec, q: vec|number[])
  model:nle_to(tau: vec, q: vec|number[], v: vec|number[])   model:aba_to(ddq: vec, q: vec|number[], v: vec|number[], tau: vec|number[])
  model:crba_to(M: mat, q: vec|number[])   model:frame_placement_to(pos: vec, rot: mat, q: vec|number[], frame: string)
  model:frame_jacobian_to(J: mat, q: vec|number[], frame: string, reference?: "local_world_aligned"|"local"|"world")
  model:joint_torque_regressor_to(Y: mat, q: vec|number[], v: vec|number[], a: vec|number[])
  model:elastic_inverse(q: vec|number[], v: vec|number[], a: vec|number[], jerk: vec|number[], snap: vec|number[]) → { theta: vec, theta_d: vec, tau: vec }
  model:elastic_inverse_to(theta: vec, theta_d: vec, tau: vec, q: vec|number[], v: vec|number[], a: vec|number[], jerk: vec|number[], snap: vec|number[])
  model:links_at_rest(theta: vec|number[]) → vec"#,
    )?;
    Ok(())
}

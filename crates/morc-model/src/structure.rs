//! [`Model`]: the immutable kinematic tree and its parameters, and [`ModelBuilder`] to make one.
//!
//! As in Pinocchio, joint 0 is the "universe" (the fixed world); joints `1..njoints` each
//! have one degree of freedom, so the configuration and velocity of joint `i` sit at index
//! `i − 1` of `q` and `v`. A joint's parent always has a smaller index, so a forward loop
//! over `1..njoints` visits parents first.

use nalgebra::{DVector, Vector3};

use super::joint::JointMotion;
use super::spatial::{Inertia, Se3};
use super::ModelError;

/// Index of a joint in a [`Model`]; 0 is the universe.
pub type JointIndex = usize;
/// Index of a frame in a [`Model`].
pub type FrameIndex = usize;

/// How a joint moves along its axis (a unit vector in the joint frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    /// Rotates about the axis; q in rad, effort in N·m.
    Revolute,
    /// Slides along the axis; q in m, effort in N.
    Prismatic,
}

/// Limits of one joint; unbounded ones are ±∞.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLimits {
    /// Lowest position (rad or m).
    pub lower: f64,
    /// Highest position (rad or m).
    pub upper: f64,
    /// Largest speed in either direction (rad/s or m/s).
    pub velocity: f64,
    /// Largest torque or force in either direction (N·m or N).
    pub effort: f64,
}

impl JointLimits {
    /// No limit at all: ±∞ positions, ∞ velocity and effort.
    pub const UNBOUNDED: JointLimits = JointLimits { lower: f64::NEG_INFINITY, upper: f64::INFINITY, velocity: f64::INFINITY, effort: f64::INFINITY };
}

/// Drive-train terms of one joint, seen at the joint: reflected motor inertia and friction.
/// The rigid-body algorithms (RNEA, CRBA, ABA) include `armature` as Pinocchio's
/// `model.armature`; the friction `viscous·v + coulomb·sign(v)` is the drive's, given by
/// [`friction`](super::friction) and left out of them, as Pinocchio leaves its URDF `damping`
/// and `friction` out.
///
/// With a `stiffness`, the gear is elastic (Spong's flexible-joint model): the motor (inertia
/// `armature`, its friction on the motor's velocity) drives the link through a torsional spring
/// and damper, `τ_spring = stiffness·(θ − q) + damping·(θ̇ − q̇)`, θ the motor's position seen at
/// the joint (divided by the gear ratio). The rigid-body algorithms stay rigid (the motor and the
/// link one body): [`DriveTrain::is_elastic`] tells a plant or a feed-forward to treat it apart.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DriveTrain {
    /// Reflected rotor inertia added to the mass matrix diagonal (kg·m², or kg for prismatic joints).
    pub armature: f64,
    /// Viscous friction coefficient (N·m·s/rad, or N·s/m).
    pub viscous_friction: f64,
    /// Coulomb (dry) friction torque or force (N·m or N).
    pub coulomb_friction: f64,
    /// Torsional stiffness of the gear between motor and link, seen at the joint (N·m/rad, or
    /// N/m); 0: rigid.
    pub stiffness: f64,
    /// Damping of the gear's elasticity (N·m·s/rad, or N·s/m).
    pub damping: f64,
}

impl DriveTrain {
    /// Whether the gear is elastic: the motor and the link move apart.
    pub fn is_elastic(&self) -> bool {
        self.stiffness > 0.0
    }

    /// The drive's friction at velocity `v`: `viscous·v + coulomb·sign(v)`, `sign(0) = 0`.
    pub fn friction(&self, v: f64) -> f64 {
        self.viscous_friction * v + self.coulomb_friction * super::dynamics::sign(v)
    }
}

/// What a frame marks (as Pinocchio's frame types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A moving joint's own frame.
    Joint,
    /// A fixed joint merged into its parent body.
    FixedJoint,
    /// A body (URDF link, DH link).
    Body,
    /// Anything else (tool, sensor).
    Operational,
}

/// How a mimic joint follows its master: `q = multiplier · q_master + offset` (URDF `<mimic>`).
/// As Pinocchio 3's mimic joints (`buildModel(…, mimic=True)`), a mimic joint has no
/// coordinate of its own: it adds nothing to `nq`/`nv`, its velocity and acceleration are the
/// master's times `multiplier`, and its torque adds to the master's times `multiplier` (a gear,
/// Featherstone's §10): `M = G M_full Gᵀ`, `tau = G tau_full`, `J = J_full Gᵀ`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mimic {
    /// The joint followed (never itself a mimic joint: chains are resolved to their root).
    pub master: JointIndex,
    /// `q / q_master` (and the same for velocity and acceleration).
    pub multiplier: f64,
    /// Added to the position (rad or m).
    pub offset: f64,
}

/// A named frame rigidly attached to a joint.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Name looked up by [`Model::frame_index`]: a URDF link or joint name; `link{j}` or `tool` on DH arms.
    pub name: String,
    /// The joint the frame moves with.
    pub parent_joint: JointIndex,
    /// Placement of the frame in its parent joint's frame.
    pub placement: Se3,
    /// What the frame marks.
    pub kind: FrameKind,
}

/// The robot model: tree structure and parameters. Built once, then read by the algorithms
/// together with a [`Data`](super::Data) workspace.
#[derive(Clone, Debug)]
pub struct Model {
    pub(crate) name: String,
    pub(crate) joint_names: Vec<String>,
    pub(crate) parents: Vec<JointIndex>,
    pub(crate) joint_placements: Vec<Se3>,
    pub(crate) kinds: Vec<JointKind>,
    pub(crate) axes: Vec<Vector3<f64>>,
    /// Kind and axis of each joint, specialised for the algorithms (entry 0 unused).
    pub(crate) motions: Vec<JointMotion>,
    pub(crate) inertias: Vec<Inertia>,
    pub(crate) limits: Vec<JointLimits>,
    pub(crate) drives: Vec<DriveTrain>,
    pub(crate) has_friction: bool,
    pub(crate) frames: Vec<Frame>,
    pub(crate) gravity: Vector3<f64>,
    /// Index in q and v of each joint's coordinate (its master's for a mimic joint; entry 0 unused).
    pub(crate) idx_v: Vec<usize>,
    /// `q_joint = scaling · q[idx_v] + offset`: 1 and 0 except for mimic joints.
    pub(crate) scaling: Vec<f64>,
    pub(crate) offsets: Vec<f64>,
    pub(crate) mimics: Vec<Option<Mimic>>,
    /// The joint owning each coordinate (nv entries).
    pub(crate) dof_joints: Vec<JointIndex>,
    /// Whether some joint is a mimic joint (kept, as the algorithms ask per joint).
    pub(crate) has_mimic: bool,
}

impl Model {
    /// The robot's name (URDF `robot` name or the DH table's).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Number of joints including the universe.
    pub fn njoints(&self) -> usize {
        self.parents.len()
    }
    /// Dimension of the configuration vector `q`: the moving joints that are not mimic joints.
    pub fn nq(&self) -> usize {
        self.dof_joints.len()
    }
    /// Dimension of the velocity vector `v` (equal to `nq`: every joint has one degree of freedom).
    pub fn nv(&self) -> usize {
        self.dof_joints.len()
    }
    /// Index in `q` and `v` of `joint`'s coordinate (its master's, for a mimic joint).
    pub fn idx_v(&self, joint: JointIndex) -> usize {
        self.idx_v[joint]
    }
    /// The joint whose coordinate is `q[dof]`.
    pub fn dof_joint(&self, dof: usize) -> JointIndex {
        self.dof_joints[dof]
    }
    /// How `joint` follows another, if it is a mimic joint.
    pub fn mimic(&self, joint: JointIndex) -> Option<Mimic> {
        self.mimics[joint]
    }
    /// Whether some joint is a mimic joint (so joints and coordinates are not one to one).
    #[inline(always)]
    pub fn has_mimic_joints(&self) -> bool {
        self.has_mimic
    }
    // Without mimic joints joint i reads q[i − 1] directly: the mapping through idx_v, scaling
    // and offsets costs 3–12 % on the algorithms (measured), and the branch is predicted.
    /// Position of `joint` for the configuration `q`.
    #[inline(always)]
    pub(crate) fn joint_q(&self, joint: JointIndex, q: &[f64]) -> f64 {
        if self.has_mimic_joints() {
            self.scaling[joint] * q[self.idx_v[joint]] + self.offsets[joint]
        } else {
            q[joint - 1]
        }
    }
    /// Velocity (or acceleration) of `joint` for the velocity (or acceleration) vector `v`.
    #[inline(always)]
    pub(crate) fn joint_v(&self, joint: JointIndex, v: &[f64]) -> f64 {
        if self.has_mimic_joints() {
            self.scaling[joint] * v[self.idx_v[joint]]
        } else {
            v[joint - 1]
        }
    }
    /// Name of every joint, the universe's first.
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }
    /// Index of the joint named `name`.
    pub fn joint_index(&self, name: &str) -> Option<JointIndex> {
        self.joint_names.iter().position(|n| n == name)
    }
    /// Parent of `joint` (the universe's parent is itself, 0).
    pub fn parent(&self, joint: JointIndex) -> JointIndex {
        self.parents[joint]
    }
    /// Parent of every joint, indexed by joint.
    pub fn parents(&self) -> &[JointIndex] {
        &self.parents
    }
    /// Placement of each joint frame in its parent joint frame at `q = 0`.
    pub fn joint_placements(&self) -> &[Se3] {
        &self.joint_placements
    }
    /// Revolute or prismatic, per joint (entry 0 is the universe's, unused).
    pub fn joint_kinds(&self) -> &[JointKind] {
        &self.kinds
    }
    /// Unit axis of every joint in its own frame (entry 0 unused).
    pub fn joint_axes(&self) -> &[Vector3<f64>] {
        &self.axes
    }
    /// Body inertia carried by each joint, expressed in the joint frame.
    pub fn inertias(&self) -> &[Inertia] {
        &self.inertias
    }
    /// Limits of the coordinates (`nv` entries; joint `i` at [`idx_v(i)`](Self::idx_v)).
    pub fn limits(&self) -> &[JointLimits] {
        &self.limits
    }
    /// Drive-train terms of the coordinates (`nv` entries; a mimic joint has none of its own).
    pub fn drive_trains(&self) -> &[DriveTrain] {
        &self.drives
    }
    /// Lower position limit of each moving joint (rad or m; `nq` entries).
    pub fn lower_position_limit(&self) -> DVector<f64> {
        DVector::from_iterator(self.nq(), self.limits.iter().map(|l| l.lower))
    }
    /// Upper position limit of each moving joint (rad or m; `nq` entries).
    pub fn upper_position_limit(&self) -> DVector<f64> {
        DVector::from_iterator(self.nq(), self.limits.iter().map(|l| l.upper))
    }
    /// Velocity limit of each moving joint (rad/s or m/s; `nv` entries).
    pub fn velocity_limit(&self) -> DVector<f64> {
        DVector::from_iterator(self.nv(), self.limits.iter().map(|l| l.velocity))
    }
    /// Effort limit of each moving joint (N·m or N; `nv` entries).
    pub fn effort_limit(&self) -> DVector<f64> {
        DVector::from_iterator(self.nv(), self.limits.iter().map(|l| l.effort))
    }
    /// All frames: joints, bodies, fixed joints and operational frames.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }
    /// Index of the frame named `name`.
    pub fn frame_index(&self, name: &str) -> Option<FrameIndex> {
        self.frames.iter().position(|f| f.name == name)
    }
    /// Gravity in world axes (m/s²; default (0, 0, −9.81)).
    pub fn gravity(&self) -> &Vector3<f64> {
        &self.gravity
    }

    /// Sets the gravity vector (world axes), e.g. for a robot mounted on a wall.
    pub fn set_gravity(&mut self, gravity: Vector3<f64>) {
        self.gravity = gravity;
    }

    /// Sets a moving joint's drive-train terms (model reconfiguration, off the real-time path).
    pub fn set_drive_train(&mut self, joint: JointIndex, drive: DriveTrain) -> Result<(), ModelError> {
        if joint == 0 || joint >= self.njoints() {
            return Err(ModelError::invalid(&self.name, format!("no moving joint with index {joint} (the model has joints 1..{})", self.njoints() - 1)));
        }
        if self.mimics[joint].is_some() {
            return Err(ModelError::invalid(&self.name, format!("joint '{}' is a mimic joint: its drive train is its master's", self.joint_names[joint])));
        }
        self.drives[self.idx_v[joint]] = drive;
        self.has_friction = self.drives.iter().any(|d| d.viscous_friction != 0.0 || d.coulomb_friction != 0.0);
        Ok(())
    }

    /// Replaces the limits of `joint` (a robot's own limits take over from its description's).
    pub fn set_limits(&mut self, joint: JointIndex, limits: JointLimits) {
        self.limits[joint] = limits;
    }

    /// Adds `inertia` (expressed in the joint's frame) to the body of `joint`: a payload on it.
    pub fn add_body_inertia(&mut self, joint: JointIndex, inertia: &Inertia) {
        self.inertias[joint] = self.inertias[joint].added(inertia);
    }

    /// Adds `frame`, replacing any frame of the same name.
    pub fn set_frame(&mut self, frame: Frame) {
        self.frames.retain(|f| f.name != frame.name);
        self.frames.push(frame);
    }

    /// Checks that the model can be simulated and controlled by its dynamics: its joint-space
    /// mass matrix must be positive definite, i.e. every joint must move some mass or inertia
    /// (or drive an armature) that the joints before it do not. A massless last link behind a
    /// moving joint makes it singular, and forward dynamics then gives NaN. Checked at q = 0
    /// and at two other configurations within the limits, so that a coincidence of one pose
    /// cannot hide it. The error names the joint, the links it carries and what to do.
    /// Off the real-time path (allocates).
    pub fn check_mass_matrix(&self) -> Result<(), ModelError> {
        let n = self.nv();
        if n == 0 {
            return Ok(());
        }
        let mut data = super::Data::new(self);
        for k in 0..3 {
            let q: Vec<f64> = (0..n)
                .map(|i| {
                    let x = if k == 0 { 0.0 } else { (1.3 * (i + 1) as f64 * k as f64).sin() };
                    let (lower, upper) = (self.limits[i].lower, self.limits[i].upper);
                    // Limits as a file gives them may be inverted: they only pick poses here.
                    if lower <= upper {
                        x.clamp(lower, upper)
                    } else {
                        x
                    }
                })
                .collect();
            let m = super::crba(self, &mut data, &q);
            if let Some((i, moves_nothing)) = singular_pivot(m) {
                return Err(self.singular_joint_error(self.dof_joints[i], moves_nothing));
            }
        }
        Ok(())
    }

    /// The error for joint `joint` whose column of the mass matrix is (nearly) dependent.
    fn singular_joint_error(&self, joint: JointIndex, moves_nothing: bool) -> ModelError {
        let name = &self.joint_names[joint];
        let carried: Vec<&str> = self
            .frames
            .iter()
            .filter(|f| f.kind == FrameKind::Body && f.parent_joint != 0 && self.is_ancestor(joint, f.parent_joint))
            .map(|f| f.name.as_str())
            .collect();
        let links = match carried.as_slice() {
            [] => format!("the body of joint '{name}'"),
            [one] => format!("link '{one}'"),
            many => format!("links '{}'", many.join("', '")),
        };
        let first = carried.first().map_or_else(|| format!("joint '{name}'"), |l| format!("link '{l}'"));
        let what = if moves_nothing {
            format!("joint '{name}' moves no mass or inertia ({links}: massless, or mass only on the joint's axis)")
        } else {
            format!("joint '{name}' moves only what the joints before it move")
        };
        ModelError::invalid(
            &self.name,
            format!(
                "{what}, so the mass matrix is singular and forward dynamics would give NaN: give {first} its mass and inertia (URDF <inertial>, or mass/com/inertia in the definition), make the joint fixed if it does not move, or give its drive an armature (reflected motor inertia)"
            ),
        )
    }

    /// Whether `ancestor` lies on the path from the universe to `joint` (a joint supports itself).
    pub fn is_ancestor(&self, ancestor: JointIndex, mut joint: JointIndex) -> bool {
        loop {
            if joint == ancestor {
                return true;
            }
            if joint == 0 {
                return false;
            }
            joint = self.parents[joint];
        }
    }
}

/// Builds a [`Model`] joint by joint, keeping the tree consistent.
#[derive(Clone, Debug)]
pub struct ModelBuilder {
    model: Model,
}

impl ModelBuilder {
    /// A model holding only the universe joint (and a frame for it), with gravity −9.81 z.
    pub fn new(name: impl Into<String>) -> Self {
        let universe = Frame { name: "universe".into(), parent_joint: 0, placement: Se3::identity(), kind: FrameKind::FixedJoint };
        Self {
            model: Model {
                name: name.into(),
                joint_names: vec!["universe".into()],
                parents: vec![0],
                joint_placements: vec![Se3::identity()],
                kinds: vec![JointKind::Revolute],
                axes: vec![Vector3::zeros()],
                motions: vec![JointMotion::new(JointKind::Revolute, &Vector3::z())],
                inertias: vec![Inertia::zero()],
                limits: Vec::new(),
                drives: Vec::new(),
                has_friction: false,
                frames: vec![universe],
                gravity: Vector3::new(0.0, 0.0, -9.81),
                idx_v: vec![0],
                scaling: vec![1.0],
                offsets: vec![0.0],
                mimics: vec![None],
                dof_joints: Vec::new(),
                has_mimic: false,
            },
        }
    }

    /// Number of joints so far, the universe included.
    pub fn njoints(&self) -> usize {
        self.model.njoints()
    }

    /// Index of the joint named `name`, if added.
    pub fn joint_index(&self, name: &str) -> Option<JointIndex> {
        self.model.joint_index(name)
    }

    /// Adds a one-degree-of-freedom joint under `parent`, placed at `placement` in the
    /// parent joint frame at `q = 0`, moving along `axis` (normalised here; must be non-zero).
    /// Also adds a [`FrameKind::Joint`] frame named like the joint.
    pub fn add_joint(&mut self, name: impl Into<String>, parent: JointIndex, placement: Se3, kind: JointKind, axis: Vector3<f64>, limits: JointLimits) -> Result<JointIndex, ModelError> {
        let index = self.push_joint(name.into(), parent, placement, kind, axis)?;
        let m = &mut self.model;
        m.idx_v.push(m.dof_joints.len());
        m.scaling.push(1.0);
        m.offsets.push(0.0);
        m.mimics.push(None);
        m.dof_joints.push(index);
        m.limits.push(limits);
        m.drives.push(DriveTrain::default());
        Ok(index)
    }

    /// Adds a mimic joint (see [`Mimic`]): like [`add_joint`](Self::add_joint), but its position
    /// is `multiplier · q_master + offset` and it adds no coordinate. `master` must be a moving
    /// joint added before; when it is itself a mimic joint, the chain is resolved to its root.
    #[allow(clippy::too_many_arguments)]
    pub fn add_mimic_joint(
        &mut self,
        name: impl Into<String>,
        parent: JointIndex,
        placement: Se3,
        kind: JointKind,
        axis: Vector3<f64>,
        master: JointIndex,
        multiplier: f64,
        offset: f64,
    ) -> Result<JointIndex, ModelError> {
        let name = name.into();
        if master == 0 || master >= self.model.njoints() {
            return Err(ModelError::invalid(&self.model.name, format!("mimic joint '{name}': its master joint {master} does not exist (a master comes before its mimic joints)")));
        }
        if !(multiplier.is_finite() && offset.is_finite()) {
            return Err(ModelError::invalid(&self.model.name, format!("mimic joint '{name}': multiplier {multiplier} and offset {offset} must be finite")));
        }
        let (master, multiplier, offset) = match self.model.mimics[master] {
            Some(m) => (m.master, multiplier * m.multiplier, multiplier * m.offset + offset),
            None => (master, multiplier, offset),
        };
        let index = self.push_joint(name, parent, placement, kind, axis)?;
        let m = &mut self.model;
        m.idx_v.push(m.idx_v[master]);
        m.scaling.push(multiplier);
        m.offsets.push(offset);
        m.mimics.push(Some(Mimic { master, multiplier, offset }));
        m.has_mimic = true;
        Ok(index)
    }

    /// The part of adding a joint common to ordinary and mimic joints: tree, kind, axis, frame.
    fn push_joint(&mut self, name: String, parent: JointIndex, placement: Se3, kind: JointKind, axis: Vector3<f64>) -> Result<JointIndex, ModelError> {
        if parent >= self.model.njoints() {
            return Err(ModelError::invalid(&self.model.name, format!("joint '{name}': parent joint {parent} does not exist")));
        }
        let norm = axis.norm();
        if !(norm > 0.0 && norm.is_finite()) {
            return Err(ModelError::invalid(&self.model.name, format!("joint '{name}': axis must be a non-zero finite vector")));
        }
        if self.model.joint_index(&name).is_some() {
            return Err(ModelError::invalid(&self.model.name, format!("joint '{name}' is defined twice")));
        }
        let axis = axis / norm;
        let m = &mut self.model;
        let index = m.parents.len();
        m.joint_names.push(name.clone());
        m.parents.push(parent);
        m.joint_placements.push(placement);
        m.kinds.push(kind);
        m.axes.push(axis);
        m.motions.push(JointMotion::new(kind, &axis));
        m.inertias.push(Inertia::zero());
        m.frames.push(Frame { name, parent_joint: index, placement: Se3::identity(), kind: FrameKind::Joint });
        Ok(index)
    }

    /// Adds a body's inertia (expressed in the joint frame) to what the joint carries; refuses
    /// one no rigid body can have ([`Inertia::physical_error`]).
    pub fn append_body_inertia(&mut self, joint: JointIndex, inertia: &Inertia) -> Result<(), ModelError> {
        if joint >= self.model.njoints() {
            return Err(ModelError::invalid(&self.model.name, format!("append_body_inertia: joint {joint} does not exist")));
        }
        if let Some(why) = inertia.physical_error() {
            return Err(ModelError::invalid(&self.model.name, format!("the body on joint '{}': {why}", self.model.joint_names[joint])));
        }
        let sum = self.model.inertias[joint].added(inertia);
        if let Some(why) = sum.physical_error() {
            return Err(ModelError::invalid(&self.model.name, format!("the bodies on joint '{}' together: {why}", self.model.joint_names[joint])));
        }
        self.model.inertias[joint] = sum;
        Ok(())
    }

    /// Adds a frame attached to `parent_joint` at `placement` in that joint's frame; returns its index.
    pub fn add_frame(&mut self, name: impl Into<String>, parent_joint: JointIndex, placement: Se3, kind: FrameKind) -> Result<FrameIndex, ModelError> {
        let name = name.into();
        if parent_joint >= self.model.njoints() {
            return Err(ModelError::invalid(&self.model.name, format!("frame '{name}': joint {parent_joint} does not exist")));
        }
        self.model.frames.push(Frame { name, parent_joint, placement, kind });
        Ok(self.model.frames.len() - 1)
    }

    /// Sets a moving joint's drive-train terms (armature and friction).
    pub fn set_drive_train(&mut self, joint: JointIndex, drive: DriveTrain) -> Result<(), ModelError> {
        self.model.set_drive_train(joint, drive)
    }

    /// Sets the gravity vector (world axes, m/s²).
    pub fn set_gravity(&mut self, gravity: Vector3<f64>) {
        self.model.gravity = gravity;
    }

    /// The finished model.
    pub fn build(self) -> Model {
        self.model
    }
}

/// The first index at which the LDLᵀ factorisation of the symmetric matrix `m` meets a pivot
/// that is not clearly positive (relative to its largest diagonal entry), if any, and whether
/// that row's diagonal entry is itself (nearly) zero.
fn singular_pivot(m: &nalgebra::DMatrix<f64>) -> Option<(usize, bool)> {
    let n = m.nrows();
    let scale = (0..n).fold(0.0f64, |s, i| s.max(m[(i, i)].abs()));
    let tolerance = 1e-12 * scale;
    let mut l = nalgebra::DMatrix::<f64>::identity(n, n);
    let mut d = vec![0.0; n];
    for j in 0..n {
        d[j] = m[(j, j)] - (0..j).map(|k| l[(j, k)] * l[(j, k)] * d[k]).sum::<f64>();
        // A NaN pivot counts as not positive, hence the explicit is_nan.
        if d[j].is_nan() || d[j] <= tolerance {
            return Some((j, m[(j, j)].is_nan() || m[(j, j)] <= tolerance));
        }
        for i in j + 1..n {
            l[(i, j)] = (m[(i, j)] - (0..j).map(|k| l[(i, k)] * l[(j, k)] * d[k]).sum::<f64>()) / d[j];
        }
    }
    None
}

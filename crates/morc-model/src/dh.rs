//! Denavit–Hartenberg tables → [`Model`], standard or modified (Craig), with optional link
//! inertias and drive trains; and a reader for the Robotics Toolbox for Python's DH dump
//! (`kr5_dh.json`).
//!
//! Standard: `A_j = Rz(θ_j) Tz(d_j) Tx(a_j) Rx(α_j)`; modified: `A_j = Rx(α_j) Tx(a_j) Rz(θ_j) Tz(d_j)`.
//! A revolute joint sets `θ_j = q_j + offset_j`, a prismatic one `d_j = q_j + offset_j`
//! (`flip` negates `q_j`). The model joint `j` sits where its variable enters the product,
//! so each row splits into a fixed part before the joint and one after it. Link `j`'s
//! inertia is given in DH frame `j`, which is also the frame `link{j}` of the model; the
//! end effector is the frame `tool`.

use std::path::Path;

use nalgebra::{Matrix3, Matrix4, Vector3};
use serde_json::Value;

use super::spatial::{rotation_about_axis, Inertia, Se3};
use super::{DriveTrain, FrameKind, JointKind, JointLimits, Model, ModelBuilder, ModelError};

/// Where a DH table puts link `j`'s frame, which fixes the order of the four elementary transforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DhConvention {
    /// Denavit–Hartenberg's original: frame `j` at the far end of link `j`.
    Standard,
    /// Craig's modified convention: frame `j` at joint `j`.
    Modified,
}

/// One row of a DH table.
#[derive(Clone, Debug, PartialEq)]
pub struct DhLink {
    /// Link length: distance along x between the z axes (m).
    pub a: f64,
    /// Link twist: angle about x between the z axes (rad).
    pub alpha: f64,
    /// Link offset along z (m); the constant part of a revolute row (a prismatic one uses `offset`).
    pub d: f64,
    /// Joint angle about z (rad); the constant part of a prismatic row (a revolute one uses `offset`).
    pub theta: f64,
    /// Added to the joint variable (θ for revolute, d for prismatic joints).
    pub offset: f64,
    /// Whether the row's variable is θ (revolute) or d (prismatic).
    pub kind: JointKind,
    /// The joint moves against the DH convention's direction (`θ = −q + offset`).
    pub flip: bool,
    /// Position, velocity and effort limits of the row's joint.
    pub limits: JointLimits,
    /// Mass, centre of mass and rotational inertia about it, in DH frame `j`.
    pub inertia: Option<Inertia>,
    /// Reflected motor inertia and friction of the row's joint.
    pub drive: DriveTrain,
}

impl DhLink {
    /// A revolute row without inertia, drive train or limits.
    pub fn revolute(a: f64, alpha: f64, d: f64, offset: f64) -> Self {
        DhLink {
            a,
            alpha,
            d,
            theta: 0.0,
            offset,
            kind: JointKind::Revolute,
            flip: false,
            limits: JointLimits::UNBOUNDED,
            inertia: None,
            drive: DriveTrain::default(),
        }
    }
}

/// A DH description of a serial arm.
#[derive(Clone, Debug, PartialEq)]
pub struct DhTable {
    /// The model's name (error messages and the URDF `robot` name).
    pub name: String,
    /// Standard or modified (Craig) parameters.
    pub convention: DhConvention,
    /// Placement of the arm's base frame in the world.
    pub base: Se3,
    /// Placement of the tool frame in the last DH frame.
    pub tool: Se3,
    /// The rows, base to tool, one per joint.
    pub links: Vec<DhLink>,
    /// Gravity in world axes (m/s²).
    pub gravity: Vector3<f64>,
}

fn rot_x(angle: f64) -> Se3 {
    let (s, c) = angle.sin_cos();
    Se3::from_rotation(rotation_about_axis(&Vector3::x(), s, c))
}

fn rot_z(angle: f64) -> Se3 {
    let (s, c) = angle.sin_cos();
    Se3::from_rotation(rotation_about_axis(&Vector3::z(), s, c))
}

fn trans(x: f64, y: f64, z: f64) -> Se3 {
    Se3::from_translation(Vector3::new(x, y, z))
}

impl DhTable {
    /// The fixed transforms before and after the joint variable of row `link`.
    fn split_row(&self, link: &DhLink) -> (Se3, Se3) {
        let pre_and_post = |pre: [Se3; 4], post: [Se3; 3]| {
            let fold = |acc: Se3, x: &Se3| acc.compose(x);
            (pre.iter().fold(Se3::identity(), fold), post.iter().fold(Se3::identity(), fold))
        };
        let id = Se3::identity();
        match (self.convention, link.kind) {
            (DhConvention::Standard, JointKind::Revolute) => pre_and_post([rot_z(link.offset), id, id, id], [trans(0.0, 0.0, link.d), trans(link.a, 0.0, 0.0), rot_x(link.alpha)]),
            (DhConvention::Standard, JointKind::Prismatic) => pre_and_post([rot_z(link.theta), trans(0.0, 0.0, link.offset), id, id], [trans(link.a, 0.0, 0.0), rot_x(link.alpha), id]),
            (DhConvention::Modified, JointKind::Revolute) => pre_and_post([rot_x(link.alpha), trans(link.a, 0.0, 0.0), trans(0.0, 0.0, link.d), rot_z(link.offset)], [id, id, id]),
            (DhConvention::Modified, JointKind::Prismatic) => pre_and_post([rot_x(link.alpha), trans(link.a, 0.0, 0.0), rot_z(link.theta), trans(0.0, 0.0, link.offset)], [id, id, id]),
        }
    }

    /// Builds the model: joints `joint1..jointN`, frames `base`, `link1..linkN` and `tool`.
    pub fn to_model(&self) -> Result<Model, ModelError> {
        if self.links.is_empty() {
            return Err(ModelError::invalid(&self.name, "the DH table has no links"));
        }
        let mut builder = ModelBuilder::new(self.name.clone());
        builder.set_gravity(self.gravity);
        builder.add_frame("base", 0, self.base, FrameKind::Body)?;
        let mut previous_post = self.base;
        let mut parent = 0;
        for (row, link) in self.links.iter().enumerate() {
            let origin = format!("{}: link {}", self.name, row + 1);
            let values = [link.a, link.alpha, link.d, link.theta, link.offset];
            if values.iter().any(|x| !x.is_finite()) {
                return Err(ModelError::invalid(origin, "a, alpha, d, theta and offset must be finite"));
            }
            let (pre, post) = self.split_row(link);
            let axis = if link.flip { -Vector3::z() } else { Vector3::z() };
            let joint = builder.add_joint(format!("joint{}", row + 1), parent, previous_post.compose(&pre), link.kind, axis, link.limits)?;
            if let Some(inertia) = &link.inertia {
                if let Some(why) = inertia.physical_error() {
                    return Err(ModelError::invalid(origin, format!("{why}: give the link the inertia of its real shape (CAD, or a box or cylinder of its size and mass)")));
                }
                builder.append_body_inertia(joint, &post.act_inertia(inertia))?;
            }
            builder.set_drive_train(joint, link.drive)?;
            builder.add_frame(format!("link{}", row + 1), joint, post, FrameKind::Body)?;
            previous_post = post;
            parent = joint;
        }
        builder.add_frame("tool", parent, previous_post.compose(&self.tool), FrameKind::Operational)?;
        Ok(builder.build())
    }

    /// Reads the DH dump of the Robotics Toolbox for Python (`models.<robot>` in the file).
    pub fn load_rtb_json(path: impl AsRef<Path>, robot: &str) -> Result<DhTable, ModelError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io { path: origin.clone(), source })?;
        Self::parse_rtb_json(&text, robot, &origin)
    }

    /// Parses the Robotics Toolbox's DH dump. Per link it reads `a alpha d theta offset
    /// sigma flip qlim`, and when present `m`, `r`, `I` (3×3, about the centre of mass),
    /// `Jm`, `G` (armature `Jm·G²`) and `B` (viscous friction `B·G²`, motor side).
    pub fn parse_rtb_json(text: &str, robot: &str, origin: &str) -> Result<DhTable, ModelError> {
        let root: Value = serde_json::from_str(text).map_err(|e| ModelError::invalid(origin, format!("not valid JSON: {e}")))?;
        let spec = root.get("models").and_then(|m| m.get(robot)).ok_or_else(|| ModelError::invalid(origin, format!("no model '{robot}' under \"models\"")))?;
        let at = |what: &str| format!("{origin}: models.{robot}.{what}");
        let convention = match spec.get("convention").and_then(Value::as_str) {
            Some(c) if c.starts_with("standard") => DhConvention::Standard,
            Some(c) if c.starts_with("modified") => DhConvention::Modified,
            other => return Err(ModelError::invalid(at("convention"), format!("expected \"standard DH\" or \"modified DH\", found {other:?}"))),
        };
        let base = match spec.get("base") {
            Some(v) => Se3::from_homogeneous(&matrix4(v).ok_or_else(|| ModelError::invalid(at("base"), "expected a 4×4 matrix"))?),
            None => Se3::identity(),
        };
        let tool = match spec.get("tool") {
            Some(v) => Se3::from_homogeneous(&matrix4(v).ok_or_else(|| ModelError::invalid(at("tool"), "expected a 4×4 matrix"))?),
            None => Se3::identity(),
        };
        let rows = spec.get("links").and_then(Value::as_array).ok_or_else(|| ModelError::invalid(at("links"), "expected an array"))?;
        let mut links = Vec::with_capacity(rows.len());
        for (j, row) in rows.iter().enumerate() {
            let here = |field: &str| ModelError::invalid(at(&format!("links[{j}].{field}")), "missing or not a number");
            let number = |field: &str| row.get(field).and_then(Value::as_f64).ok_or_else(|| here(field));
            let optional = |field: &str| row.get(field).filter(|v| !v.is_null());
            let kind = match row.get("sigma").and_then(Value::as_i64).unwrap_or(0) {
                0 => JointKind::Revolute,
                1 => JointKind::Prismatic,
                s => return Err(ModelError::invalid(at(&format!("links[{j}].sigma")), format!("must be 0 (revolute) or 1 (prismatic), is {s}"))),
            };
            let mut limits = JointLimits::UNBOUNDED;
            if let Some(qlim) = optional("qlim") {
                let pair = vector(qlim, 2).ok_or_else(|| ModelError::invalid(at(&format!("links[{j}].qlim")), "expected [lower, upper]"))?;
                limits.lower = pair[0];
                limits.upper = pair[1];
            }
            let inertia = match optional("m") {
                Some(m) => {
                    let mass = m.as_f64().ok_or_else(|| here("m"))?;
                    let com = optional("r").map(|r| vector(r, 3)).unwrap_or(Some(vec![0.0; 3])).ok_or_else(|| here("r"))?;
                    let rotational = match optional("I") {
                        Some(i) => matrix3(i).ok_or_else(|| ModelError::invalid(at(&format!("links[{j}].I")), "expected a 3×3 matrix"))?,
                        None => Matrix3::zeros(),
                    };
                    Some(Inertia::new(mass, Vector3::new(com[0], com[1], com[2]), rotational))
                }
                None => None,
            };
            let gear = optional("G").and_then(Value::as_f64).unwrap_or(1.0);
            let drive = DriveTrain {
                armature: optional("Jm").and_then(Value::as_f64).unwrap_or(0.0) * gear * gear,
                viscous_friction: optional("B").and_then(Value::as_f64).unwrap_or(0.0) * gear * gear,
                coulomb_friction: 0.0,
                ..Default::default()
            };
            links.push(DhLink {
                a: number("a")?,
                alpha: number("alpha")?,
                d: number("d")?,
                theta: optional("theta").and_then(Value::as_f64).unwrap_or(0.0),
                offset: optional("offset").and_then(Value::as_f64).unwrap_or(0.0),
                kind,
                flip: optional("flip").and_then(Value::as_bool).unwrap_or(false),
                limits,
                inertia,
                drive,
            });
        }
        let name = spec.get("name").and_then(Value::as_str).unwrap_or(robot).to_string();
        Ok(DhTable { name, convention, base, tool, links, gravity: Vector3::new(0.0, 0.0, -9.81) })
    }
}

fn vector(value: &Value, len: usize) -> Option<Vec<f64>> {
    let items = value.as_array()?;
    if items.len() != len {
        return None;
    }
    items.iter().map(Value::as_f64).collect()
}

fn matrix3(value: &Value) -> Option<Matrix3<f64>> {
    let rows = value.as_array()?;
    if rows.len() != 3 {
        return None;
    }
    let mut m = Matrix3::zeros();
    for (i, row) in rows.iter().enumerate() {
        let row = vector(row, 3)?;
        for (j, x) in row.into_iter().enumerate() {
            m[(i, j)] = x;
        }
    }
    Some(m)
}

fn matrix4(value: &Value) -> Option<Matrix4<f64>> {
    let rows = value.as_array()?;
    if rows.len() != 4 {
        return None;
    }
    let mut m = Matrix4::zeros();
    for (i, row) in rows.iter().enumerate() {
        let row = vector(row, 4)?;
        for (j, x) in row.into_iter().enumerate() {
            m[(i, j)] = x;
        }
    }
    Some(m)
}

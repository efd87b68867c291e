//! URDF → [`Model`], as Pinocchio's URDF parser does it: revolute, continuous and prismatic
//! joints become model joints; fixed joints are merged into the parent body (their child's
//! inertia is carried over into the parent joint's frame); every link and every joint gets a
//! frame, so frames behind fixed joints (such as `tool0`) exist.
//!
//! Differences from Pinocchio, on purpose: a `continuous` joint is a revolute joint without
//! position limits (one coordinate, not Pinocchio's cos/sin pair). `<dynamics damping
//! friction>` become the joint's viscous and Coulomb friction in its drive train, as
//! Pinocchio's `model.damping` and `model.friction`: the rigid-body algorithms leave them out,
//! [`friction`](super::friction) gives them. Floating and planar joints are refused with an error. A `<mimic>` joint becomes a mimic
//! joint as Pinocchio 3's `buildModel(…, mimic=True)` makes it ([`Mimic`](super::Mimic)): no
//! coordinate of its own (`nq`, `nv` count only the other moving joints), its position
//! `multiplier · q_master + offset`, its torque added to the master's. Its own `<limit>` and
//! `<dynamics>` are not used (the master's apply). Pinocchio's default (`mimic=False`), which
//! ignores the tag and makes the joint independent, is not what a gripper's fingers do.
//!
//! [`to_urdf`] writes a [`Model`] back out, so a model built from a DH table or by hand can
//! be handed to other tools (Pinocchio, viewers).

use std::collections::HashMap;
use std::path::Path;

use nalgebra::{Matrix3, Vector3};
use roxmltree::{Document, Node};

use std::fmt::Write as _;

use super::spatial::{rotation_from_rpy, rpy_from_rotation, Inertia, Se3};
use super::{DriveTrain, FrameKind, JointIndex, JointKind, JointLimits, Model, ModelBuilder, ModelError};

/// The most moving joints a URDF may have: the dynamics' workspace grows with its square and
/// their checks with its cube, so a hostile file must not choose it freely.
pub const MAX_MOVING_JOINTS: usize = 1024;

/// Reads and parses a URDF file.
pub fn load_urdf(path: impl AsRef<Path>) -> Result<Model, ModelError> {
    let path = path.as_ref();
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io { path: origin.clone(), source })?;
    parse_urdf(&text, &origin)
}

/// Parses URDF text; `origin` (usually the file name) starts every error message.
pub fn parse_urdf(text: &str, origin: &str) -> Result<Model, ModelError> {
    let doc = Document::parse(text).map_err(|e| ModelError::invalid(origin, format!("not well-formed XML: {e}")))?;
    Parser { doc: &doc, origin }.parse()
}

struct Link<'a> {
    name: &'a str,
    inertia: Option<Inertia>,
}

struct Joint<'a, 'i> {
    node: Node<'a, 'i>,
    name: &'a str,
    kind: Option<JointKind>,
    parent: usize,
    child: usize,
    origin: Se3,
    axis: Vector3<f64>,
    limits: JointLimits,
    drive: DriveTrain,
    /// `<mimic joint multiplier offset>`: the master's name, multiplier, offset.
    mimic: Option<(&'a str, f64, f64)>,
}

struct Parser<'a, 'i> {
    doc: &'a Document<'i>,
    origin: &'a str,
}

impl<'a, 'i> Parser<'a, 'i> {
    /// An error about `node`, naming the file, the line and the element.
    fn error(&self, node: Node, message: impl AsRef<str>) -> ModelError {
        let pos = self.doc.text_pos_at(node.range().start);
        let tag = node.tag_name().name();
        let element = match node.attribute("name") {
            Some(name) => format!("<{tag} name=\"{name}\">"),
            None => format!("<{tag}>"),
        };
        ModelError::invalid(self.origin, format!("line {}: {element}: {}", pos.row, message.as_ref()))
    }

    fn required_attribute(&self, node: Node<'a, 'i>, attribute: &str) -> Result<&'a str, ModelError> {
        node.attribute(attribute).ok_or_else(|| self.error(node, format!("missing attribute '{attribute}'")))
    }

    fn number(&self, node: Node, attribute: &str, text: &str) -> Result<f64, ModelError> {
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| !x.is_nan())
            .ok_or_else(|| self.error(node, format!("attribute '{attribute}' = \"{text}\" is not a number")))
    }

    fn optional_number(&self, node: Node, attribute: &str, default: f64) -> Result<f64, ModelError> {
        match node.attribute(attribute) {
            Some(text) => self.number(node, attribute, text),
            None => Ok(default),
        }
    }

    fn vector3(&self, node: Node, attribute: &str, default: Vector3<f64>) -> Result<Vector3<f64>, ModelError> {
        let Some(text) = node.attribute(attribute) else { return Ok(default) };
        let mut values = [0.0; 3];
        let mut count = 0;
        for word in text.split_whitespace() {
            if count < 3 {
                values[count] = self.number(node, attribute, word)?;
            }
            count += 1;
        }
        if count != 3 {
            return Err(self.error(node, format!("attribute '{attribute}' = \"{text}\" needs 3 numbers, has {count}")));
        }
        Ok(Vector3::from(values))
    }

    fn child(node: Node<'a, 'i>, tag: &str) -> Option<Node<'a, 'i>> {
        node.children().find(|c| c.is_element() && c.has_tag_name(tag))
    }

    /// The placement given by an optional `<origin xyz rpy>` child of `node`.
    fn origin_of(&self, node: Node<'a, 'i>) -> Result<Se3, ModelError> {
        let Some(origin) = Self::child(node, "origin") else { return Ok(Se3::identity()) };
        let xyz = self.vector3(origin, "xyz", Vector3::zeros())?;
        let rpy = self.vector3(origin, "rpy", Vector3::zeros())?;
        // Beyond this, placements composed along a chain overflow into ∞ and NaN.
        if !xyz.iter().chain(rpy.iter()).all(|x| x.abs() <= 1e6) {
            return Err(self.error(origin, format!("xyz = ({}, {}, {}) m, rpy = ({}, {}, {}) rad: each must be finite and at most 10⁶", xyz.x, xyz.y, xyz.z, rpy.x, rpy.y, rpy.z)));
        }
        Ok(Se3::new(rotation_from_rpy(rpy.x, rpy.y, rpy.z), xyz))
    }

    fn parse_link(&self, node: Node<'a, 'i>) -> Result<Link<'a>, ModelError> {
        let name = self.required_attribute(node, "name")?;
        let Some(inertial) = Self::child(node, "inertial") else { return Ok(Link { name, inertia: None }) };
        let placement = self.origin_of(inertial)?;
        let mass_node = Self::child(inertial, "mass").ok_or_else(|| self.error(node, "<inertial> has no <mass>"))?;
        let mass = self.number(mass_node, "value", self.required_attribute(mass_node, "value")?)?;
        if !(mass >= 0.0 && mass.is_finite()) {
            return Err(self.error(node, format!("mass must be a finite number ≥ 0, is {mass}")));
        }
        let inertia_node = Self::child(inertial, "inertia").ok_or_else(|| self.error(node, "<inertial> has no <inertia>"))?;
        let moment = |attribute| -> Result<f64, ModelError> { self.number(inertia_node, attribute, self.required_attribute(inertia_node, attribute)?) };
        let (ixx, ixy, ixz, iyy, iyz, izz) = (moment("ixx")?, moment("ixy")?, moment("ixz")?, moment("iyy")?, moment("iyz")?, moment("izz")?);
        if ixx < 0.0 || iyy < 0.0 || izz < 0.0 {
            return Err(self.error(node, "the principal moments ixx, iyy, izz must not be negative"));
        }
        let rotational = Matrix3::new(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz);
        let body = Inertia::new(mass, Vector3::zeros(), rotational);
        if let Some(why) = body.physical_error() {
            return Err(self.error(node, format!("{why}: give the link the inertia of its real shape (CAD, or a box or cylinder of its size and mass)")));
        }
        Ok(Link { name, inertia: Some(placement.act_inertia(&body)) })
    }

    fn parse_joint(&self, node: Node<'a, 'i>, links: &HashMap<&str, usize>) -> Result<Joint<'a, 'i>, ModelError> {
        let name = self.required_attribute(node, "name")?;
        let joint_type = self.required_attribute(node, "type")?;
        let kind = match joint_type {
            "revolute" | "continuous" => Some(JointKind::Revolute),
            "prismatic" => Some(JointKind::Prismatic),
            "fixed" => None,
            "floating" | "planar" => return Err(self.error(node, format!("joint type '{joint_type}' is not supported (use revolute, continuous, prismatic or fixed)"))),
            other => return Err(self.error(node, format!("unknown joint type '{other}' (URDF knows revolute, continuous, prismatic, fixed, floating, planar)"))),
        };
        let mimic = match Self::child(node, "mimic") {
            None => None,
            Some(_) if kind.is_none() => return Err(self.error(node, "a fixed joint cannot mimic another: remove <mimic> or make the joint revolute or prismatic")),
            Some(m) => Some((self.required_attribute(m, "joint")?, self.optional_number(m, "multiplier", 1.0)?, self.optional_number(m, "offset", 0.0)?)),
        };
        let link_of = |role: &str| -> Result<usize, ModelError> {
            let element = Self::child(node, role).ok_or_else(|| self.error(node, format!("missing <{role} link=\"…\"/>")))?;
            let link = self.required_attribute(element, "link")?;
            links.get(link).copied().ok_or_else(|| self.error(node, format!("{role} link '{link}' is not defined")))
        };
        let parent = link_of("parent")?;
        let child = link_of("child")?;
        let origin = self.origin_of(node)?;
        let axis = match Self::child(node, "axis") {
            Some(axis_node) => {
                let axis = self.vector3(axis_node, "xyz", Vector3::x())?;
                if !axis.iter().all(|x| x.is_finite()) {
                    return Err(self.error(node, "the joint axis must be finite"));
                }
                if kind.is_some() && axis.norm() == 0.0 {
                    return Err(self.error(node, "the joint axis must not be zero"));
                }
                axis
            }
            None => Vector3::x(),
        };
        let mut limits = JointLimits::UNBOUNDED;
        match Self::child(node, "limit") {
            Some(limit) => {
                if joint_type != "continuous" {
                    limits.lower = self.optional_number(limit, "lower", 0.0)?;
                    limits.upper = self.optional_number(limit, "upper", 0.0)?;
                }
                limits.velocity = self.optional_number(limit, "velocity", f64::INFINITY)?;
                limits.effort = self.optional_number(limit, "effort", f64::INFINITY)?;
            }
            None if matches!(joint_type, "revolute" | "prismatic") => {
                return Err(self.error(node, format!("a {joint_type} joint needs a <limit> element")));
            }
            None => {}
        }
        let mut drive = DriveTrain::default();
        if let Some(dynamics) = Self::child(node, "dynamics") {
            drive.viscous_friction = self.optional_number(dynamics, "damping", 0.0)?;
            drive.coulomb_friction = self.optional_number(dynamics, "friction", 0.0)?;
        }
        Ok(Joint { node, name, kind, parent, child, origin, axis, limits, drive, mimic })
    }

    fn parse(&self) -> Result<Model, ModelError> {
        let robot = self.doc.root_element();
        if !robot.has_tag_name("robot") {
            return Err(self.error(robot, "the root element must be <robot>"));
        }
        let robot_name = robot.attribute("name").unwrap_or("robot");

        let mut links = Vec::new();
        let mut link_index = HashMap::new();
        for node in robot.children().filter(|n| n.has_tag_name("link")) {
            let link = self.parse_link(node)?;
            if link_index.insert(link.name, links.len()).is_some() {
                return Err(self.error(node, "a link of this name is already defined"));
            }
            links.push(link);
        }
        if links.is_empty() {
            return Err(self.error(robot, "no <link> elements"));
        }

        let moving = robot.children().filter(|n| n.has_tag_name("joint") && !matches!(n.attribute("type"), Some("fixed"))).count();
        if moving > MAX_MOVING_JOINTS {
            return Err(self.error(robot, format!("{moving} moving joints: morc takes at most {MAX_MOVING_JOINTS}")));
        }
        let mut joints = Vec::new();
        let mut parent_joint_of: Vec<Option<usize>> = vec![None; links.len()];
        let mut child_joints: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
        let mut joint_names = HashMap::new();
        for node in robot.children().filter(|n| n.has_tag_name("joint")) {
            let joint = self.parse_joint(node, &link_index)?;
            if joint_names.insert(joint.name, joints.len()).is_some() {
                return Err(self.error(node, "a joint of this name is already defined"));
            }
            if let Some(other) = parent_joint_of[joint.child] {
                let other_name = joints.iter().map(|j: &Joint| j.name).nth(other).unwrap_or("?");
                return Err(self.error(node, format!("link '{}' is already the child of joint '{other_name}' (a link has one parent)", links[joint.child].name)));
            }
            parent_joint_of[joint.child] = Some(joints.len());
            child_joints[joint.parent].push(joints.len());
            joints.push(joint);
        }

        let roots: Vec<usize> = (0..links.len()).filter(|&l| parent_joint_of[l].is_none()).collect();
        let root = match roots.as_slice() {
            [root] => *root,
            [] => return Err(self.error(robot, "every link is the child of a joint: the joints form a cycle")),
            _ => {
                let names: Vec<&str> = roots.iter().map(|&l| links[l].name).collect();
                return Err(self.error(robot, format!("several root links ({}); a URDF tree has exactly one", names.join(", "))));
            }
        };

        let mut builder = ModelBuilder::new(robot_name);
        // Where each visited link sits: the model joint that moves it and its placement there.
        let mut attachment: Vec<Option<(JointIndex, Se3)>> = vec![None; links.len()];
        attachment[root] = Some((0, Se3::identity()));
        if let Some(inertia) = &links[root].inertia {
            builder.append_body_inertia(0, inertia)?;
        }
        builder.add_frame(links[root].name, 0, Se3::identity(), FrameKind::Body)?;

        // Depth first, children in document order, as Pinocchio numbers joints.
        let mut stack: Vec<usize> = child_joints[root].iter().rev().copied().collect();
        let mut visited = 1;
        while let Some(j) = stack.pop() {
            let joint = &joints[j];
            let Some((parent_joint, parent_placement)) = attachment[joint.parent] else {
                return Err(self.error(joint.node, "internal: parent link not placed"));
            };
            let placement = parent_placement.compose(&joint.origin);
            let child = &links[joint.child];
            let (joint_index, child_placement) = match joint.kind {
                Some(kind) => {
                    let index = match joint.mimic {
                        None => {
                            let index = builder.add_joint(joint.name, parent_joint, placement, kind, joint.axis, joint.limits).map_err(|e| self.error(joint.node, e.to_string()))?;
                            builder.set_drive_train(index, joint.drive)?;
                            index
                        }
                        Some((master, multiplier, offset)) => {
                            let master_index = builder.joint_index(master).ok_or_else(|| {
                                let why = match joints.iter().find(|j| j.name == master) {
                                    _ if master == joint.name => "is itself (a joint cannot mimic itself)".to_string(),
                                    None => "is not defined".to_string(),
                                    Some(j) if j.kind.is_none() => "is a fixed joint (a master must move)".to_string(),
                                    Some(_) => "comes after it in the tree (joints are numbered depth first from the root link; a master must come first)".to_string(),
                                };
                                self.error(joint.node, format!("mimic joint: its master joint '{master}' {why}"))
                            })?;
                            builder
                                .add_mimic_joint(joint.name, parent_joint, placement, kind, joint.axis, master_index, multiplier, offset)
                                .map_err(|e| self.error(joint.node, e.to_string()))?
                        }
                    };
                    (index, Se3::identity())
                }
                None => {
                    builder.add_frame(joint.name, parent_joint, placement, FrameKind::FixedJoint)?;
                    (parent_joint, placement)
                }
            };
            if let Some(inertia) = &child.inertia {
                builder.append_body_inertia(joint_index, &child_placement.act_inertia(inertia))?;
            }
            builder.add_frame(child.name, joint_index, child_placement, FrameKind::Body)?;
            attachment[joint.child] = Some((joint_index, child_placement));
            visited += 1;
            stack.extend(child_joints[joint.child].iter().rev().copied());
        }
        if visited != links.len() {
            let unreachable: Vec<&str> = (0..links.len()).filter(|&l| attachment[l].is_none()).map(|l| links[l].name).collect();
            return Err(self.error(robot, format!("links {} are not connected to the root link '{}': their joints form a cycle", unreachable.join(", "), links[root].name)));
        }
        Ok(builder.build())
    }
}

/// The model as URDF text: one link per moving joint carrying that joint's inertia, and the
/// other frames as fixed joints to massless links. A model read from URDF comes back with
/// the same joints, links and frames (fixed joints re-attached directly to the moving
/// joint's link); a frame pair "fixed joint + its child link" is written as one fixed joint.
///
/// What URDF cannot hold is not written: armature, gravity, the kinds of frames. Unbounded
/// revolute joints become `continuous` (which Pinocchio models with cos/sin, `nq = 2`), and
/// unbounded velocity or effort is written as the largest finite number, since URDF
/// readers require one.
pub fn to_urdf(model: &Model) -> String {
    let frames = model.frames();
    let mut used = vec![false; frames.len()];
    // A link is named after the body frame sitting at its joint's origin, if there is one.
    let mut link_names: Vec<String> = Vec::with_capacity(model.njoints());
    for joint in 0..model.njoints() {
        let body = frames
            .iter()
            .enumerate()
            .skip(1)
            .find(|(f, frame)| !used[*f] && frame.parent_joint == joint && frame.kind == FrameKind::Body && frame.placement == Se3::identity());
        let name = match body {
            Some((f, frame)) => {
                used[f] = true;
                frame.name.clone()
            }
            None if joint == 0 => "root".to_string(),
            None => format!("{}_link", model.joint_names[joint]),
        };
        link_names.push(name);
    }
    for (f, frame) in frames.iter().enumerate() {
        if frame.kind == FrameKind::Joint || f == 0 {
            used[f] = true;
        }
    }

    let mut out = String::new();
    let _ = writeln!(out, "<?xml version=\"1.0\"?>\n<robot name=\"{}\">", xml_escape(model.name()));
    for (joint, link) in link_names.iter().enumerate() {
        write_link(&mut out, link, Some(&model.inertias[joint]));
    }
    for joint in 1..model.njoints() {
        let limits = &model.limits[model.idx_v[joint]];
        let unbounded = limits.lower == f64::NEG_INFINITY && limits.upper == f64::INFINITY;
        let kind = match (model.kinds[joint], unbounded) {
            (JointKind::Prismatic, _) => "prismatic",
            (JointKind::Revolute, true) => "continuous",
            (JointKind::Revolute, false) => "revolute",
        };
        let _ = writeln!(out, "  <joint name=\"{}\" type=\"{kind}\">", xml_escape(&model.joint_names[joint]));
        write_origin(&mut out, &model.joint_placements[joint]);
        let _ = writeln!(out, "    <parent link=\"{}\"/>", xml_escape(&link_names[model.parents[joint]]));
        let _ = writeln!(out, "    <child link=\"{}\"/>", xml_escape(&link_names[joint]));
        let axis = &model.axes[joint];
        let _ = writeln!(out, "    <axis xyz=\"{} {} {}\"/>", number(axis.x), number(axis.y), number(axis.z));
        let finite_or_max = |x: f64| if x.is_finite() { x } else { f64::MAX };
        let bounds = if unbounded { String::new() } else { format!("lower=\"{}\" upper=\"{}\" ", number(limits.lower.max(-f64::MAX)), number(limits.upper.min(f64::MAX))) };
        let _ = writeln!(out, "    <limit {bounds}effort=\"{}\" velocity=\"{}\"/>", number(finite_or_max(limits.effort)), number(finite_or_max(limits.velocity)));
        if let Some(m) = model.mimics[joint] {
            let _ = writeln!(out, "    <mimic joint=\"{}\" multiplier=\"{}\" offset=\"{}\"/>", xml_escape(&model.joint_names[m.master]), number(m.multiplier), number(m.offset));
        }
        let drive = &model.drives[model.idx_v[joint]];
        if model.mimics[joint].is_none() && (drive.viscous_friction != 0.0 || drive.coulomb_friction != 0.0) {
            let _ = writeln!(out, "    <dynamics damping=\"{}\" friction=\"{}\"/>", number(drive.viscous_friction), number(drive.coulomb_friction));
        }
        out.push_str("  </joint>\n");
    }
    for f in 0..frames.len() {
        if used[f] {
            continue;
        }
        used[f] = true;
        let frame = &frames[f];
        // A URDF fixed joint comes back as this frame followed by its child link's frame.
        let partner = frames
            .get(f + 1)
            .filter(|next| frame.kind == FrameKind::FixedJoint && !used[f + 1] && next.kind == FrameKind::Body && next.parent_joint == frame.parent_joint && next.placement == frame.placement);
        let (joint_name, link_name) = match (partner, frame.kind) {
            (Some(next), _) => {
                used[f + 1] = true;
                (frame.name.clone(), next.name.clone())
            }
            (None, FrameKind::FixedJoint) => (frame.name.clone(), format!("{}_link", frame.name)),
            (None, _) => (format!("{}_fixed", frame.name), frame.name.clone()),
        };
        write_link(&mut out, &link_name, None);
        let _ = writeln!(out, "  <joint name=\"{}\" type=\"fixed\">", xml_escape(&joint_name));
        write_origin(&mut out, &frame.placement);
        let _ = writeln!(out, "    <parent link=\"{}\"/>", xml_escape(&link_names[frame.parent_joint]));
        let _ = writeln!(out, "    <child link=\"{}\"/>\n  </joint>", xml_escape(&link_name));
    }
    out.push_str("</robot>\n");
    out
}

fn write_link(out: &mut String, name: &str, inertia: Option<&Inertia>) {
    let Some(inertia) = inertia.filter(|i| i.mass != 0.0 || i.rotational != Matrix3::zeros()) else {
        let _ = writeln!(out, "  <link name=\"{}\"/>", xml_escape(name));
        return;
    };
    let c = &inertia.com;
    let i = &inertia.rotational;
    let _ = writeln!(out, "  <link name=\"{}\">\n    <inertial>", xml_escape(name));
    let _ = writeln!(out, "      <origin xyz=\"{} {} {}\" rpy=\"0 0 0\"/>", number(c.x), number(c.y), number(c.z));
    let _ = writeln!(out, "      <mass value=\"{}\"/>", number(inertia.mass));
    let _ = writeln!(
        out,
        "      <inertia ixx=\"{}\" ixy=\"{}\" ixz=\"{}\" iyy=\"{}\" iyz=\"{}\" izz=\"{}\"/>",
        number(i[(0, 0)]),
        number(i[(0, 1)]),
        number(i[(0, 2)]),
        number(i[(1, 1)]),
        number(i[(1, 2)]),
        number(i[(2, 2)])
    );
    out.push_str("    </inertial>\n  </link>\n");
}

pub(crate) fn write_origin(out: &mut String, placement: &Se3) {
    let t = &placement.translation;
    let rpy = rpy_from_rotation(&placement.rotation);
    let _ = writeln!(out, "    <origin xyz=\"{} {} {}\" rpy=\"{} {} {}\"/>", number(t.x), number(t.y), number(t.z), number(rpy.x), number(rpy.y), number(rpy.z));
}

/// Shortest text that reads back to the same `f64`; exponent form for very large or small
/// magnitudes, which plain decimal would spell out in hundreds of digits.
pub(crate) fn number(x: f64) -> String {
    let magnitude = x.abs();
    if magnitude != 0.0 && !(1e-5..1e15).contains(&magnitude) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

pub(crate) fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(xml: &str) -> String {
        parse_urdf(xml, "test.urdf").map(|_| ()).unwrap_err().to_string()
    }

    const LINK: &str = r#"<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>"#;

    #[test]
    fn fixed_joints_merge_and_keep_frames() {
        let xml = format!(
            r#"<robot name="r"><link name="a"/><link name="b">{LINK}</link><link name="c">{LINK}</link>
            <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
              <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
            <joint name="f" type="fixed"><parent link="b"/><child link="c"/><origin xyz="1 0 0"/></joint></robot>"#
        );
        let model = parse_urdf(&xml, "t").unwrap();
        assert_eq!(model.nv(), 1);
        assert!((model.inertias()[1].mass - 2.0).abs() < 1e-15);
        assert!((model.inertias()[1].com.x - 0.5).abs() < 1e-15);
        let c = model.frame_index("c").unwrap();
        assert_eq!(model.frames()[c].parent_joint, 1);
        assert_eq!(model.frames()[c].placement.translation, Vector3::new(1.0, 0.0, 0.0));
    }

    #[test]
    fn mimic_joints_need_a_moving_master_before_them() {
        let arm = |mimic_of: &str, j2: &str| {
            format!(
                r#"<robot name="r"><link name="a"/><link name="b">{LINK}</link><link name="c">{LINK}</link>
                <joint name="j1" type="{j2}"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
                <joint name="j2" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
                  <mimic joint="{mimic_of}" multiplier="2" offset="0.5"/></joint></robot>"#
            )
        };
        let model = parse_urdf(&arm("j1", "revolute"), "t").unwrap();
        assert_eq!((model.nq(), model.nv(), model.njoints()), (1, 1, 3));
        assert_eq!(model.mimic(2), Some(crate::Mimic { master: 1, multiplier: 2.0, offset: 0.5 }));
        assert!(error_of(&arm("nope", "revolute")).contains("its master joint 'nope' is not defined"));
        assert!(error_of(&arm("j2", "revolute")).contains("a joint cannot mimic itself"));
        assert!(error_of(&arm("j1", "fixed")).contains("'j1' is a fixed joint (a master must move)"));
    }

    #[test]
    fn bad_input_gives_clear_errors() {
        let missing_parent = r#"<robot name="r"><link name="a"/>
            <joint name="j" type="fixed"><parent link="nope"/><child link="a"/></joint></robot>"#;
        let e = error_of(missing_parent);
        assert!(e.contains("test.urdf") && e.contains("<joint name=\"j\">") && e.contains("'nope'"), "{e}");

        let unknown = r#"<robot name="r"><link name="a"/><link name="b"/>
            <joint name="j" type="ball"><parent link="a"/><child link="b"/></joint></robot>"#;
        assert!(error_of(unknown).contains("unknown joint type 'ball'"));

        let negative = r#"<robot name="r"><link name="a"><inertial><mass value="-1"/>
            <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>"#;
        let e = error_of(negative);
        assert!(e.contains("<link name=\"a\">") && e.contains("mass"), "{e}");

        let cycle = r#"<robot name="r"><link name="root"/><link name="a"/><link name="b"/>
            <joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>
            <joint name="j2" type="fixed"><parent link="b"/><child link="a"/></joint></robot>"#;
        assert!(error_of(cycle).contains("cycle"));

        let two_parents = r#"<robot name="r"><link name="a"/><link name="b"/>
            <joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>
            <joint name="j2" type="fixed"><parent link="a"/><child link="b"/></joint></robot>"#;
        assert!(error_of(two_parents).contains("already the child of joint 'j1'"));

        assert!(error_of("<robot").contains("not well-formed XML"));
        let no_limit = r#"<robot name="r"><link name="a"/><link name="b"/>
            <joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint></robot>"#;
        assert!(error_of(no_limit).contains("needs a <limit>"));
    }
}

//! [`display_urdf`]: a URDF of a [`Model`] for viewers (Foxglove's 3D panel, RViz), whose links
//! are the model's frames one for one and carry simple shapes (no mesh files).
//!
//! [`to_urdf`](super::to_urdf) writes a model back out for other tools to compute with: it merges
//! frames into links as a URDF reader would split them again. A viewer needs something else: a
//! link for every frame the live view sends on `/tf` (named alike, so the shapes sit where the
//! transforms put them), and something to look at. Here every moving joint's own frame is the
//! link that joint moves, every other frame a link fixed to its joint's link at the frame's
//! placement, and each moving link is drawn as cylinders from its origin to its children's
//! origins plus a housing along its joint axis.

use std::collections::HashSet;
use std::fmt::Write as _;

use nalgebra::{Rotation3, Vector3};

use super::spatial::{rpy_from_rotation, Se3};
use super::urdf::{number, write_origin, xml_escape};
use super::{FrameKind, JointKind, Model};

/// The URDF a viewer draws the model with: links named as the model's frames (those the live
/// view's `/tf` carries), the model's joints with their origins, axes and limits, every other
/// frame on a fixed joint named `<frame>_fixed`, and cylinders between joint origins sized from
/// the robot's reach. A frame whose name an earlier frame has already taken is left out.
pub fn display_urdf(model: &Model) -> String {
    let frames = model.frames();
    let tree = LinkTree::new(model);
    let link_name = |j: usize| tree.links[tree.link_of_joint[j]].clone();
    let radius = link_radius(model);

    let mut out = String::new();
    let _ = writeln!(out, "<?xml version=\"1.0\"?>\n<robot name=\"{}\">", xml_escape(model.name()));
    out.push_str("  <material name=\"morc_link\"><color rgba=\"0.72 0.74 0.78 1\"/></material>\n");
    out.push_str("  <material name=\"morc_joint\"><color rgba=\"0.95 0.55 0.1 1\"/></material>\n");
    for j in 0..model.njoints() {
        let _ = writeln!(out, "  <link name=\"{}\">", xml_escape(&link_name(j)));
        // From the link's origin to each child joint's origin and to each operational frame on it.
        let children = (1..model.njoints()).filter(|&c| c != j && model.parent(c) == j).map(|c| model.joint_placements()[c].translation);
        let tools = frames.iter().filter(|f| f.parent_joint == j && f.kind == FrameKind::Operational).map(|f| f.placement.translation);
        for end in children.chain(tools) {
            write_cylinder(&mut out, &(end / 2.0), &end, radius, end.norm(), "morc_link");
        }
        if j > 0 {
            write_cylinder(&mut out, &Vector3::zeros(), &model.joint_axes()[j], 1.3 * radius, 2.6 * radius, "morc_joint");
        }
        out.push_str("  </link>\n");
    }
    for j in 1..model.njoints() {
        let limits = &model.limits()[model.idx_v(j)];
        let unbounded = limits.lower == f64::NEG_INFINITY && limits.upper == f64::INFINITY;
        let kind = match (model.joint_kinds()[j], unbounded) {
            (JointKind::Prismatic, _) => "prismatic",
            (JointKind::Revolute, true) => "continuous",
            (JointKind::Revolute, false) => "revolute",
        };
        let _ = writeln!(out, "  <joint name=\"{}\" type=\"{kind}\">", xml_escape(&model.joint_names()[j]));
        write_origin(&mut out, &model.joint_placements()[j]);
        let _ = writeln!(out, "    <parent link=\"{}\"/>\n    <child link=\"{}\"/>", xml_escape(&link_name(model.parent(j))), xml_escape(&link_name(j)));
        let axis = &model.joint_axes()[j];
        let _ = writeln!(out, "    <axis xyz=\"{} {} {}\"/>", number(axis.x), number(axis.y), number(axis.z));
        let finite_or_max = |x: f64| if x.is_finite() { x } else { f64::MAX };
        let bounds = if unbounded { String::new() } else { format!("lower=\"{}\" upper=\"{}\" ", number(limits.lower.max(-f64::MAX)), number(limits.upper.min(f64::MAX))) };
        let _ = writeln!(out, "    <limit {bounds}effort=\"{}\" velocity=\"{}\"/>", number(finite_or_max(limits.effort)), number(finite_or_max(limits.velocity)));
        if let Some(m) = model.mimic(j) {
            let _ = writeln!(out, "    <mimic joint=\"{}\" multiplier=\"{}\" offset=\"{}\"/>", xml_escape(&model.joint_names()[m.master]), number(m.multiplier), number(m.offset));
        }
        out.push_str("  </joint>\n");
    }
    for joint in &tree.joints {
        let TreeMotion::Fixed(placement) = joint.motion else { continue };
        let child = &tree.links[joint.child];
        let _ = writeln!(out, "  <link name=\"{}\"/>", xml_escape(child));
        let _ = writeln!(out, "  <joint name=\"{}\" type=\"fixed\">", xml_escape(&joint.name));
        write_origin(&mut out, &placement);
        let _ = writeln!(out, "    <parent link=\"{}\"/>\n    <child link=\"{}\"/>\n  </joint>", xml_escape(&tree.links[joint.parent]), xml_escape(child));
    }
    out.push_str("</robot>\n");
    out
}

/// The links' radius: 4 % of the robot's stretched-out length (joint offsets and tool frames),
/// between 5 mm and 12 cm — a KR 16 gets 10 cm, a UR5 about 6.
fn link_radius(model: &Model) -> f64 {
    let joints: f64 = model.joint_placements().iter().skip(1).map(|x| x.translation.norm()).sum();
    let tools: f64 = model.frames().iter().filter(|f| f.kind == FrameKind::Operational).map(|f| f.placement.translation.norm()).sum();
    (0.04 * (joints + tools)).clamp(0.005, 0.12)
}

/// A cylinder of `radius` and `length` centred at `centre`, its axis along `direction`
/// (skipped when too short to see).
fn write_cylinder(out: &mut String, centre: &Vector3<f64>, direction: &Vector3<f64>, radius: f64, length: f64, material: &str) {
    if length < 1e-4 || direction.norm() < 1e-12 {
        return;
    }
    // URDF cylinders lie along z; the antiparallel case has no unique shortest rotation.
    let rotation = Rotation3::rotation_between(&Vector3::z(), direction).unwrap_or_else(|| Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI));
    let rpy = rpy_from_rotation(rotation.matrix());
    let _ = writeln!(
        out,
        "    <visual>\n      <origin xyz=\"{} {} {}\" rpy=\"{} {} {}\"/>\n      <geometry><cylinder radius=\"{}\" length=\"{}\"/></geometry>\n      <material name=\"{material}\"/>\n    </visual>",
        number(centre.x),
        number(centre.y),
        number(centre.z),
        number(rpy.x),
        number(rpy.y),
        number(rpy.z),
        number(radius),
        number(length)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::rotation_from_rpy;
    use crate::{forward_kinematics_placements, frame_placement, parse_urdf, update_frame_placements, Data};
    use nalgebra::Matrix3;

    /// A URDF with a fixed flange and tool behind the last joint, and a prismatic joint.
    const ARM: &str = r#"<robot name="arm">
      <link name="base"/><link name="upper"/><link name="fore"/><link name="slide"/><link name="flange"/><link name="tcp"/>
      <joint name="j1" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.4" rpy="0 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="100" velocity="2"/></joint>
      <joint name="j2" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0.1 0 0.2" rpy="0.3 -0.2 0.1"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="100" velocity="2"/></joint>
      <joint name="j3" type="prismatic"><parent link="fore"/><child link="slide"/><origin xyz="0.5 0 0" rpy="0 0 0"/><axis xyz="1 0 0"/><limit lower="0" upper="0.3" effort="100" velocity="1"/></joint>
      <joint name="flange_joint" type="fixed"><parent link="slide"/><child link="flange"/><origin xyz="0 0 0.1" rpy="0 1.5707963 0"/></joint>
      <joint name="tcp_joint" type="fixed"><parent link="flange"/><child link="tcp"/><origin xyz="0 0 0.05" rpy="0 0 0"/></joint>
    </robot>"#;

    fn attr<'a>(node: roxmltree::Node<'a, '_>, child: &str, name: &str) -> Option<&'a str> {
        node.children().find(|c| c.has_tag_name(child)).and_then(|c| c.attribute(name))
    }

    fn floats(text: &str) -> Vec<f64> {
        text.split_whitespace().map(|x| x.parse().unwrap()).collect()
    }

    #[test]
    fn every_frame_is_a_link_where_the_kinematics_puts_it() {
        let model = parse_urdf(ARM, "arm.urdf").unwrap();
        let text = display_urdf(&model);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let links: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("link")).filter_map(|n| n.attribute("name")).collect();
        let names: HashSet<&str> = model.frames().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(links.iter().copied().collect::<HashSet<_>>(), names, "{text}");
        assert_eq!(links.len(), names.len(), "each frame once");

        // The URDF's own forward kinematics (origins, then the joint's motion) from the root
        // link gives every link the pose the model gives its frame.
        let q = [0.7, -0.4, 0.12];
        let mut data = Data::new(&model);
        forward_kinematics_placements(&model, &mut data, &q);
        update_frame_placements(&model, &mut data);
        let joints: Vec<roxmltree::Node> = doc.descendants().filter(|n| n.has_tag_name("joint")).collect();
        let mut pose = std::collections::HashMap::from([(model.frames()[0].name.clone(), Se3::identity())]);
        while pose.len() < links.len() {
            let before = pose.len();
            for j in &joints {
                let (parent, child) = (attr(*j, "parent", "link").unwrap(), attr(*j, "child", "link").unwrap());
                let Some(at) = pose.get(parent).cloned() else { continue };
                let xyz = floats(attr(*j, "origin", "xyz").unwrap());
                let rpy = floats(attr(*j, "origin", "rpy").unwrap());
                let origin = Se3::new(rotation_from_rpy(rpy[0], rpy[1], rpy[2]), Vector3::new(xyz[0], xyz[1], xyz[2]));
                let motion = match (j.attribute("type").unwrap(), model.joint_index(j.attribute("name").unwrap())) {
                    ("fixed", _) => Se3::identity(),
                    (kind, Some(index)) => {
                        let a = floats(attr(*j, "axis", "xyz").unwrap());
                        let axis = Vector3::new(a[0], a[1], a[2]);
                        let x = q[model.idx_v(index)];
                        if kind == "prismatic" {
                            Se3::from_translation(axis * x)
                        } else {
                            Se3::from_rotation(*Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), x).matrix())
                        }
                    }
                    (kind, None) => panic!("a {kind} joint that is not the model's"),
                };
                pose.insert(child.to_string(), at.compose(&origin).compose(&motion));
            }
            assert!(pose.len() > before, "links not reached from the root: {text}");
        }
        for (f, frame) in model.frames().iter().enumerate() {
            let want = frame_placement(&model, &data, f);
            let got = &pose[&frame.name];
            assert!((got.translation - want.translation).norm() < 1e-9, "{}: {} vs {}", frame.name, got.translation, want.translation);
            assert!((got.rotation - want.rotation).norm() < 1e-9, "{}", frame.name);
        }
        // Limits and kinds as the model has them; shapes to look at.
        assert!(text.contains(r#"<joint name="j3" type="prismatic">"#) && text.contains(r#"lower="0" upper="0.3""#), "{text}");
        assert!(text.matches("<cylinder").count() >= 5, "{text}");
    }

    #[test]
    fn the_link_tree_places_every_link_where_the_model_puts_its_frame() {
        let model = parse_urdf(ARM, "arm.urdf").unwrap();
        let tree = LinkTree::new(&model);
        let names: HashSet<&str> = model.frames().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(tree.links.iter().map(String::as_str).collect::<HashSet<_>>(), names);
        let q = [0.7, -0.4, 0.12];
        let mut data = Data::new(&model);
        forward_kinematics_placements(&model, &mut data, &q);
        // Composing each joint's placement from the root gives every link its frame's pose.
        let mut pose: Vec<Option<Se3>> = vec![None; tree.links.len()];
        pose[0] = Some(Se3::identity());
        for _ in 0..tree.joints.len() {
            for (k, j) in tree.joints.iter().enumerate() {
                if let Some(parent) = pose[j.parent] {
                    pose[j.child] = Some(parent.compose(&tree.placement(&data, k)));
                }
            }
        }
        for (f, frame) in model.frames().iter().enumerate() {
            let link = tree.links.iter().position(|l| l == &frame.name).unwrap();
            let (want, got) = (frame_placement(&model, &data, f), pose[link].unwrap());
            assert!((got.translation - want.translation).norm() < 1e-12 && (got.rotation - want.rotation).norm() < 1e-12, "{}", frame.name);
        }
        assert_eq!(tree.joints.iter().filter(|j| matches!(j.motion, TreeMotion::Joint(_))).count(), 3);
    }

    #[test]
    fn a_link_cylinder_runs_from_the_joint_to_the_next_one() {
        let model = parse_urdf(ARM, "arm.urdf").unwrap();
        let text = display_urdf(&model);
        let doc = roxmltree::Document::parse(&text).unwrap();
        // The link j2 moves ("j2" frame) reaches to j3's origin 0.5 m along its x.
        let link = doc.descendants().find(|n| n.has_tag_name("link") && n.attribute("name") == Some("j2")).unwrap();
        let visual = link.children().find(|c| c.has_tag_name("visual")).unwrap();
        let xyz = floats(attr(visual, "origin", "xyz").unwrap());
        let rpy = floats(attr(visual, "origin", "rpy").unwrap());
        let length: f64 = visual.descendants().find(|n| n.has_tag_name("cylinder")).unwrap().attribute("length").unwrap().parse().unwrap();
        assert!((length - 0.5).abs() < 1e-12 && (xyz[0] - 0.25).abs() < 1e-12, "{xyz:?} {length}");
        let z: Matrix3<f64> = rotation_from_rpy(rpy[0], rpy[1], rpy[2]);
        assert!((z.column(2) - Vector3::x()).norm() < 1e-12, "the cylinder's axis lies along the link: {rpy:?}");
    }
}

/// The robot as the links and joints of its [`display_urdf`], for what sends their transforms
/// (`/tf` and `/tf_static`, as ROS's robot_state_publisher does from a URDF).
#[derive(Clone, Debug)]
pub struct LinkTree {
    /// The links' names: each model joint's link first (the universe's is the root frame), then
    /// the fixed frames.
    pub links: Vec<String>,
    /// The link each model joint moves (the universe: the root link).
    pub link_of_joint: Vec<usize>,
    /// The URDF's joints: first the model's moving joints in model order, then the fixed ones.
    pub joints: Vec<TreeJoint>,
}

/// A joint of a [`LinkTree`]: `child` placed in `parent`.
#[derive(Clone, Debug)]
pub struct TreeJoint {
    /// The joint's name in the URDF.
    pub name: String,
    /// The parent link (an index into [`LinkTree::links`]).
    pub parent: usize,
    /// The child link.
    pub child: usize,
    /// How the child is placed in the parent.
    pub motion: TreeMotion,
}

/// How a [`TreeJoint`]'s child sits in its parent.
#[derive(Clone, Copy, Debug)]
pub enum TreeMotion {
    /// Moved by the model's joint of this index: the placement is `Data::local_placements[j]`.
    Joint(usize),
    /// Fixed at this placement.
    Fixed(Se3),
}

impl LinkTree {
    /// The links and joints [`display_urdf`] writes for `model`.
    pub fn new(model: &Model) -> LinkTree {
        let frames = model.frames();
        let mut taken: HashSet<&str> = HashSet::new();
        // The link of each joint: the root frame for the universe, else the joint's own frame.
        let mut frame_of: Vec<Option<usize>> = vec![None; model.njoints()];
        frame_of[0] = Some(0);
        taken.insert(frames[0].name.as_str());
        for (j, link) in frame_of.iter_mut().enumerate().skip(1) {
            *link = frames.iter().position(|f| f.kind == FrameKind::Joint && f.parent_joint == j && f.placement == Se3::identity() && !taken.contains(f.name.as_str()));
            if let Some(f) = *link {
                taken.insert(frames[f].name.as_str());
            }
        }
        // A joint without a frame of its own (not made by the model builders) gets a link named after it.
        let mut links: Vec<String> = (0..model.njoints()).map(|j| frame_of[j].map_or_else(|| format!("{}_link", model.joint_names()[j]), |f| frames[f].name.clone())).collect();
        let link_of_joint: Vec<usize> = (0..model.njoints()).collect();
        let mut joints: Vec<TreeJoint> = (1..model.njoints())
            .map(|j| TreeJoint { name: model.joint_names()[j].clone(), parent: model.parent(j), child: j, motion: TreeMotion::Joint(j) })
            .collect();
        for (f, frame) in frames.iter().enumerate() {
            if frame_of.contains(&Some(f)) || !taken.insert(frame.name.as_str()) {
                continue;
            }
            links.push(frame.name.clone());
            joints.push(TreeJoint {
                name: format!("{}_fixed", frame.name),
                parent: link_of_joint[frame.parent_joint],
                child: links.len() - 1,
                motion: TreeMotion::Fixed(frame.placement),
            });
        }
        LinkTree { links, link_of_joint, joints }
    }

    /// The child's placement in the parent of joint `k` of the tree, from the local placements
    /// in `data` (call a forward kinematics first).
    pub fn placement(&self, data: &super::Data, k: usize) -> Se3 {
        match self.joints[k].motion {
            TreeMotion::Joint(j) => data.local_placements[j],
            TreeMotion::Fixed(x) => x,
        }
    }
}

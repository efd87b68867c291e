//! The message types `ros.publish` and `ros.subscribe` speak, each as a row of words: the
//! message's fields, in order, are the component's ports, and a row holds their numbers (a real
//! and a vector's elements as f64 bits, an integer as its two's complement, a boolean as 0 or
//! 1). A row's size is fixed when the component is configured, so the real-time side only copies
//! words; the bridge's thread turns rows into messages and messages into rows.
//!
//! ```text
//! std_msgs/msg/Float64, Float32         data                      real
//! std_msgs/msg/Int32, Int64             data                      integer
//! std_msgs/msg/Bool                     data                      boolean
//! std_msgs/msg/Float64MultiArray        data                      vector[n]
//! geometry_msgs/msg/Pose(Stamped)       position [x y z] m, orientation [x y z w] (a unit quaternion)
//! geometry_msgs/msg/Twist(Stamped)      linear [x y z] m/s, angular [x y z] rad/s
//! geometry_msgs/msg/Wrench(Stamped)     force [x y z] N, torque [x y z] N·m
//! sensor_msgs/msg/JointState            position, velocity, effort: vector[n] (rad or m, rad/s or m/s, N·m or N)
//! trajectory_msgs/msg/JointTrajectory   positions, velocities: vector[n], time_from_start: real (s) — one point
//! ```
//!
//! A message whose arrays do not have the component's size (or that lacks one of its joints by
//! name) is not a row: the subscription counts it and drops it, never truncates or pads it.

use std::marker::PhantomData;

use morc_kernel::{PortInfo, Value, ValueType};
use morc_ros_msgs::builtin_interfaces::{Duration, Time};
use morc_ros_msgs::geometry_msgs::{Point, Pose, PoseStamped, Quaternion, Twist, TwistStamped, Vector3, Wrench, WrenchStamped};
use morc_ros_msgs::sensor_msgs::JointState;
use morc_ros_msgs::std_msgs::{Bool, Float32, Float64, Float64MultiArray, Header, Int32, Int64, MultiArrayDimension, MultiArrayLayout};
use morc_ros_msgs::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};
use morc_ros_msgs::RosMessage;
use ros2_client::{Node, QosProfile};

use super::publish::{OutletFeed, RowOutlet};
use super::subscribe::{InletFeed, RowInlet};
use crate::bridge::{Inlet, Outlet};

/// What a topic's rows need beyond their numbers, fixed at configure.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    /// The size of the message's arrays (joints, elements); 0 for types without arrays.
    pub n: usize,
    /// The joints' names (JointState, JointTrajectory): sent by a publisher; a subscriber picks
    /// its joints out of a message by them. Empty: by position.
    pub names: Vec<String>,
    /// The frame of a message with a header.
    pub frame_id: String,
}

/// Reads a row's words in field order.
pub struct Reader<'a> {
    words: &'a [u64],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `words` from the first.
    pub fn new(words: &'a [u64]) -> Reader<'a> {
        Reader { words, at: 0 }
    }

    fn word(&mut self) -> u64 {
        let w = self.words.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        w
    }

    /// A real.
    pub fn real(&mut self) -> f64 {
        f64::from_bits(self.word())
    }

    /// An integer.
    pub fn integer(&mut self) -> i64 {
        self.word() as i64
    }

    /// A boolean.
    pub fn boolean(&mut self) -> bool {
        self.word() != 0
    }

    /// `n` reals.
    pub fn reals(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.real()).collect()
    }

    /// A 3-vector.
    pub fn vector3(&mut self) -> Vector3 {
        Vector3 { x: self.real(), y: self.real(), z: self.real() }
    }

    /// A point.
    pub fn point(&mut self) -> Point {
        Point { x: self.real(), y: self.real(), z: self.real() }
    }

    /// A quaternion, x y z w.
    pub fn quaternion(&mut self) -> Quaternion {
        Quaternion { x: self.real(), y: self.real(), z: self.real(), w: self.real() }
    }
}

/// Writes a row's words in field order.
pub struct Writer<'a> {
    words: &'a mut [u64],
    at: usize,
}

impl<'a> Writer<'a> {
    /// A writer of `words` from the first.
    pub fn new(words: &'a mut [u64]) -> Writer<'a> {
        Writer { words, at: 0 }
    }

    fn word(&mut self, w: u64) {
        if let Some(cell) = self.words.get_mut(self.at) {
            *cell = w;
        }
        self.at += 1;
    }

    /// A real.
    pub fn real(&mut self, x: f64) {
        self.word(x.to_bits());
    }

    /// An integer.
    pub fn integer(&mut self, i: i64) {
        self.word(i as u64);
    }

    /// A boolean.
    pub fn boolean(&mut self, b: bool) {
        self.word(u64::from(b));
    }

    /// Reals.
    pub fn reals(&mut self, xs: impl IntoIterator<Item = f64>) {
        for x in xs {
            self.real(x);
        }
    }

    /// A 3-vector.
    pub fn vector3(&mut self, v: &Vector3) {
        self.reals([v.x, v.y, v.z]);
    }

    /// A point.
    pub fn point(&mut self, p: &Point) {
        self.reals([p.x, p.y, p.z]);
    }

    /// A quaternion, x y z w.
    pub fn quaternion(&mut self, q: &Quaternion) {
        self.reals([q.x, q.y, q.z, q.w]);
    }
}

/// Words in a row of `ports`: one per real, integer or boolean, n per vector of n.
pub fn width(ports: &[PortInfo]) -> usize {
    ports
        .iter()
        .map(|p| match p.ty {
            ValueType::Vector(n) => n,
            ValueType::String => 0,
            _ => 1,
        })
        .sum()
}

/// Copies port values into a row's words (the real-time side: no allocation).
pub fn values_to_words(values: &[Value], words: &mut [u64]) {
    let mut w = Writer::new(words);
    for v in values {
        match v {
            Value::Real(x) => w.real(*x),
            Value::Integer(i) => w.integer(*i),
            Value::Boolean(b) => w.boolean(*b),
            Value::Vector(xs) => w.reals(xs.iter().copied()),
            Value::String(_) => {}
            Value::List(_) | Value::Record(_) => unreachable!("no message port is a list or record"),
        }
    }
}

/// Copies a row's words into port values of the row's types (the real-time side: no allocation).
pub fn words_to_values(words: &[u64], values: &mut [Value]) {
    let mut r = Reader::new(words);
    for v in values {
        match v {
            Value::Real(x) => *x = r.real(),
            Value::Integer(i) => *i = r.integer(),
            Value::Boolean(b) => *b = r.boolean(),
            Value::Vector(xs) => xs.iter_mut().for_each(|x| *x = r.real()),
            Value::String(_) => {}
            Value::List(_) | Value::Record(_) => unreachable!("no message port is a list or record"),
        }
    }
}

/// A message type as rows: its ports, and the conversions both ways (on the bridge's thread).
pub trait RowMessage: RosMessage + Send + 'static {
    /// Whether the type has arrays, sized by [`Meta::n`].
    const SIZED: bool = false;
    /// Whether the type names joints ([`Meta::names`]).
    const JOINTS: bool = false;
    /// The ports, in row order.
    fn ports(meta: &Meta) -> Vec<PortInfo>;
    /// The message of a row, stamped `stamp` where it has a header.
    fn encode(row: &mut Reader, stamp: Time, meta: &Meta) -> Self;
    /// The row of a message; an error says why it does not fit (dropped and counted).
    fn decode(&self, row: &mut Writer, meta: &Meta) -> Result<(), String>;
}

fn header(stamp: Time, meta: &Meta) -> Header {
    Header { stamp, frame_id: meta.frame_id.clone() }
}

fn real(name: &str, doc: &str) -> PortInfo {
    PortInfo::new(name, ValueType::Real).doc(doc)
}

fn vector3(name: &str, unit: &str, doc: &str) -> PortInfo {
    PortInfo::new(name, ValueType::Vector(3)).unit(unit).elements(&["x", "y", "z"]).doc(doc)
}

fn quaternion(name: &str, doc: &str) -> PortInfo {
    // Unconnected, a publisher sends the identity rather than the invalid zero quaternion.
    PortInfo::new(name, ValueType::Vector(4)).elements(&["x", "y", "z", "w"]).doc(doc).start(Value::Vector(vec![0.0, 0.0, 0.0, 1.0]))
}

fn joints(name: &str, meta: &Meta, doc: &str) -> PortInfo {
    let p = PortInfo::new(name, ValueType::Vector(meta.n)).doc(doc);
    if meta.names.len() == meta.n {
        p.elements(&meta.names)
    } else {
        p
    }
}

macro_rules! scalar {
    ($ty:ty, $port:expr, $read:ident, $write:ident, $to:expr, $from:expr) => {
        impl RowMessage for $ty {
            fn ports(_: &Meta) -> Vec<PortInfo> {
                vec![$port]
            }
            fn encode(row: &mut Reader, _: Time, _: &Meta) -> Self {
                let to = $to;
                Self { data: to(row.$read()) }
            }
            fn decode(&self, row: &mut Writer, _: &Meta) -> Result<(), String> {
                let from = $from;
                row.$write(from(self.data));
                Ok(())
            }
        }
    };
}

scalar!(Float64, real("data", "the value"), real, real, |x: f64| x, |x: f64| x);
scalar!(Float32, real("data", "the value (sent as a 32-bit float)"), real, real, |x: f64| x as f32, f64::from);
scalar!(Int64, PortInfo::new("data", ValueType::Integer).doc("the value"), integer, integer, |i: i64| i, |i: i64| i);
// A value outside int32's range is sent saturated, never wrapped.
scalar!(
    Int32,
    PortInfo::new("data", ValueType::Integer).doc("the value (int32: saturated to its range when sent)"),
    integer,
    integer,
    |i: i64| i.clamp(i32::MIN.into(), i32::MAX.into()) as i32,
    i64::from
);
scalar!(Bool, PortInfo::new("data", ValueType::Boolean).doc("the value"), boolean, boolean, |b: bool| b, |b: bool| b);

/// An array of the component's size, or why not.
fn sized<'a>(what: &str, xs: &'a [f64], n: usize) -> Result<&'a [f64], String> {
    if xs.len() == n {
        Ok(xs)
    } else {
        Err(format!("{what} has {} elements, {n} expected", xs.len()))
    }
}

impl RowMessage for Float64MultiArray {
    const SIZED: bool = true;
    fn ports(meta: &Meta) -> Vec<PortInfo> {
        vec![PortInfo::new("data", ValueType::Vector(meta.n)).doc("the values (one dimension, no offset)")]
    }
    fn encode(row: &mut Reader, _: Time, meta: &Meta) -> Self {
        let dim = vec![MultiArrayDimension { label: String::new(), size: meta.n as u32, stride: meta.n as u32 }];
        Float64MultiArray { layout: MultiArrayLayout { dim, data_offset: 0 }, data: row.reals(meta.n) }
    }
    fn decode(&self, row: &mut Writer, meta: &Meta) -> Result<(), String> {
        let start = self.layout.data_offset as usize;
        let data = self.data.get(start..).ok_or_else(|| format!("data_offset {start} is past its {} values", self.data.len()))?;
        row.reals(sized("data", data, meta.n)?.iter().copied());
        Ok(())
    }
}

fn pose_ports() -> Vec<PortInfo> {
    vec![vector3("position", "m", "the position x y z"), quaternion("orientation", "the orientation as a unit quaternion x y z w (w last, as ROS 2 has it)")]
}

fn encode_pose(row: &mut Reader) -> Pose {
    Pose { position: row.point(), orientation: row.quaternion() }
}

fn decode_pose(p: &Pose, row: &mut Writer) {
    row.point(&p.position);
    row.quaternion(&p.orientation);
}

impl RowMessage for Pose {
    fn ports(_: &Meta) -> Vec<PortInfo> {
        pose_ports()
    }
    fn encode(row: &mut Reader, _: Time, _: &Meta) -> Self {
        encode_pose(row)
    }
    fn decode(&self, row: &mut Writer, _: &Meta) -> Result<(), String> {
        decode_pose(self, row);
        Ok(())
    }
}

impl RowMessage for PoseStamped {
    fn ports(_: &Meta) -> Vec<PortInfo> {
        pose_ports()
    }
    fn encode(row: &mut Reader, stamp: Time, meta: &Meta) -> Self {
        PoseStamped { header: header(stamp, meta), pose: encode_pose(row) }
    }
    fn decode(&self, row: &mut Writer, _: &Meta) -> Result<(), String> {
        decode_pose(&self.pose, row);
        Ok(())
    }
}

fn twist_ports() -> Vec<PortInfo> {
    vec![vector3("linear", "m/s", "the linear velocity x y z"), vector3("angular", "rad/s", "the angular velocity x y z")]
}

impl RowMessage for Twist {
    fn ports(_: &Meta) -> Vec<PortInfo> {
        twist_ports()
    }
    fn encode(row: &mut Reader, _: Time, _: &Meta) -> Self {
        Twist { linear: row.vector3(), angular: row.vector3() }
    }
    fn decode(&self, row: &mut Writer, _: &Meta) -> Result<(), String> {
        row.vector3(&self.linear);
        row.vector3(&self.angular);
        Ok(())
    }
}

impl RowMessage for TwistStamped {
    fn ports(_: &Meta) -> Vec<PortInfo> {
        twist_ports()
    }
    fn encode(row: &mut Reader, stamp: Time, meta: &Meta) -> Self {
        TwistStamped { header: header(stamp, meta), twist: Twist::encode(row, stamp, meta) }
    }
    fn decode(&self, row: &mut Writer, meta: &Meta) -> Result<(), String> {
        self.twist.decode(row, meta)
    }
}

fn wrench_ports() -> Vec<PortInfo> {
    vec![vector3("force", "N", "the force x y z"), vector3("torque", "N·m", "the torque x y z")]
}

impl RowMessage for Wrench {
    fn ports(_: &Meta) -> Vec<PortInfo> {
        wrench_ports()
    }
    fn encode(row: &mut Reader, _: Time, _: &Meta) -> Self {
        Wrench { force: row.vector3(), torque: row.vector3() }
    }
    fn decode(&self, row: &mut Writer, _: &Meta) -> Result<(), String> {
        row.vector3(&self.force);
        row.vector3(&self.torque);
        Ok(())
    }
}

impl RowMessage for WrenchStamped {
    fn ports(_: &Meta) -> Vec<PortInfo> {
        wrench_ports()
    }
    fn encode(row: &mut Reader, stamp: Time, meta: &Meta) -> Self {
        WrenchStamped { header: header(stamp, meta), wrench: Wrench::encode(row, stamp, meta) }
    }
    fn decode(&self, row: &mut Writer, meta: &Meta) -> Result<(), String> {
        self.wrench.decode(row, meta)
    }
}

/// Where each of the component's joints is in a message that names `given` (None: by position,
/// when the message or the component names none), or why the message does not fit.
fn joint_order(given: &[String], meta: &Meta) -> Result<Option<Vec<usize>>, String> {
    if given.is_empty() || meta.names.is_empty() {
        return Ok(None);
    }
    meta.names
        .iter()
        .map(|name| given.iter().position(|g| g == name).ok_or_else(|| format!("it names no joint '{name}' (it names {})", given.join(", "))))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The component's joints' values out of an array of a message: picked by `order`, else by
/// position; an empty array gives zeros (JointState and trajectory points may leave one empty).
fn pick(what: &str, xs: &[f64], order: &Option<Vec<usize>>, count: usize, row: &mut Writer, meta: &Meta) -> Result<(), String> {
    if xs.is_empty() {
        row.reals(std::iter::repeat_n(0.0, meta.n));
        return Ok(());
    }
    match order {
        Some(order) if xs.len() == count => {
            row.reals(order.iter().map(|&k| xs[k]));
            Ok(())
        }
        Some(_) => Err(format!("{what} has {} elements for {count} joint names", xs.len())),
        None => {
            row.reals(sized(what, xs, meta.n)?.iter().copied());
            Ok(())
        }
    }
}

impl RowMessage for JointState {
    const SIZED: bool = true;
    const JOINTS: bool = true;
    fn ports(meta: &Meta) -> Vec<PortInfo> {
        vec![
            joints("position", meta, "joint positions (rad, or m for a prismatic joint)"),
            joints("velocity", meta, "joint velocities (rad/s or m/s)"),
            joints("effort", meta, "joint efforts (N·m or N)"),
        ]
    }
    fn encode(row: &mut Reader, stamp: Time, meta: &Meta) -> Self {
        JointState { header: header(stamp, meta), name: meta.names.clone(), position: row.reals(meta.n), velocity: row.reals(meta.n), effort: row.reals(meta.n) }
    }
    fn decode(&self, row: &mut Writer, meta: &Meta) -> Result<(), String> {
        let order = joint_order(&self.name, meta)?;
        let count = if order.is_some() { self.name.len() } else { meta.n };
        pick("position", &self.position, &order, count, row, meta)?;
        pick("velocity", &self.velocity, &order, count, row, meta)?;
        pick("effort", &self.effort, &order, count, row, meta)
    }
}

impl RowMessage for JointTrajectory {
    const SIZED: bool = true;
    const JOINTS: bool = true;
    fn ports(meta: &Meta) -> Vec<PortInfo> {
        vec![
            joints("positions", meta, "the first point's joint positions (rad or m)"),
            joints("velocities", meta, "the first point's joint velocities (rad/s or m/s; zeros when the point gives none)"),
            real("time_from_start", "when the first point is to be reached, from the trajectory's start").unit("s"),
        ]
    }
    fn encode(row: &mut Reader, stamp: Time, meta: &Meta) -> Self {
        let point = JointTrajectoryPoint { positions: row.reals(meta.n), velocities: row.reals(meta.n), time_from_start: Duration::from_secs_f64(row.real()), ..Default::default() };
        JointTrajectory { header: header(stamp, meta), joint_names: meta.names.clone(), points: vec![point] }
    }
    fn decode(&self, row: &mut Writer, meta: &Meta) -> Result<(), String> {
        let point = self.points.first().ok_or("it has no point")?;
        let order = joint_order(&self.joint_names, meta)?;
        let count = if order.is_some() { self.joint_names.len() } else { meta.n };
        if point.positions.is_empty() {
            return Err("its first point has no positions".into());
        }
        pick("positions", &point.positions, &order, count, row, meta)?;
        pick("velocities", &point.velocities, &order, count, row, meta)?;
        row.real(point.time_from_start.as_secs_f64());
        Ok(())
    }
}

/// A message type as `ros.publish` and `ros.subscribe` use it, whatever its Rust type.
pub trait MessageType: Sync {
    /// Its ROS 2 name, `package/msg/Type`.
    fn name(&self) -> &'static str;
    /// Whether it has arrays, sized at configure.
    fn sized(&self) -> bool;
    /// Whether it names joints.
    fn joints(&self) -> bool;
    /// Its ports, in row order.
    fn ports(&self, meta: &Meta) -> Vec<PortInfo>;
    /// A publisher on the bridge's node and the outlet that feeds it rows.
    fn outlet(&self, node: &mut Node, topic: &str, qos: QosProfile, feed: OutletFeed) -> Result<Box<dyn Outlet>, String>;
    /// A subscription on the bridge's node and the inlet that hands its messages on as rows.
    fn inlet(&self, node: &mut Node, topic: &str, qos: QosProfile, feed: InletFeed) -> Result<Box<dyn Inlet>, String>;
}

struct Of<M>(PhantomData<fn() -> M>);

impl<M: RowMessage> MessageType for Of<M> {
    fn name(&self) -> &'static str {
        M::TYPE_NAME
    }
    fn sized(&self) -> bool {
        M::SIZED
    }
    fn joints(&self) -> bool {
        M::JOINTS
    }
    fn ports(&self, meta: &Meta) -> Vec<PortInfo> {
        M::ports(meta)
    }
    fn outlet(&self, node: &mut Node, topic: &str, qos: QosProfile, feed: OutletFeed) -> Result<Box<dyn Outlet>, String> {
        Ok(Box::new(RowOutlet::<M>::new(crate::publisher::<M>(node, topic, qos)?, feed)))
    }
    fn inlet(&self, node: &mut Node, topic: &str, qos: QosProfile, feed: InletFeed) -> Result<Box<dyn Inlet>, String> {
        Ok(Box::new(RowInlet::<M>::new(crate::subscription::<M>(node, topic, qos)?, feed)))
    }
}

macro_rules! types {
    ($($ty:ty),* $(,)?) => { &[$(&Of::<$ty>(PhantomData)),*] };
}

/// Every type the components speak.
pub static TYPES: &[&dyn MessageType] = types![Float64, Float32, Int32, Int64, Bool, Float64MultiArray, Pose, PoseStamped, Twist, TwistStamped, Wrench, WrenchStamped, JointState, JointTrajectory,];

/// The names of the message types the components speak, `package/msg/Type`.
pub fn type_names() -> Vec<&'static str> {
    TYPES.iter().map(|t| t.name()).collect()
}

/// The type named `name` (`package/msg/Type`), or an error listing the known ones.
pub fn find(name: &str) -> Result<&'static dyn MessageType, String> {
    TYPES.iter().copied().find(|t| t.name() == name).ok_or_else(|| morc_kernel::names::unknown("message type", name, "for a ROS 2 topic", &type_names()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_of<M: RowMessage>(m: &M, meta: &Meta) -> Result<Vec<u64>, String> {
        let mut words = vec![0; width(&M::ports(meta))];
        m.decode(&mut Writer::new(&mut words), meta)?;
        Ok(words)
    }

    fn message_of<M: RowMessage>(words: &[u64], meta: &Meta) -> M {
        M::encode(&mut Reader::new(words), Time { sec: 3, nanosec: 4 }, meta)
    }

    fn reals(words: &[u64]) -> Vec<f64> {
        words.iter().map(|w| f64::from_bits(*w)).collect()
    }

    #[test]
    fn every_type_goes_to_a_row_and_back() {
        let meta = Meta { n: 2, names: vec!["a".into(), "b".into()], frame_id: "tool0".into() };
        let w = WrenchStamped {
            header: Header { stamp: Time { sec: 3, nanosec: 4 }, frame_id: "tool0".into() },
            wrench: Wrench { force: Vector3 { x: 1.0, y: 2.0, z: 3.0 }, torque: Vector3 { x: 4.0, y: 5.0, z: 6.0 } },
        };
        let row = row_of(&w, &meta).unwrap();
        assert_eq!(reals(&row), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(message_of::<WrenchStamped>(&row, &meta), w);
        let p = Pose { position: Point { x: 1.0, y: 2.0, z: 3.0 }, orientation: Quaternion { x: 0.0, y: 0.0, z: 0.6, w: 0.8 } };
        assert_eq!(reals(&row_of(&p, &meta).unwrap()), [1.0, 2.0, 3.0, 0.0, 0.0, 0.6, 0.8]);
        assert_eq!(message_of::<Pose>(&row_of(&p, &meta).unwrap(), &meta), p);
        let i = Int64 { data: i64::MAX - 1 };
        assert_eq!(message_of::<Int64>(&row_of(&i, &meta).unwrap(), &meta), i, "integers cross whole");
        assert_eq!(message_of::<Int32>(&[(-1i64 << 40) as u64], &meta).data, i32::MIN);
        assert!(message_of::<Bool>(&row_of(&Bool { data: true }, &meta).unwrap(), &meta).data);
        let js = JointState { header: w.header.clone(), name: meta.names.clone(), position: vec![0.1, 0.2], velocity: vec![1.0, 2.0], effort: vec![] };
        let row = row_of(&js, &meta).unwrap();
        assert_eq!(reals(&row), [0.1, 0.2, 1.0, 2.0, 0.0, 0.0], "an empty effort reads as zeros");
        assert_eq!(message_of::<JointState>(&row, &meta).position, js.position);
        let traj: JointTrajectory = message_of(&[0.5f64.to_bits(), 0.6f64.to_bits(), 0, 0, 1.5f64.to_bits()], &meta);
        assert_eq!((traj.joint_names.len(), traj.points.len(), traj.points[0].time_from_start.as_secs_f64()), (2, 1, 1.5));
        assert_eq!(reals(&row_of(&traj, &meta).unwrap()), [0.5, 0.6, 0.0, 0.0, 1.5]);
    }

    #[test]
    fn a_message_of_another_size_is_refused_not_cut() {
        let meta = Meta { n: 3, ..Default::default() };
        let m = Float64MultiArray { data: vec![1.0, 2.0], ..Default::default() };
        assert_eq!(row_of(&m, &meta).unwrap_err(), "data has 2 elements, 3 expected");
        let js = JointState { position: vec![1.0, 2.0, 3.0, 4.0], ..Default::default() };
        assert!(row_of(&js, &meta).unwrap_err().contains("4 elements, 3 expected"));
        assert!(row_of(&JointTrajectory::default(), &meta).unwrap_err().contains("no point"));
    }

    #[test]
    fn joints_are_picked_by_name() {
        let meta = Meta { n: 2, names: vec!["b".into(), "a".into()], frame_id: String::new() };
        let js = JointState { name: vec!["a".into(), "b".into(), "c".into()], position: vec![1.0, 2.0, 3.0], ..Default::default() };
        assert_eq!(reals(&row_of(&js, &meta).unwrap())[..2], [2.0, 1.0]);
        let missing = JointState { name: vec!["a".into()], position: vec![1.0], ..Default::default() };
        assert!(row_of(&missing, &meta).unwrap_err().contains("no joint 'b'"));
        let short = JointState { name: js.name.clone(), position: vec![1.0], ..Default::default() };
        assert!(row_of(&short, &meta).unwrap_err().contains("1 elements for 3 joint names"));
    }

    #[test]
    fn words_cross_to_values_and_back() {
        let mut values = vec![Value::Real(1.5), Value::Integer(-7), Value::Boolean(true), Value::Vector(vec![1.0, 2.0])];
        let mut words = vec![0; 5];
        values_to_words(&values, &mut words);
        let before = values.clone();
        for v in values.iter_mut() {
            *v = Value::zero(v.ty());
        }
        words_to_values(&words, &mut values);
        assert_eq!(values, before);
    }

    #[test]
    fn types_are_known_by_their_ros_names() {
        assert!(find("geometry_msgs/msg/Twist").is_ok());
        let e = find("geometry_msgs/msg/Twst").err().unwrap();
        assert!(e.contains("did you mean 'geometry_msgs/msg/Twist'"), "{e}");
        let e = find("nav_msgs/msg/Odometry").err().unwrap();
        assert!(e.contains("known:") && e.contains("sensor_msgs/msg/JointState"), "{e}");
        for t in TYPES {
            assert!(morc_ros_msgs::definition(t.name()).is_some(), "{} has no .msg definition", t.name());
        }
    }
}

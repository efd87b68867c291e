//! The ROS 2 message types morc speaks, as ROS 2 defines them: serde types whose fields are
//! the messages' fields in order (so CDR, ROS 2's wire encoding, is the serde encoding), their
//! `.msg` definitions (the `ros2msg` schemas of MCAP recordings) and the CDR encoding with its
//! encapsulation header.
//!
//! Both ROS 2 paths use these: the participant (`morc-ros`, through ros2-client) and the MCAP
//! recordings (`morc-record`), so a message written to a file is the message sent on a topic.

#![warn(missing_docs)]

use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// `builtin_interfaces`: time and duration.
pub mod builtin_interfaces {
    use super::*;

    /// `builtin_interfaces/msg/Time`: seconds and nanoseconds since the Unix epoch (UTC).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Time {
        /// Whole seconds.
        pub sec: i32,
        /// Nanoseconds, 0 to 999 999 999.
        pub nanosec: u32,
    }

    impl Time {
        /// The time `ns` nanoseconds after the Unix epoch.
        pub fn from_nanos(ns: u64) -> Time {
            Time { sec: (ns / 1_000_000_000) as i32, nanosec: (ns % 1_000_000_000) as u32 }
        }

        /// Nanoseconds since the Unix epoch (0 for times before it).
        pub fn as_nanos(&self) -> u64 {
            (self.sec.max(0) as u64) * 1_000_000_000 + self.nanosec as u64
        }
    }

    /// `builtin_interfaces/msg/Duration`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Duration {
        /// Whole seconds (negative for a negative duration).
        pub sec: i32,
        /// Nanoseconds added to `sec`, 0 to 999 999 999.
        pub nanosec: u32,
    }

    impl Duration {
        /// A duration of `s` seconds.
        pub fn from_secs_f64(s: f64) -> Duration {
            let sec = s.floor();
            let nanosec = ((s - sec) * 1e9).round().min(999_999_999.0) as u32;
            Duration { sec: sec as i32, nanosec }
        }

        /// The duration in seconds.
        pub fn as_secs_f64(&self) -> f64 {
            self.sec as f64 + self.nanosec as f64 * 1e-9
        }
    }
}

/// `std_msgs`: headers, strings, scalars and arrays.
pub mod std_msgs {
    use super::builtin_interfaces::Time;
    use super::*;

    /// `std_msgs/msg/Header`: when and in which frame.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Header {
        /// When the data was measured (UTC).
        pub stamp: Time,
        /// The frame the data is in.
        pub frame_id: std::string::String,
    }

    /// `std_msgs/msg/String`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct String {
        /// The text.
        pub data: std::string::String,
    }

    /// `std_msgs/msg/Float64`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Float64 {
        /// The value.
        pub data: f64,
    }

    /// `std_msgs/msg/Float32`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Float32 {
        /// The value.
        pub data: f32,
    }

    /// `std_msgs/msg/Int64`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Int64 {
        /// The value.
        pub data: i64,
    }

    /// `std_msgs/msg/Int32`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Int32 {
        /// The value.
        pub data: i32,
    }

    /// `std_msgs/msg/Bool`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Bool {
        /// The value.
        pub data: bool,
    }

    /// `std_msgs/msg/MultiArrayDimension`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct MultiArrayDimension {
        /// The dimension's name.
        pub label: std::string::String,
        /// Its size.
        pub size: u32,
        /// Its stride.
        pub stride: u32,
    }

    /// `std_msgs/msg/MultiArrayLayout`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct MultiArrayLayout {
        /// The dimensions (none for a plain vector).
        pub dim: Vec<MultiArrayDimension>,
        /// Where the data starts.
        pub data_offset: u32,
    }

    /// `std_msgs/msg/Float64MultiArray`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Float64MultiArray {
        /// The layout of `data`.
        pub layout: MultiArrayLayout,
        /// The values.
        pub data: Vec<f64>,
    }
}

/// `geometry_msgs`: vectors, rotations, poses, twists and wrenches.
pub mod geometry_msgs {
    use super::std_msgs::Header;
    use super::*;

    /// `geometry_msgs/msg/Vector3`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Vector3 {
        /// x.
        pub x: f64,
        /// y.
        pub y: f64,
        /// z.
        pub z: f64,
    }

    /// `geometry_msgs/msg/Point`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Point {
        /// x.
        pub x: f64,
        /// y.
        pub y: f64,
        /// z.
        pub z: f64,
    }

    /// `geometry_msgs/msg/Quaternion` (x, y, z, w; the identity is w = 1).
    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    pub struct Quaternion {
        /// x.
        pub x: f64,
        /// y.
        pub y: f64,
        /// z.
        pub z: f64,
        /// w.
        pub w: f64,
    }

    impl Default for Quaternion {
        fn default() -> Self {
            Quaternion { x: 0.0, y: 0.0, z: 0.0, w: 1.0 }
        }
    }

    /// `geometry_msgs/msg/Transform`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Transform {
        /// Translation.
        pub translation: Vector3,
        /// Rotation.
        pub rotation: Quaternion,
    }

    /// `geometry_msgs/msg/TransformStamped`: the pose of `child_frame_id` in `header.frame_id`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct TransformStamped {
        /// When, and the parent frame.
        pub header: Header,
        /// The child frame.
        pub child_frame_id: String,
        /// The child's pose in the parent.
        pub transform: Transform,
    }

    /// `geometry_msgs/msg/Pose`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Pose {
        /// Position.
        pub position: Point,
        /// Orientation.
        pub orientation: Quaternion,
    }

    /// `geometry_msgs/msg/PoseStamped`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct PoseStamped {
        /// When, and the frame.
        pub header: Header,
        /// The pose.
        pub pose: Pose,
    }

    /// `geometry_msgs/msg/Twist`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Twist {
        /// Linear velocity.
        pub linear: Vector3,
        /// Angular velocity.
        pub angular: Vector3,
    }

    /// `geometry_msgs/msg/TwistStamped`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct TwistStamped {
        /// When, and the frame.
        pub header: Header,
        /// The twist.
        pub twist: Twist,
    }

    /// `geometry_msgs/msg/Wrench`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct Wrench {
        /// Force.
        pub force: Vector3,
        /// Torque.
        pub torque: Vector3,
    }

    /// `geometry_msgs/msg/WrenchStamped`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct WrenchStamped {
        /// When, and the frame.
        pub header: Header,
        /// The wrench.
        pub wrench: Wrench,
    }
}

/// `sensor_msgs`: joint states.
pub mod sensor_msgs {
    use super::std_msgs::Header;
    use super::*;

    /// `sensor_msgs/msg/JointState`: per named joint, position (rad or m), velocity (rad/s or
    /// m/s) and effort (N·m or N); a list may be empty.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct JointState {
        /// When.
        pub header: Header,
        /// The joints' names.
        pub name: Vec<String>,
        /// Positions.
        pub position: Vec<f64>,
        /// Velocities.
        pub velocity: Vec<f64>,
        /// Efforts.
        pub effort: Vec<f64>,
    }
}

/// `tf2_msgs`: the transform tree.
pub mod tf2_msgs {
    use super::geometry_msgs::TransformStamped;
    use super::*;

    /// `tf2_msgs/msg/TFMessage`: transforms of the tree, each child in its parent.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct TFMessage {
        /// The transforms.
        pub transforms: Vec<TransformStamped>,
    }
}

/// `trajectory_msgs`: joint trajectories.
pub mod trajectory_msgs {
    use super::builtin_interfaces::Duration;
    use super::std_msgs::Header;
    use super::*;

    /// `trajectory_msgs/msg/JointTrajectoryPoint`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct JointTrajectoryPoint {
        /// Positions, one per joint.
        pub positions: Vec<f64>,
        /// Velocities (empty or one per joint).
        pub velocities: Vec<f64>,
        /// Accelerations (empty or one per joint).
        pub accelerations: Vec<f64>,
        /// Efforts (empty or one per joint).
        pub effort: Vec<f64>,
        /// When the point is reached, from the trajectory's start.
        pub time_from_start: Duration,
    }

    /// `trajectory_msgs/msg/JointTrajectory`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct JointTrajectory {
        /// When to start (zero: now).
        pub header: Header,
        /// The joints the points give, in their order.
        pub joint_names: Vec<String>,
        /// The points, in time order.
        pub points: Vec<JointTrajectoryPoint>,
    }

    /// `trajectory_msgs/msg/MultiDOFJointTrajectoryPoint`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct MultiDOFJointTrajectoryPoint {
        /// Each joint's transform.
        pub transforms: Vec<super::geometry_msgs::Transform>,
        /// Each joint's velocity.
        pub velocities: Vec<super::geometry_msgs::Twist>,
        /// Each joint's acceleration.
        pub accelerations: Vec<super::geometry_msgs::Twist>,
        /// When the point is reached, from the trajectory's start.
        pub time_from_start: Duration,
    }

    /// `trajectory_msgs/msg/MultiDOFJointTrajectory`: floating and planar joints' trajectory.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct MultiDOFJointTrajectory {
        /// When to start (zero: now).
        pub header: Header,
        /// The joints the points give, in their order.
        pub joint_names: Vec<String>,
        /// The points, in time order.
        pub points: Vec<MultiDOFJointTrajectoryPoint>,
    }
}

pub mod control_msgs;

/// A message type with its ROS 2 name and definition.
pub trait RosMessage: Serialize + DeserializeOwned {
    /// The type's ROS 2 name, `package/msg/Type`.
    const TYPE_NAME: &'static str;
}

macro_rules! ros_message {
    ($($ty:ty => $name:literal),* $(,)?) => {
        $(impl RosMessage for $ty { const TYPE_NAME: &'static str = $name; })*
    };
}

ros_message! {
    std_msgs::String => "std_msgs/msg/String",
    std_msgs::Float64 => "std_msgs/msg/Float64",
    std_msgs::Float32 => "std_msgs/msg/Float32",
    std_msgs::Int64 => "std_msgs/msg/Int64",
    std_msgs::Int32 => "std_msgs/msg/Int32",
    std_msgs::Bool => "std_msgs/msg/Bool",
    std_msgs::Header => "std_msgs/msg/Header",
    std_msgs::Float64MultiArray => "std_msgs/msg/Float64MultiArray",
    geometry_msgs::Vector3 => "geometry_msgs/msg/Vector3",
    geometry_msgs::Point => "geometry_msgs/msg/Point",
    geometry_msgs::Quaternion => "geometry_msgs/msg/Quaternion",
    geometry_msgs::Transform => "geometry_msgs/msg/Transform",
    geometry_msgs::TransformStamped => "geometry_msgs/msg/TransformStamped",
    geometry_msgs::Pose => "geometry_msgs/msg/Pose",
    geometry_msgs::PoseStamped => "geometry_msgs/msg/PoseStamped",
    geometry_msgs::Twist => "geometry_msgs/msg/Twist",
    geometry_msgs::TwistStamped => "geometry_msgs/msg/TwistStamped",
    geometry_msgs::Wrench => "geometry_msgs/msg/Wrench",
    geometry_msgs::WrenchStamped => "geometry_msgs/msg/WrenchStamped",
    sensor_msgs::JointState => "sensor_msgs/msg/JointState",
    tf2_msgs::TFMessage => "tf2_msgs/msg/TFMessage",
    trajectory_msgs::JointTrajectory => "trajectory_msgs/msg/JointTrajectory",
    trajectory_msgs::JointTrajectoryPoint => "trajectory_msgs/msg/JointTrajectoryPoint",
}

/// The `.msg` definitions, as ROS 2's packages give them (comments and constants left out):
/// (type name, definition). Field types name other types as `package/Type`.
const DEFINITIONS: &[(&str, &str)] = &[
    ("builtin_interfaces/msg/Time", "int32 sec\nuint32 nanosec\n"),
    ("builtin_interfaces/msg/Duration", "int32 sec\nuint32 nanosec\n"),
    ("std_msgs/msg/Header", "builtin_interfaces/Time stamp\nstring frame_id\n"),
    ("std_msgs/msg/String", "string data\n"),
    ("std_msgs/msg/Float64", "float64 data\n"),
    ("std_msgs/msg/Float32", "float32 data\n"),
    ("std_msgs/msg/Int64", "int64 data\n"),
    ("std_msgs/msg/Int32", "int32 data\n"),
    ("std_msgs/msg/Bool", "bool data\n"),
    ("std_msgs/msg/MultiArrayDimension", "string label\nuint32 size\nuint32 stride\n"),
    ("std_msgs/msg/MultiArrayLayout", "MultiArrayDimension[] dim\nuint32 data_offset\n"),
    ("std_msgs/msg/Float64MultiArray", "MultiArrayLayout layout\nfloat64[] data\n"),
    ("geometry_msgs/msg/Vector3", "float64 x\nfloat64 y\nfloat64 z\n"),
    ("geometry_msgs/msg/Point", "float64 x\nfloat64 y\nfloat64 z\n"),
    ("geometry_msgs/msg/Quaternion", "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"),
    ("geometry_msgs/msg/Transform", "Vector3 translation\nQuaternion rotation\n"),
    ("geometry_msgs/msg/TransformStamped", "std_msgs/Header header\nstring child_frame_id\nTransform transform\n"),
    ("geometry_msgs/msg/Pose", "Point position\nQuaternion orientation\n"),
    ("geometry_msgs/msg/PoseStamped", "std_msgs/Header header\nPose pose\n"),
    ("geometry_msgs/msg/Twist", "Vector3 linear\nVector3 angular\n"),
    ("geometry_msgs/msg/TwistStamped", "std_msgs/Header header\nTwist twist\n"),
    ("geometry_msgs/msg/Wrench", "Vector3 force\nVector3 torque\n"),
    ("geometry_msgs/msg/WrenchStamped", "std_msgs/Header header\nWrench wrench\n"),
    ("sensor_msgs/msg/JointState", "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n"),
    ("tf2_msgs/msg/TFMessage", "geometry_msgs/TransformStamped[] transforms\n"),
    ("trajectory_msgs/msg/JointTrajectoryPoint", "float64[] positions\nfloat64[] velocities\nfloat64[] accelerations\nfloat64[] effort\nbuiltin_interfaces/Duration time_from_start\n"),
    ("trajectory_msgs/msg/JointTrajectory", "std_msgs/Header header\nstring[] joint_names\nJointTrajectoryPoint[] points\n"),
];

/// The `.msg` definition of `type_name` (`package/msg/Type`), if morc knows the type.
pub fn definition(type_name: &str) -> Option<&'static str> {
    DEFINITIONS.iter().find(|(n, _)| *n == type_name).map(|(_, d)| *d)
}

/// The message types morc knows, `package/msg/Type`.
pub fn known_types() -> impl Iterator<Item = &'static str> {
    DEFINITIONS.iter().map(|(n, _)| *n)
}

const PRIMITIVES: &[&str] = &["bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "string", "wstring"];

/// The types a definition's fields name, as `package/msg/Type` (a bare `Type` is in `package`).
fn field_types(package: &str, definition: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in definition.lines() {
        let Some(ty) = line.split_whitespace().next() else { continue };
        let ty = ty.split('[').next().unwrap_or(ty);
        if PRIMITIVES.contains(&ty) || ty.starts_with("string<") {
            continue;
        }
        let full = match ty.split_once('/') {
            Some((pkg, name)) => format!("{pkg}/msg/{name}"),
            None => format!("{package}/msg/{ty}"),
        };
        out.push(full);
    }
    out
}

/// The `ros2msg` schema of `type_name` as rosbag2 writes it in MCAP files: its definition, then
/// each type it uses (depth first, once each) after a line of 80 `=` and `MSG: package/Type`.
pub fn ros2msg_schema(type_name: &str) -> Option<String> {
    let mut out = definition(type_name)?.to_string();
    let mut seen = vec![type_name.to_string()];
    let mut stack = field_types(type_name.split('/').next()?, definition(type_name)?);
    stack.reverse();
    while let Some(ty) = stack.pop() {
        if seen.contains(&ty) {
            continue;
        }
        let def = definition(&ty)?;
        let (pkg, name) = (ty.split('/').next()?, ty.rsplit('/').next()?);
        out.push_str(&"=".repeat(80));
        out.push_str(&format!("\nMSG: {pkg}/{name}\n"));
        out.push_str(def);
        let mut inner = field_types(pkg, def);
        inner.reverse();
        stack.extend(inner);
        seen.push(ty);
    }
    Some(out)
}

/// The DDS type name of a ROS 2 type: `sensor_msgs/msg/JointState` → `sensor_msgs::msg::dds_::JointState_`.
pub fn dds_type_name(type_name: &str) -> Option<String> {
    let mut parts = type_name.split('/');
    let (pkg, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || pkg.is_empty() || name.is_empty() {
        return None;
    }
    Some(format!("{pkg}::{kind}::dds_::{name}_"))
}

/// The CDR encapsulation header ROS 2 puts before every serialized message: CDR, little endian.
pub const CDR_LE_HEADER: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

/// Why bytes are not a message.
#[derive(Debug)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

/// A message as ROS 2 serializes it (in MCAP files and on the wire): the CDR encapsulation
/// header, then the message in little-endian CDR.
pub fn to_cdr<M: Serialize>(message: &M) -> Vec<u8> {
    let mut out = CDR_LE_HEADER.to_vec();
    // Serializing plain structs of numbers, strings and sequences into a Vec cannot fail.
    cdr_encoding::to_writer::<M, byteorder::LittleEndian, _>(&mut out, message).expect("CDR encoding of a ROS message into memory");
    out
}

/// The message in `bytes` (as [`to_cdr`] writes it; big-endian CDR is read too).
pub fn from_cdr<M: DeserializeOwned>(bytes: &[u8]) -> Result<M, DecodeError> {
    if bytes.len() < 4 {
        return Err(DecodeError(format!("{} bytes is too short for a CDR message (a 4-byte header first)", bytes.len())));
    }
    let result = match bytes[1] {
        0x01 => cdr_encoding::from_bytes::<M, byteorder::LittleEndian>(&bytes[4..]),
        0x00 => cdr_encoding::from_bytes::<M, byteorder::BigEndian>(&bytes[4..]),
        other => return Err(DecodeError(format!("CDR encapsulation {other:#04x} is not plain CDR (0x00 big endian, 0x01 little endian)"))),
    };
    result.map(|(m, _)| m).map_err(|e| DecodeError(format!("not a valid CDR message: {e}")))
}

/// CDR built field by field, for message types made at run time (a recording's per-component
/// messages): the same bytes serde's CDR encoding gives a struct of those fields, alignment
/// included, after the encapsulation header. The buffer is kept between messages.
#[derive(Clone, Debug, Default)]
pub struct CdrWriter {
    buf: Vec<u8>,
}

impl CdrWriter {
    /// An empty writer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> CdrWriter {
        CdrWriter { buf: Vec::with_capacity(capacity) }
    }

    /// Starts a new message: the encapsulation header, nothing else.
    pub fn begin(&mut self) {
        self.buf.clear();
        self.buf.extend_from_slice(&CDR_LE_HEADER);
    }

    /// The message so far (header included).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Pads to a multiple of `n` bytes from the end of the header, as CDR aligns primitives.
    fn align(&mut self, n: usize) {
        let at = self.buf.len() - CDR_LE_HEADER.len();
        let pad = (n - at % n) % n;
        self.buf.resize(self.buf.len() + pad, 0);
    }

    /// An `int32`.
    pub fn i32(&mut self, x: i32) {
        self.align(4);
        self.buf.extend_from_slice(&x.to_le_bytes());
    }

    /// A `uint32`.
    pub fn u32(&mut self, x: u32) {
        self.align(4);
        self.buf.extend_from_slice(&x.to_le_bytes());
    }

    /// An `int64`.
    pub fn i64(&mut self, x: i64) {
        self.align(8);
        self.buf.extend_from_slice(&x.to_le_bytes());
    }

    /// A `float64`.
    pub fn f64(&mut self, x: f64) {
        self.align(8);
        self.buf.extend_from_slice(&x.to_le_bytes());
    }

    /// A `bool`.
    pub fn bool(&mut self, x: bool) {
        self.buf.push(u8::from(x));
    }

    /// A `builtin_interfaces/Time`.
    pub fn time(&mut self, t: builtin_interfaces::Time) {
        self.i32(t.sec);
        self.u32(t.nanosec);
    }

    /// A fixed-size `float64[n]` (no length before it, as CDR writes fixed arrays).
    pub fn f64_array(&mut self, xs: &[f64]) {
        for x in xs {
            self.f64(*x);
        }
    }
}

/// Reads CDR field by field (little endian, after the encapsulation header), the counterpart
/// of [`CdrWriter`].
pub struct CdrReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> CdrReader<'a> {
    /// A reader of the message `bytes` (header included; only little-endian CDR).
    pub fn new(bytes: &'a [u8]) -> Result<CdrReader<'a>, DecodeError> {
        if bytes.len() < 4 || bytes[1] != 0x01 {
            return Err(DecodeError("not a little-endian CDR message (its 4-byte header says otherwise)".into()));
        }
        Ok(CdrReader { bytes: &bytes[4..], at: 0 })
    }

    fn take<const N: usize>(&mut self, align: usize) -> Result<[u8; N], DecodeError> {
        self.at = self.at.div_ceil(align) * align;
        let end = self.at + N;
        let s = self.bytes.get(self.at..end).ok_or_else(|| DecodeError(format!("the message ends at byte {} before its fields do", self.bytes.len() + 4)))?;
        self.at = end;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    /// An `int32`.
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        self.take::<4>(4).map(i32::from_le_bytes)
    }

    /// A `uint32`.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        self.take::<4>(4).map(u32::from_le_bytes)
    }

    /// An `int64`.
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        self.take::<8>(8).map(i64::from_le_bytes)
    }

    /// A `float64`.
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        self.take::<8>(8).map(f64::from_le_bytes)
    }

    /// A `bool`.
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        self.take::<1>(1).map(|b| b[0] != 0)
    }

    /// A `builtin_interfaces/Time`.
    pub fn time(&mut self) -> Result<builtin_interfaces::Time, DecodeError> {
        Ok(builtin_interfaces::Time { sec: self.i32()?, nanosec: self.u32()? })
    }
}

/// Whether `name` is a valid ROS 2 field name: lowercase letters, digits and single
/// underscores, starting with a letter and not ending with an underscore.
pub fn is_field_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && b[0].is_ascii_lowercase() && !name.ends_with('_') && !name.contains("__") && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// A valid ROS 2 field name for `name` ("tau_J" → "tau_j", "2nd" → "f_2nd", "x.y" → "x_y"):
/// lowercase, every other character an underscore, runs of them one, none at the end; a
/// Python keyword gets `_field` after it ("in" → "in_field").
pub fn field_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.insert_str(0, if out.is_empty() { "f" } else { "f_" });
    }
    // Python's keywords cannot name the fields of the classes Python's ROS tools make.
    if KEYWORDS.contains(&out.as_str()) {
        out.push_str("_field");
    }
    out
}

/// Words the generated message classes of ROS 2's Python tools cannot use as field names.
const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// A valid ROS 2 message type name (the `Type` of `package/msg/Type`) for `name`: CamelCase of
/// its letters and digits ("my_ctl" → "MyCtl", "2x" → "M2x").
pub fn type_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    let mut upper = true;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(if upper { c.to_ascii_uppercase() } else { c });
            upper = false;
        } else {
            upper = true;
        }
    }
    if !out.starts_with(|c: char| c.is_ascii_uppercase()) {
        out.insert(0, 'M');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_cdr_is_what_serde_gives_the_same_struct() {
        #[derive(Serialize)]
        struct Row {
            stamp: builtin_interfaces::Time,
            time: f64,
            ok: bool,
            q: [f64; 3],
            n: i64,
            b: bool,
            c: bool,
            x: f64,
        }
        let row = Row { stamp: builtin_interfaces::Time { sec: 7, nanosec: 9 }, time: 0.25, ok: true, q: [1.0, -2.0, 3.5], n: -4, b: false, c: true, x: f64::NAN };
        let mut w = CdrWriter::with_capacity(16);
        w.begin();
        w.time(row.stamp);
        w.f64(row.time);
        w.bool(row.ok);
        w.f64_array(&row.q);
        w.i64(row.n);
        w.bool(row.b);
        w.bool(row.c);
        w.f64(row.x);
        assert_eq!(w.bytes(), &to_cdr(&row)[..]);
        let mut r = CdrReader::new(w.bytes()).unwrap();
        assert_eq!(r.time().unwrap(), row.stamp);
        assert_eq!(r.f64().unwrap(), 0.25);
        assert!(r.bool().unwrap());
        assert_eq!([r.f64().unwrap(), r.f64().unwrap(), r.f64().unwrap()], row.q);
        assert_eq!(r.i64().unwrap(), -4);
        assert!(!r.bool().unwrap() && r.bool().unwrap());
        assert!(r.f64().unwrap().is_nan());
        assert!(r.f64().is_err(), "past the end is an error");
        // A second message reuses the buffer.
        w.begin();
        w.bool(true);
        assert_eq!(w.bytes(), &[0, 1, 0, 0, 1]);
    }

    #[test]
    fn names_become_valid_ros_names() {
        for (given, want) in
            [("q", "q"), ("tau_J", "tau_j"), ("2nd", "f_2nd"), ("x.y", "x_y"), ("a__b_", "a_b"), ("_", "f"), ("Fx", "fx"), ("q_cmd", "q_cmd"), ("in", "in_field"), ("From", "from_field")]
        {
            assert_eq!(field_name(given), want, "{given}");
            assert!(is_field_name(&field_name(given)), "{given}");
        }
        assert!(!is_field_name("Q") && !is_field_name("a__b") && !is_field_name("a_") && !is_field_name("1a") && !is_field_name(""));
        assert_eq!(type_name("my_ctl"), "MyCtl");
        assert_eq!(type_name("robot"), "Robot");
        assert_eq!(type_name("2x"), "M2x");
    }

    #[test]
    fn joint_state_encodes_as_ros_2_does() {
        let m = sensor_msgs::JointState {
            header: std_msgs::Header { stamp: builtin_interfaces::Time { sec: 1, nanosec: 2 }, frame_id: String::new() },
            name: vec!["a".into()],
            position: vec![0.5],
            velocity: vec![],
            effort: vec![],
        };
        let bytes = to_cdr(&m);
        // header, sec, nanosec, frame_id "" (length 1 with its NUL), padding, 1 name "a",
        // padding to 8, one position, two empty sequences.
        let mut want = vec![0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        want.extend([1, 0, 0, 0, 2, 0, 0, 0, b'a', 0, 0, 0, 1, 0, 0, 0]);
        want.extend(0.5f64.to_le_bytes());
        want.extend([0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bytes, want);
        assert_eq!(from_cdr::<sensor_msgs::JointState>(&bytes).unwrap(), m);
    }

    #[test]
    fn schemas_carry_every_type_they_use_once() {
        let s = ros2msg_schema("tf2_msgs/msg/TFMessage").unwrap();
        assert!(s.starts_with("geometry_msgs/TransformStamped[] transforms\n"));
        for t in ["geometry_msgs/TransformStamped", "std_msgs/Header", "builtin_interfaces/Time", "geometry_msgs/Transform", "geometry_msgs/Vector3", "geometry_msgs/Quaternion"] {
            assert_eq!(s.matches(&format!("MSG: {t}\n")).count(), 1, "{t} in\n{s}");
        }
        assert!(ros2msg_schema("nope_msgs/msg/Nope").is_none());
    }

    #[test]
    fn every_definition_names_only_known_types() {
        for t in known_types() {
            assert!(ros2msg_schema(t).is_some(), "{t} uses a type without a definition");
        }
    }

    #[test]
    fn dds_names_follow_ros_2() {
        assert_eq!(dds_type_name("sensor_msgs/msg/JointState").as_deref(), Some("sensor_msgs::msg::dds_::JointState_"));
        assert_eq!(dds_type_name("JointState"), None);
    }

    #[test]
    fn truncated_bytes_are_an_error_not_a_panic() {
        let bytes = to_cdr(&std_msgs::String { data: "hello".into() });
        for n in 0..bytes.len() {
            assert!(from_cdr::<std_msgs::String>(&bytes[..n]).is_err());
        }
    }
}

//! A robot's component kinds as Lua values: `robot:component "ptp"` is a [`RobotKind`], whose
//! parameters Lua gives in its units (degrees, mm) and the robot converts.

use std::sync::Arc;

use mlua::{Table, UserData, UserDataMethods};

use crate::robot_params::Units;
use morc_kernel::Factory;
use morc_robot::{components, Robot};

/// Lua units unless `units = "rad"` (then SI: m, rad).
pub(crate) fn units_of(opts: Option<&Table>) -> mlua::Result<Units> {
    Ok(match opts.map(|o| o.get::<Option<String>>("units")).transpose()?.flatten().as_deref() {
        Some("rad") | Some("si") => Units::SI,
        None | Some("deg") => Units::LUA,
        Some(other) => return Err(mlua::Error::runtime(format!("units must be \"deg\" (degrees, mm) or \"rad\" (radians, m), got {other:?}"))),
    })
}

/// A robot component kind for `a:add(name, robot:component "ptp", params)`.
#[derive(Clone)]
pub struct RobotKind {
    /// The robot whose component it is.
    pub robot: Arc<Robot>,
    /// The kind's name among the robot's kinds ("ptp", "rnea", "monitor", …).
    pub kind: String,
}

impl UserData for RobotKind {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| Ok(format!("{} of robot '{}'", this.kind, this.robot.name)));
    }
}

/// The factory of the robot's kind `kind`, or an error naming the robot and its kinds.
pub(crate) fn robot_kind(robot: &Arc<Robot>, kind: &str) -> Result<Factory, String> {
    let kinds = components::kinds(robot);
    kinds.factory(kind).map_err(|_| {
        let known: Vec<&str> = kinds.kinds().map(|k| k.name.as_str()).collect();
        format!("robot '{}' has no component kind '{kind}' (kinds: {})", robot.name, known.join(", "))
    })
}

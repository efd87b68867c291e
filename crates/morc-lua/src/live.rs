//! `morc.live`: the live view (Foxglove WebSocket protocol) from Lua, and
//! what every run gets while it is on: a tap of the published signals
//! (`a:publish`) and of the robot's joints, and its statistics afterwards.

use mlua::{AnyUserData, Lua, Table};
use morc_kernel::{AttachmentSpec, RunResult};

const DOC_START: &str = "morc.live.start([\"host:port\"]): serves the live view (Foxglove WebSocket protocol, default 127.0.0.1:8765; \
port 0 picks a free one) while assemblies run: the robot's joint states (/joint_states), tool pose (/tool_pose), the frames of \
every link (/tf), the signals a program publishes (a:publish { \"robot.q\", \"ff.tau\" }), each run's statistics (/morc/run), \
the live tap's drops (/morc/live) and log lines (/morc/log). Open it in Foxglove: Open connection → Foxglove WebSocket → ws://host:port. \
Returns the address served.\n  morc.live.start(address?: string) → string";
const DOC_STOP: &str = "morc.live.stop(): stops the live view; clients are disconnected.\n  morc.live.stop()";
const DOC_WAIT: &str = "morc.live.wait_for_client([timeout_s]): waits until a client (Foxglove) is connected, at most timeout_s \
seconds (default 30); whether one is. A program that should be watched from its start waits for it first.\n  morc.live.wait_for_client(timeout_s?: number) → boolean";
const DOC_CLIENTS: &str = "morc.live.clients(): how many clients are connected to the live view now.\n  morc.live.clients() → integer";
const DOC_ADDRESS: &str = "morc.live.address(): the address the live view serves on, or nil when it is off.\n  morc.live.address() → string?";

/// Registers `morc.live` with its documentation.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let live = lua.create_table()?;
    live.set(
        "start",
        lua.create_function(|lua, address: Option<String>| {
            let origin = crate::origin::caller(lua);
            morc_live::start(address.as_deref().unwrap_or(morc_live::DEFAULT_ADDRESS)).map_err(|e| mlua::Error::runtime(format!("{origin}: {e}")))
        })?,
    )?;
    live.set(
        "stop",
        lua.create_function(|_, ()| {
            morc_live::stop();
            Ok(())
        })?,
    )?;
    live.set("address", lua.create_function(|_, ()| Ok(morc_live::address()))?)?;
    live.set("clients", lua.create_function(|_, ()| Ok(morc_live::clients()))?)?;
    live.set(
        "wait_for_client",
        lua.create_function(|_, timeout: Option<f64>| {
            let t = timeout.unwrap_or(30.0);
            if !(t >= 0.0 && t.is_finite()) {
                return Err(mlua::Error::runtime(format!("morc.live.wait_for_client: the timeout must be seconds from 0 up, got {t}")));
            }
            Ok(morc_live::wait_for_client(std::time::Duration::from_secs_f64(t)))
        })?,
    )?;
    morc.set("live", live)?;
    lua.load(format!(
        "if morc.doc then morc.doc(morc.live.start, {DOC_START:?}); morc.doc(morc.live.stop, {DOC_STOP:?}); morc.doc(morc.live.address, {DOC_ADDRESS:?}); morc.doc(morc.live.clients, {DOC_CLIENTS:?}); morc.doc(morc.live.wait_for_client, {DOC_WAIT:?}) end"
    ))
    .set_name("@morc/live")
    .exec()
}

/// The live view's attachment for `a:publish { patterns… }`.
pub fn publish_spec(patterns: Vec<String>, rate: f64, origin: morc_kernel::Origin) -> AttachmentSpec {
    let request = morc_live::LiveRequest { patterns, robot: None, rate };
    AttachmentSpec { name: morc_live::TAP_NAME.into(), kind: "live".into(), attach: morc_live::attachment(request), origin }
}

/// A run's attachments as the live view needs them: none while it is off; while it is on a tap
/// on every run (the robot's joints even where nothing is published), drawing the engine's robot.
pub fn for_live(lua: &Lua, attachments: &mut Vec<AttachmentSpec>) -> mlua::Result<()> {
    if morc_live::address().is_none() {
        attachments.retain(|a| a.kind != "live");
        return Ok(());
    }
    let robot = match lua.globals().get::<Table>("morc")?.get::<mlua::Value>("current_robot")? {
        mlua::Value::UserData(ud) => robot_of(&ud),
        _ => None,
    };
    // The taps of a:publish, planned on the engine's thread, take the robot from there.
    morc_live::set_robot(robot.clone());
    if !attachments.iter().any(|a| a.kind == "live") {
        let request = morc_live::LiveRequest { patterns: Vec::new(), robot, rate: DEFAULT_RATE };
        attachments.push(AttachmentSpec { name: morc_live::TAP_NAME.into(), kind: "live".into(), attach: morc_live::attachment(request), origin: morc_kernel::Origin::default() });
    }
    Ok(())
}

/// Samples per second the live view sends by default.
pub const DEFAULT_RATE: f64 = 100.0;

fn robot_of(ud: &AnyUserData) -> Option<morc_live::LiveRobot> {
    let r = ud.borrow::<crate::robot::LuaRobot>().ok()?;
    Some(morc_live::LiveRobot { model: r.0.model.clone(), tool_frame: r.0.tool_frame })
}

/// Sends a finished run's statistics to the live view, when it is on.
pub fn after_run(spec_name: &str, result: &RunResult) {
    morc_live::publish_run(spec_name, result);
}

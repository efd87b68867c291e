//! `morc.live`: the live view (Foxglove WebSocket protocol) from Lua, and
//! what every run gets while it is on: a tap of the published signals
//! (`a:publish`) and of the robot's joints, and its statistics afterwards.
//!
//! The live view is the Lua state's: a [`Live`] in its app data, made when `morc` is installed
//! or handed in by whoever started it ([`share`]: `morc --live`).

use std::sync::Arc;
use std::time::Duration;

use mlua::{AnyUserData, Lua, Table};
use morc_kernel::{AttachmentSpec, BusDiagnostics, Engine, RunResult};
use morc_live::page::{Controls, JogAxis, PageJoint, Station};
use morc_live::Live;
use morc_robot::operator::{JogCommand, JogFrame};

const DOC_START: &str = "morc.live.start([\"host:port\"]): serves the live view (Foxglove WebSocket protocol, default 127.0.0.1:8765; \
port 0 picks a free one) while assemblies run: the robot's joint states (/joint_states), tool pose (/tool_pose), the frames of \
every link (/tf), the signals a program publishes (a:publish { \"robot.q\", \"ff.tau\" }), each run's statistics (/morc/run), \
the engine's statistics and the bus's state while a run goes (/morc/stats, /morc/bus), the robot's URDF for a 3D panel \
(/robot_description, topic and parameter), the live tap's drops (/morc/live) and log lines (/morc/log). Open it in Foxglove: Open connection → Foxglove WebSocket → ws://host:port. \
Beside it, on the next port, the operator page; its commands need a token: options.token (16+ letters, digits, '-', '_') \
or a new random one. Returns the address served and the page's URL with the token.\n  morc.live.start(address?: string, options?: { token?: string }) → string, string";
const DOC_STOP: &str = "morc.live.stop(): stops the live view; clients are disconnected.\n  morc.live.stop()";
const DOC_WAIT: &str = "morc.live.wait_for_client([timeout_s]): waits until a client (Foxglove) is connected, at most timeout_s \
seconds (default 30); whether one is. A program that should be watched from its start waits for it first.\n  morc.live.wait_for_client(timeout_s?: number) → boolean";
const DOC_CLIENTS: &str = "morc.live.clients(): how many clients are connected to the live view now.\n  morc.live.clients() → integer";
const DOC_ADDRESS: &str = "morc.live.address(): the address the live view serves on, or nil when it is off.\n  morc.live.address() → string?";

/// The live view of the Lua state `lua` (made on first use).
pub fn live(lua: &Lua) -> Live {
    if let Some(live) = lua.app_data_ref::<Live>() {
        return live.clone();
    }
    let live = Live::new();
    lua.set_app_data(live.clone());
    live
}

/// Makes `live` the live view of `lua`: the one its `morc.live` functions and runs use (the
/// command line's, started by `morc --live`, so that the program's runs show there).
pub fn share(lua: &Lua, live: Live) {
    lua.set_app_data(live);
}

/// Registers `morc.live` with its documentation.
pub fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    // The state's own live view, unless one was handed in already.
    self::live(lua);
    let live = lua.create_table()?;
    live.set(
        "start",
        lua.create_function(|lua, (address, options): (Option<String>, Option<Table>)| {
            let origin = crate::origin::caller(lua);
            let mut token = None;
            if let Some(options) = options {
                for pair in options.pairs::<mlua::Value, mlua::Value>() {
                    let (key, value) = pair?;
                    match (key.to_string()?.as_str(), value) {
                        ("token", mlua::Value::String(t)) => token = Some(t.to_str()?.to_string()),
                        ("token", v) => return Err(mlua::Error::runtime(format!("{origin}: morc.live.start: token must be a string, got {}", v.type_name()))),
                        (k, _) => return Err(mlua::Error::runtime(format!("{origin}: morc.live.start: {}", morc_kernel::names::unknown("option", k, "in its options", &["token"])))),
                    }
                }
            }
            let live = self::live(lua);
            let served = live.start(address.as_deref().unwrap_or(morc_live::DEFAULT_ADDRESS), token).map_err(|e| mlua::Error::runtime(format!("{origin}: {e}")))?;
            Ok((served, live.access().map(|a| a.page_url())))
        })?,
    )?;
    live.set(
        "stop",
        lua.create_function(|lua, ()| {
            self::live(lua).stop();
            Ok(())
        })?,
    )?;
    live.set("address", lua.create_function(|lua, ()| Ok(self::live(lua).address()))?)?;
    live.set("clients", lua.create_function(|lua, ()| Ok(self::live(lua).clients()))?)?;
    live.set(
        "wait_for_client",
        lua.create_function(|lua, timeout: Option<f64>| {
            let t = timeout.unwrap_or(30.0);
            if !(t >= 0.0 && t.is_finite()) {
                return Err(mlua::Error::runtime(format!("morc.live.wait_for_client: the timeout must be seconds from 0 up, got {t}")));
            }
            Ok(self::live(lua).wait_for_client(std::time::Duration::from_secs_f64(t)))
        })?,
    )?;
    morc.set("live", live)?;
    lua.load(format!(
        "if morc.doc then morc.doc(morc.live.start, {DOC_START:?}); morc.doc(morc.live.stop, {DOC_STOP:?}); morc.doc(morc.live.address, {DOC_ADDRESS:?}); morc.doc(morc.live.clients, {DOC_CLIENTS:?}); morc.doc(morc.live.wait_for_client, {DOC_WAIT:?}) end"
    ))
    .set_name("@morc/live")
    .exec()
}

/// The live view's attachment for `a:publish { patterns… }` (the Lua state's live view).
pub fn publish_spec(lua: &Lua, patterns: Vec<String>, rate: f64, origin: morc_kernel::Origin) -> AttachmentSpec {
    let request = morc_live::LiveRequest { patterns, robot: None, rate };
    AttachmentSpec { name: morc_live::TAP_NAME.into(), kind: "live".into(), attach: live(lua).attachment(request), origin }
}

/// A run's attachments as the live view needs them: none while it is off; while it is on a tap
/// on every run (the robot's joints even where nothing is published), drawing the engine's robot.
/// The operator page gets the engine's robot: its snapshot and operator handles.
pub fn for_live(lua: &Lua, engine: &Engine, attachments: &mut Vec<AttachmentSpec>) -> mlua::Result<()> {
    // Recordings describe the engine's robot too (an MCAP file's /joint_states and /tf), live view or not.
    let current = lua.globals().get::<Table>("morc")?.get::<mlua::Value>("current_robot")?;
    morc_record::attach::set_robot(match &current {
        mlua::Value::UserData(ud) => robot_of(ud).map(|r| r.model),
        _ => None,
    });
    let live = self::live(lua);
    let (robot, station) = match &current {
        mlua::Value::UserData(ud) => (robot_of(ud), station_of(ud, engine)),
        _ => (None, None),
    };
    // The page's state is kept with the live view off too: ROS 2's `~/state` reads it.
    live.page().set_station(station);
    live.page().run_starting();
    if live.address().is_none() {
        attachments.retain(|a| a.kind != "live");
        return Ok(());
    }
    live.set_sources(Some(morc_live::Sources { timing: engine.timing_cell(), bus: engine.bus().cloned() }));
    // The taps of a:publish, planned on the engine's thread, take the robot from there.
    live.set_robot(robot.clone());
    if !attachments.iter().any(|a| a.kind == "live") {
        let request = morc_live::LiveRequest { patterns: Vec::new(), robot, rate: DEFAULT_RATE };
        attachments.push(AttachmentSpec { name: morc_live::TAP_NAME.into(), kind: "live".into(), attach: live.attachment(request), origin: morc_kernel::Origin::default() });
    }
    Ok(())
}

/// Samples per second the live view sends by default.
pub const DEFAULT_RATE: f64 = 100.0;

fn robot_of(ud: &AnyUserData) -> Option<morc_live::LiveRobot> {
    let r = ud.borrow::<crate::robot::LuaRobot>().ok()?;
    Some(morc_live::LiveRobot { model: r.0.model.clone(), tool_frame: r.0.tool_frame })
}

/// The operator page's view of the robot `ud` on `engine`.
fn station_of(ud: &AnyUserData, engine: &Engine) -> Option<Station> {
    let r = ud.borrow::<crate::robot::LuaRobot>().ok()?.0.clone();
    let joints = (0..r.dof())
        .map(|i| {
            let si = crate::robot_params::Units::LUA.joint(&r, i);
            let unit = if (si - crate::robot_params::Units::LUA.length).abs() < 1e-12 { "mm" } else { "°" };
            PageJoint { name: r.joints[i].name.clone(), scale: 1.0 / si, unit: unit.into() }
        })
        .collect();
    Some(Station {
        robot: r.name.clone(),
        joints,
        model: r.model.clone(),
        tool_frame: r.tool_frame,
        snapshot: engine.snapshot_cell(),
        controls: Arc::new(PageControls { bus: engine.bus().cloned(), robot: r }),
    })
}

/// The page's commands on the robot's operator handles (those of robot:override, robot:pause
/// and the REPL's jog) and the bus's fault reset.
struct PageControls {
    robot: Arc<morc_robot::Robot>,
    bus: Option<Arc<dyn BusDiagnostics>>,
}

fn until_ns(hold: Duration) -> u64 {
    morc_kernel::monotonic_ns() + hold.as_nanos() as u64
}

impl Controls for PageControls {
    fn hold(&self) {
        self.robot.operator.pause();
    }
    fn resume(&self) {
        self.robot.operator.resume();
    }
    fn paused(&self) -> bool {
        self.robot.operator.paused()
    }
    fn set_override(&self, fraction: f64) -> Result<(), String> {
        self.robot.operator.set_override(fraction)
    }
    fn override_setting(&self) -> f64 {
        self.robot.operator.override_setting()
    }
    fn motion(&self) -> Option<(f64, f64)> {
        self.robot.operator.progress().map(|p| (p, self.robot.operator.override_now()))
    }
    fn jog(&self, axis: JogAxis, dir: f64, step: f64, speed: f64, hold: Duration) -> Result<u64, String> {
        let held = step == 0.0;
        let (frame, axis) = match axis {
            JogAxis::Joint(j) => (JogFrame::Joint, j),
            JogAxis::Base(k) => (JogFrame::Base, k),
            JogAxis::Tool(k) => (JogFrame::Tool, k),
        };
        let c = JogCommand { frame, axis, direction: dir, speed, step, until_ns: if held { until_ns(hold) } else { 0 }, ..JogCommand::default() };
        self.robot.operator.jog_in_session(c)
    }
    fn hold_jog(&self, id: u64, hold: Duration) -> bool {
        self.robot.operator.hold_jog(id, until_ns(hold))
    }
    fn jogging(&self) -> bool {
        self.robot.operator.jog_session()
    }
    fn stop_jog(&self) {
        self.robot.operator.stop_jog();
    }
    fn jog_stopped(&self) -> Option<String> {
        crate::robot_state::jog_stop_text(&self.robot)
    }
    fn faults(&self) -> Vec<String> {
        match &self.bus {
            Some(b) if b.faulted() => vec![format!("the bus holds a latched fault ({} since start)", b.faults())],
            _ => Vec::new(),
        }
    }
    fn reset_faults(&self) -> String {
        match &self.bus {
            Some(b) => {
                b.reset_faults();
                "the bus resets its faults at its next cycle".into()
            }
            None => format!("robot '{}' latches no faults: a run's fault ends with the run", self.robot.name),
        }
    }
}

/// Sends a finished run's statistics to the live view, when it is on; a run morc made for
/// itself (`internal = true`, reading where the robot is) is not the operator's last run.
pub fn after_run(lua: &Lua, spec: &morc_kernel::AssemblySpec, result: &RunResult) {
    if spec.internal {
        live(lua).page().run_left();
    } else {
        live(lua).publish_run(&spec.name, result);
    }
}

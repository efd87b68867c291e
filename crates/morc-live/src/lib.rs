//! The live view: while assemblies run, a Foxglove WebSocket server (morc's
//! own, [`ws`], on a thread of its own) serves the signals a program
//! publishes, the robot's joint states, its tool pose and the frames of every
//! link, run statistics and log lines, so Foxglove (or PlotJuggler's Foxglove
//! bridge) shows them as they happen.
//!
//! Publishing never blocks the real-time path: a [`LiveTap`] component,
//! attached to the running assembly like a recorder ([`Live::attachment`]), copies
//! its inputs into a preallocated lock-free ring (`morc_record::ring`, the
//! recorder's) every few ticks; a drain thread takes rows out, encodes them
//! and hands them to the server. A full ring drops the row and counts it
//! (channel `/morc/live`).
//!
//! Channels (all JSON, schemas as jsonschema):
//! ```text
//! <component.port>     {"time": t, "value": x}          each published signal (as in MCAP recordings)
//! /joint_states        {"time", "name", "position", "velocity", "effort"}   from robot.q, robot.qd, robot.tau
//! /tf                  foxglove.FrameTransforms + "time" every frame of the robot in "world"
//! /tool_pose           foxglove.PoseInFrame + "time"     the tool frame in "world"
//! /morc/run            {"assembly", "outcome", "reason", "late_ticks", "ticks", "components": [{name, kind, p99, max, overruns}]}  after each run
//! /morc/live           {"time", "rows", "dropped"}       the tap's own counts, each drain
//! /morc/log            foxglove.Log                      log lines and what programs print
//! /morc/stats          {"time", "assembly", "ticks", "late_ticks", "cycle": {mean, p99, max}, "components": [{name, kind, every, steps, mean, p99, max, overruns}], "rows", "dropped"}   twice a second while a run goes
//! /morc/bus            {"time", "bus": {cycles, lost_frames, working_counter_errors, not_op, faults, faulted, fault, devices: [{position, name, state}]} or null, "faults": [...]}   twice a second while a run goes
//! /morc/state          the operator page's state (GET /state): {"robot", "state", "joints": [{name, unit, q, qd, tau}], "override", "command", "faults", …}   ten times a second, runs or not
//! /robot_description   {"data": URDF}                    the robot for a 3D panel (std_msgs/String), latched: sent to each client as it subscribes
//! ```
//!
//! The robot's URDF ([`morc_model::display_urdf`]: links named as the frames of /tf) is also the
//! parameter `/robot_description` (the protocol's parameters capability), where Foxglove's URDF
//! layer looks for it. Times in /morc/stats and /morc/run are seconds.
//!
//! Time: every message is stamped with wall-clock time (the protocol's log time, and the
//! `timestamp` of the foxglove.* messages: UTC nanoseconds since the Unix epoch, as ROS and
//! Foxglove expect). A run's rows are stamped with the wall time its start maps to plus the run
//! time (not when they are drained, which goes in bursts); no stamp is ever before one sent
//! earlier, across runs too. `time` is the run's own time in seconds, restarting with each run
//! (as in recordings).
//!
//! Who may connect ([`access`]): the WebSocket handshake checks the Host header (DNS
//! rebinding), the Origin (none, Foxglove's app or the operator page) and, off loopback, the
//! token; anything else is answered 403.
//!
//! Beside it, on the next port, the operator page ([`page`]): a web page with the robot's state,
//! hold and resume, the override and jog buttons.
//!
//! All of it is one object, [`Live`]: its server, the robot it draws, what it reads while a run
//! goes and the page's state. Whoever starts the live view makes one and holds it (`morc --live`
//! its command line, a Lua state its app data); the bus is read through the kernel's
//! [`BusDiagnostics`], whichever bus it is.

#![warn(missing_docs)]

pub mod access;
pub mod admission;
pub mod page;
pub mod ws;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use foxglove::ws_protocol::parameter::{Parameter, ParameterValue};
use morc_kernel::*;
use morc_model::{FrameIndex, Model};
use morc_record::ring::{ring, RingConsumer, RingProducer};

/// The address `morc --live` serves on when none is given.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:8765";

/// The live view of one program (a `morc --live`, a Lua state's `morc.live`): its server while
/// one runs, the robot it draws, what it reads while a run goes (the engine's timing, the bus)
/// and the operator page's state. Made by whoever starts the live view and held there; a
/// handle: clones share one live view, two made apart share nothing.
#[derive(Clone, Default)]
pub struct Live(Arc<LiveState>);

#[derive(Default)]
struct LiveState {
    /// The server, while one runs.
    server: Mutex<Option<Arc<Server>>>,
    /// The robot of the engine, for taps whose request names none (`a:publish` does not know it).
    robot: Mutex<Option<LiveRobot>>,
    /// The robot last set and its URDF: goes on from one server to the next.
    description: Mutex<Option<(Arc<Model>, Arc<String>)>>,
    /// What the taps of the next runs read for `/morc/stats` and `/morc/bus`.
    sources: Mutex<Option<Sources>>,
    /// What the operator page shows and commands.
    page: Arc<page::Page>,
    /// The stamps of every server this live view runs.
    stamps: Arc<Stamps>,
}

/// Locks `m`; a thread that panicked holding it left nothing half-written that matters here.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running live server.
struct Server {
    ws: Option<ws::WsServer>,
    /// Who may connect, and the token.
    access: Arc<access::Access>,
    address: String,
    /// Rows dropped by full rings, over every run.
    dropped: AtomicU64,
    /// Rows sent, over every run.
    sent: AtomicU64,
    /// The operator page, on a port of its own.
    page: Option<page::PageServer>,
    /// The live view's stamps (shared with the servers before and after this one).
    stamps: Arc<Stamps>,
}

/// How long [`Live::stop`] lets queued messages go out to connected clients before closing.
const STOP_LINGER: std::time::Duration = std::time::Duration::from_millis(500);

/// How long [`Live::wait_for_client`] gives a connected client to subscribe.
const SUBSCRIBE_GRACE: Duration = Duration::from_secs(5);

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").field("address", &self.address()).finish()
    }
}

impl Live {
    /// A live view that serves nothing yet ([`start`](Self::start) serves it).
    pub fn new() -> Live {
        Live::default()
    }

    fn server(&self) -> Option<Arc<Server>> {
        lock(&self.0.server).clone()
    }

    /// Starts serving on `address` ("host:port"; port 0 picks a free one) and
    /// returns the address served. A server already running is stopped first. `token` is the
    /// secret commands always need and clients off loopback too (`--live-token`); none: a random one.
    pub fn start(&self, address: &str, token: Option<String>) -> Result<String, String> {
        if let Some(t) = &token {
            access::check_token(t)?;
        }
        self.stop();
        let (host, port) = address.rsplit_once(':').ok_or_else(|| format!("live view address '{address}': give host:port, e.g. {DEFAULT_ADDRESS}"))?;
        let port: u16 = port.parse().map_err(|_| format!("live view address '{address}': the port '{port}' is not a number from 0 to 65535"))?;
        let listener = std::net::TcpListener::bind((host.trim_matches(['[', ']']), port))
            .map_err(|e| format!("cannot serve the live view on {address}: {e} (is another morc --live or Foxglove bridge on that port? choose another with --live HOST:PORT)"))?;
        let live_port = listener.local_addr().map_err(|e| format!("cannot serve the live view on {address}: {e}"))?.port();
        let served = format!("{host}:{live_port}");
        // The page on the next port (a free one when that is taken, or when the live view took any).
        let page_port = if port == 0 { 0 } else { live_port.wrapping_add(1) };
        let page_listener = page::bind(host, page_port)
            .or_else(|_| page::bind(host, 0))
            .map_err(|e| format!("cannot serve the operator page on {host}: {e} (choose another address with --live HOST:PORT)"))?;
        let page_port = page_listener.local_addr().map_err(|e| format!("cannot serve the operator page on {host}: {e}"))?.port();
        let access = Arc::new(access::Access::new(host, live_port, page_port, token)?);
        let page = page::PageServer::start(page_listener, access.clone(), self.0.page.clone())
            .map_err(|e| format!("cannot serve the operator page on {host}: {e} (choose another address with --live HOST:PORT)"))?;
        let ws = ws::WsServer::start(listener, access.clone()).map_err(|e| format!("cannot serve the live view on {address}: {e}"))?;
        let server = Arc::new(Server {
            ws: Some(ws),
            access,
            address: served.clone(),
            dropped: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            page: Some(page),
            stamps: self.0.stamps.clone(),
        });
        // Advertised from the start, so a client is subscribed before a run ends or a line is logged.
        for (topic, schema) in
            [("/morc/run", "morc.Run"), ("/morc/live", "morc.Live"), ("/morc/log", "foxglove.Log"), ("/morc/stats", "morc.Stats"), ("/morc/bus", "morc.Bus"), (STATE_TOPIC, STATE_SCHEMA)]
        {
            server.advertise(topic, schema);
        }
        publish_state(Arc::downgrade(&server), self.0.page.clone());
        // The robot of an earlier server goes on: its description for each client as it subscribes.
        match self.robot_description() {
            Some(urdf) => server.describe(&urdf),
            None => server.advertise(DESCRIPTION_TOPIC, DESCRIPTION_SCHEMA),
        }
        *lock(&self.0.server) = Some(server);
        Ok(served)
    }

    /// Who may use the live view and the page (its token, its address), when the live view is on.
    pub fn access(&self) -> Option<Arc<access::Access>> {
        self.server().map(|s| s.access.clone())
    }

    /// Stops the server, if one runs; clients are disconnected (after a moment for what is queued).
    pub fn stop(&self) {
        let taken = lock(&self.0.server).take();
        if let Some(server) = taken {
            if let Ok(mut s) = Arc::try_unwrap(server) {
                if let Some(mut ws) = s.ws.take() {
                    // The last run's /morc/run and log lines were sent just before: each client gets
                    // what is queued for it (a moment at most), then a close.
                    ws.stop(STOP_LINGER);
                }
            }
            // Else a drain thread still holds it: the server stops when the run's tap ends.
        }
    }

    /// The address served, when the live view is on.
    pub fn address(&self) -> Option<String> {
        self.server().map(|s| s.address.clone())
    }

    /// The operator page's address ("host:port"), when the live view is on.
    pub fn page_address(&self) -> Option<String> {
        self.server().and_then(|s| s.page.as_ref().map(|p| p.address.clone()))
    }

    /// What the operator page shows and commands (the robot on the engine, the program, the last run).
    pub fn page(&self) -> &page::Page {
        &self.0.page
    }

    /// The page's state, shared (for views of the robot's state that outlive a borrow: ROS 2's).
    pub fn page_handle(&self) -> Arc<page::Page> {
        self.0.page.clone()
    }

    /// Clients connected now (0 when the live view is off).
    pub fn clients(&self) -> usize {
        self.server().and_then(|s| s.ws.as_ref().map(|w| w.client_count())).unwrap_or(0)
    }

    /// Waits until a client is connected, at most `timeout`; whether one is.
    /// A client subscribes to the topics it shows a moment after it connects: once one is
    /// connected, this also waits (up to [`SUBSCRIBE_GRACE`] more) until it has subscribed to
    /// something, so that what the program does next reaches it, the run's first log lines included.
    pub fn wait_for_client(&self, timeout: Duration) -> bool {
        let start = std::time::Instant::now();
        while self.clients() == 0 {
            if start.elapsed() >= timeout || self.server().is_none() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let connected = std::time::Instant::now();
        while !self.subscribed() && connected.elapsed() < SUBSCRIBE_GRACE {
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// Whether a client is subscribed to any of the live view's topics.
    fn subscribed(&self) -> bool {
        self.server().is_some_and(|s| s.ws.as_ref().is_some_and(|w| w.subscribed()))
    }

    /// Rows the live taps sent since the server started.
    pub fn sent(&self) -> u64 {
        self.server().map_or(0, |s| s.sent.load(Ordering::Relaxed))
    }

    /// Rows the live taps dropped since the server started (full rings).
    pub fn dropped(&self) -> u64 {
        self.server().map_or(0, |s| s.dropped.load(Ordering::Relaxed))
    }

    /// Messages dropped for clients that read too slowly since the server started (each client has
    /// a bounded queue: a slow client misses messages, the others and the robot do not wait).
    pub fn unsent(&self) -> u64 {
        self.server().and_then(|s| s.ws.as_ref().map(|w| w.unsent())).unwrap_or(0)
    }

    /// Sends a log line to `/morc/log` (level as `log::Level`), when the live view is on.
    pub fn log_line(&self, level: log::Level, target: &str, message: &str) {
        let Some(s) = self.server() else { return };
        // foxglove.Log levels: DEBUG 1, INFO 2, WARNING 3, ERROR 4.
        let level = match level {
            log::Level::Error => 4,
            log::Level::Warn => 3,
            log::Level::Info => 2,
            log::Level::Debug | log::Level::Trace => 1,
        };
        let stamp = s.stamps.now();
        let mut json = String::from(r#"{"timestamp":"#);
        push_stamp(&mut json, stamp);
        let _ = write!(json, r#","level":{level},"message":{},"name":{},"file":"","line":0}}"#, json_string(message), json_string(target));
        s.send("/morc/log", "foxglove.Log", &json, stamp);
    }

    /// Sends a finished run's statistics to `/morc/run`: its outcome, late
    /// ticks and each component's p99 and worst execution time.
    pub fn publish_run(&self, assembly: &str, result: &RunResult) {
        let (outcome, reason) = match &result.outcome {
            Outcome::Finished(r) => ("finished", r.clone()),
            Outcome::Fault(r) => ("fault", r.to_string()),
            Outcome::Cancelled => ("cancelled", String::new()),
        };
        // The page's state goes on with the live view off: ROS 2's `~/state` reads it.
        self.0.page.run_ended(assembly, outcome, &reason);
        let Some(s) = self.server() else { return };
        let mut json = format!(
            r#"{{"assembly":{},"outcome":"{outcome}","reason":{},"ticks":{},"late_ticks":{},"dropped":{},"components":["#,
            json_string(assembly),
            json_string(&reason),
            result.ticks,
            result.engine.late_ticks,
            s.dropped.load(Ordering::Relaxed)
        );
        for (i, c) in result.components.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            let _ =
                write!(json, r#"{{"name":{},"kind":{},"p99":{},"max":{},"overruns":{}}}"#, json_string(&c.name), json_string(&c.kind), c.exec.p99 as f64 * 1e-9, c.exec.max as f64 * 1e-9, c.overruns);
        }
        json.push_str("]}");
        s.send("/morc/run", "morc.Run", &json, s.stamps.now());
    }

    /// Sets the robot the taps of the next runs draw (the engine's robot), or none; a new robot's
    /// description goes out on `/robot_description` (topic and parameter).
    pub fn set_robot(&self, robot: Option<LiveRobot>) {
        let model = robot.as_ref().map(|r| r.model.clone());
        *lock(&self.0.robot) = robot;
        let Some(model) = model else { return };
        let urdf = {
            let mut d = lock(&self.0.description);
            if d.as_ref().is_some_and(|(m, _)| Arc::ptr_eq(m, &model)) {
                return;
            }
            let urdf = Arc::new(morc_model::display_urdf(&model));
            *d = Some((model, urdf.clone()));
            urdf
        };
        if let Some(s) = self.server() {
            s.describe(&urdf);
        }
    }

    /// The URDF of the robot last set ([`set_robot`](Self::set_robot)), as `/robot_description` serves it.
    pub fn robot_description(&self) -> Option<Arc<String>> {
        lock(&self.0.description).as_ref().map(|(_, u)| u.clone())
    }

    /// Sets what the taps of the next runs read for `/morc/stats` and `/morc/bus` (the engine's), or none.
    pub fn set_sources(&self, sources: Option<Sources>) {
        *lock(&self.0.sources) = sources;
    }

    /// The attachment that puts a [`LiveTap`] of this live view on the assembly when it is
    /// planned: the published signals, and the robot's q, qd and tau. The tap sends through
    /// the server that runs when the assembly starts (none: it does nothing).
    pub fn attachment(&self, request: LiveRequest) -> Attach {
        let live = self.0.clone();
        Arc::new(move |view| {
            let available: Vec<(String, ValueType, String)> = view.signals.iter().filter(|s| s.ty != ValueType::String).map(|s| (s.name.clone(), s.ty, s.unit.clone())).collect();
            let patterns: Vec<&str> = request.patterns.iter().map(String::as_str).collect();
            let mut signals = morc_record::expand(&patterns, &available)?;
            // The first `published` signals get channels of their own.
            let published = signals.len();
            let robot = request.robot.clone().or_else(|| lock(&live.robot).clone());
            // The robot's joints, for /joint_states and the frames, whether published or not.
            let joints: Vec<String> = ["q", "qd", "tau"].iter().map(|p| format!("{}.{p}", view.base_name)).collect();
            if robot.is_some() {
                for j in &joints {
                    if !signals.iter().any(|s| &s.0 == j) {
                        if let Some(s) = available.iter().find(|s| &s.0 == j) {
                            signals.push(s.clone());
                        }
                    }
                }
            }
            // Stepped every tick on the base thread and pushing every `decimation`-th (as the recorder
            // does): a slower tap would be a multirate component, handed to an Updater thread each time.
            let decimation = ((1.0 / (request.rate.max(1e-3) * view.base_period)).round() as u64).max(1);
            let mut tap = LiveTap::new(live.clone(), signals.clone(), robot, joints, published);
            tap.decimation = decimation;
            let inputs = signals.iter().map(|(name, _, _)| (name.clone(), LiveTap::input_port(name))).collect();
            Ok(Attachment { component: Box::new(tap), every: 1, inputs })
        })
    }
}

/// Who can reach a server on `address` ("host:port") when that is not loopback, as morc tells
/// the operator when it starts.
pub fn exposure(address: &str) -> String {
    let (host, port) = address.rsplit_once(':').unwrap_or((address, "?"));
    let host = host.trim_matches(['[', ']']);
    let who = match host.parse::<std::net::IpAddr>() {
        Ok(ip) if ip.is_unspecified() => format!("every interface ({host}): any machine that can reach this one"),
        _ => format!("{host}: any machine that can reach that address"),
    };
    format!("the live view and the operator page are served on {who} on port {port} (and the page's): a client without the token is refused (403); anyone with the token reads the robot and commands it from the page. Serve on 127.0.0.1 to keep it to this machine.")
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut ws) = self.ws.take() {
            ws.stop(STOP_LINGER);
        }
    }
}

/// The topic of the robot's state, as the operator page shows it.
const STATE_TOPIC: &str = "/morc/state";
const STATE_SCHEMA: &str = "morc.State";
/// How often the state goes out.
const STATE_EVERY: Duration = Duration::from_millis(100);

/// Sends the page's state on [`STATE_TOPIC`] every [`STATE_EVERY`] while `server` lives, whether
/// a run goes or not: a client sees `stopping` while the arm brakes and `idle` after, the same
/// word as the page.
fn publish_state(server: std::sync::Weak<Server>, page: Arc<page::Page>) {
    let spawned = std::thread::Builder::new().name("live-state".into()).spawn(move || loop {
        std::thread::sleep(STATE_EVERY);
        let Some(server) = server.upgrade() else { return };
        if server.ws.as_ref().is_some_and(|w| w.subscribed()) {
            server.send(STATE_TOPIC, STATE_SCHEMA, &page.state_json(), server.stamps.now());
        }
    });
    if let Err(e) = spawned {
        log::warn!("live view: cannot start the thread that sends {STATE_TOPIC}: {e}");
    }
}

/// The live view's clock of stamps: the last stamp sent (nanoseconds since the Unix epoch),
/// over every run and server of one live view: no stamp goes before it.
#[derive(Default)]
struct Stamps {
    last: AtomicU64,
}

/// The wall clock, in nanoseconds since the Unix epoch.
fn wall_clock_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

impl Stamps {
    /// The wall time a run starting now maps its time 0 to: now, or the last stamp sent when that
    /// is later (a run on the virtual clock may go faster than the wall clock), so that no run
    /// stamps before what an earlier one sent.
    fn run_epoch(&self) -> u64 {
        wall_clock_ns().max(self.last.load(Ordering::Relaxed))
    }

    /// The stamp of run time `t` (s) in the run that started at `epoch`.
    fn at(&self, epoch: u64, t: f64) -> u64 {
        let stamp = epoch.saturating_add((t.max(0.0) * 1e9).round() as u64);
        self.last.fetch_max(stamp, Ordering::Relaxed);
        stamp
    }

    /// The stamp of something that happens now (a log line, a run's end): the wall clock, or the
    /// last stamp sent when that is later.
    fn now(&self) -> u64 {
        let now = wall_clock_ns();
        now.max(self.last.fetch_max(now, Ordering::Relaxed))
    }
}

/// A stamp as the `{"sec", "nsec"}` of foxglove.* messages.
fn push_stamp(out: &mut String, stamp: u64) {
    let _ = write!(out, r#"{{"sec":{},"nsec":{}}}"#, stamp / 1_000_000_000, stamp % 1_000_000_000);
}

/// The JSON schema Foxglove reads for a message type.
fn schema_json(name: &str) -> String {
    let num = r#"{"type":"number"}"#;
    let vec3 = format!(r#"{{"type":"object","properties":{{"x":{num},"y":{num},"z":{num}}}}}"#);
    let quat = format!(r#"{{"type":"object","properties":{{"x":{num},"y":{num},"z":{num},"w":{num}}}}}"#);
    let time = r#"{"type":"object","properties":{"sec":{"type":"integer"},"nsec":{"type":"integer"}}}"#;
    match name {
        "foxglove.FrameTransforms" => format!(
            r#"{{"type":"object","properties":{{"transforms":{{"type":"array","items":{{"type":"object","properties":{{"timestamp":{time},"parent_frame_id":{{"type":"string"}},"child_frame_id":{{"type":"string"}},"translation":{vec3},"rotation":{quat}}}}}}}}}}}"#
        ),
        "foxglove.PoseInFrame" => {
            format!(r#"{{"type":"object","properties":{{"timestamp":{time},"frame_id":{{"type":"string"}},"pose":{{"type":"object","properties":{{"position":{vec3},"orientation":{quat}}}}}}}}}"#)
        }
        DESCRIPTION_SCHEMA => r#"{"type":"object","properties":{"data":{"type":"string"}}}"#.to_string(),
        "foxglove.Log" => format!(
            r#"{{"type":"object","properties":{{"timestamp":{time},"level":{{"type":"integer"}},"message":{{"type":"string"}},"name":{{"type":"string"}},"file":{{"type":"string"}},"line":{{"type":"integer"}}}}}}"#
        ),
        _ => r#"{"type":"object"}"#.to_string(),
    }
}

impl Server {
    /// Advertises `topic` (JSON of `schema`) if it is not yet.
    fn advertise(&self, topic: &str, schema: &str) {
        if let Some(ws) = &self.ws {
            ws.advertise(topic, schema, &schema_json(schema));
        }
    }

    /// Sends `json` on `topic` (advertised on first use), stamped `stamp`.
    fn send(&self, topic: &str, schema: &str, json: &str, stamp: u64) {
        if let Some(ws) = &self.ws {
            ws.send(topic, schema, || schema_json(schema), json.as_bytes(), stamp);
        }
    }

    /// Sends the robot's description (topic, latched; and parameter).
    fn describe(&self, urdf: &str) {
        if let Some(ws) = &self.ws {
            ws.send_latched(DESCRIPTION_TOPIC, DESCRIPTION_SCHEMA, &schema_json(DESCRIPTION_SCHEMA), description_json(urdf).as_bytes(), self.stamps.now());
            ws.set_parameter(description_parameter(urdf));
        }
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The robot, as the live view draws it.
#[derive(Clone)]
pub struct LiveRobot {
    /// The model for the frames of every link.
    pub model: Arc<Model>,
    /// The frame whose pose is the tool pose.
    pub tool_frame: FrameIndex,
}

/// What a program publishes from an assembly.
#[derive(Clone)]
pub struct LiveRequest {
    /// Signal names or globs ("robot.q", "ff.*").
    pub patterns: Vec<String>,
    /// The robot the assembly drives, for joint states, tool pose and frames.
    pub robot: Option<LiveRobot>,
    /// Samples per second sent (the tap steps every round(1 / (rate · T)) ticks).
    pub rate: f64,
}

/// The topic and parameter the robot's URDF is served as (where Foxglove's URDF layer looks).
pub const DESCRIPTION_TOPIC: &str = "/robot_description";
const DESCRIPTION_SCHEMA: &str = "std_msgs/msg/String";

fn description_json(urdf: &str) -> String {
    format!("{{\"data\":{}}}", json_string(urdf))
}

fn description_parameter(urdf: &str) -> Parameter {
    Parameter { name: DESCRIPTION_TOPIC.into(), r#type: None, value: Some(ParameterValue::String(urdf.to_string())) }
}

/// What the live view reads besides the taps while a run goes: the engine's timing and the
/// bus (when the robot runs on one), for `/morc/stats` and `/morc/bus`.
#[derive(Clone)]
pub struct Sources {
    /// The engine's timing cell ([`Engine::timing_cell`]).
    pub timing: Arc<TimingCell>,
    /// The diagnostics of the bus the engine runs ([`Engine::bus`]), if it runs one.
    pub bus: Option<Arc<dyn BusDiagnostics>>,
}

/// How often the drain thread sends `/morc/stats` and `/morc/bus`.
const STATUS_PERIOD: Duration = Duration::from_millis(500);

/// The tap's name in an assembly.
pub const TAP_NAME: &str = "live";

/// One column of a tap's row.
#[derive(Clone, Debug)]
struct Column {
    name: String,
    ty: ValueType,
    offset: usize,
    width: usize,
    /// Sent on its own channel (published), or only used for the robot's channels.
    own_channel: bool,
}

/// The component on the real-time path: copies its inputs into a
/// preallocated ring every step; a drain thread sends them.
pub struct LiveTap {
    info: ComponentInfo,
    /// The live view it sends to (its server when the run starts).
    live: Arc<LiveState>,
    columns: Vec<Column>,
    robot: Option<LiveRobot>,
    /// Offsets of robot.q, robot.qd, robot.tau in a row (if present).
    joints: [Option<(usize, usize)>; 3],
    row: Vec<f64>,
    /// Pushes every this many steps.
    decimation: u64,
    producer: Option<RingProducer>,
    drain: Option<Drain>,
    /// Published by the drain thread: rows sent.
    sent: Arc<AtomicU64>,
}

struct Drain {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl LiveTap {
    /// A tap of `signals` (name, type, unit); the first `published` get channels of their own,
    /// the robot's `joints` (q, qd, tau names) feed its channels.
    fn new(live: Arc<LiveState>, signals: Vec<(String, ValueType, String)>, robot: Option<LiveRobot>, joints: Vec<String>, published: usize) -> Self {
        let mut info = ComponentInfo::new("live", "copies its inputs to the live view (Foxglove WebSocket) off the real-time path; results: name.sent, name.dropped");
        let mut columns = Vec::new();
        let mut offset = 1;
        let mut joint_at = [None, None, None];
        for (i, (name, ty, unit)) in signals.iter().enumerate() {
            info = info.input(PortInfo::new(&Self::input_port(name), *ty).unit(unit).required());
            let width = match ty {
                ValueType::Vector(n) => *n,
                _ => 1,
            };
            if let Some(k) = joints.iter().position(|j| j == name) {
                joint_at[k] = Some((offset, width));
            }
            columns.push(Column { name: name.clone(), ty: *ty, offset, width, own_channel: i < published });
            offset += width;
        }
        LiveTap {
            info,
            live,
            columns,
            robot,
            joints: joint_at,
            row: vec![0.0; offset],
            decimation: 1,
            producer: None,
            drain: None,
            sent: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The input port that takes `signal`: "robot.q" → "robot/q".
    pub fn input_port(signal: &str) -> String {
        signal.replace('.', "/")
    }

    fn stop_drain(&mut self) {
        self.producer = None;
        if let Some(d) = self.drain.take() {
            d.stop.store(true, Ordering::Release);
            d.thread.thread().unpark();
            let _ = d.thread.join();
        }
    }
}

impl Component for LiveTap {
    morc_kernel::component_info!(info);

    fn initialize(&mut self, ctx: &InitContext, _outputs: &mut [Value]) -> Result<(), String> {
        self.stop_drain();
        let Some(server) = lock(&self.live.server).clone() else {
            // The live view is off: the tap does nothing.
            return Ok(());
        };
        // Two seconds of rows, at least 1024: the drain thread looks every 20 ms.
        let rows = ((2.0 / (ctx.period * self.decimation as f64)).ceil() as usize).max(1024);
        let (producer, consumer) = ring(rows, self.row.len());
        let stop = Arc::new(AtomicBool::new(false));
        let sources = lock(&self.live.sources).clone();
        // The run starts now: its time 0 is stamped with the wall clock now (or the last stamp sent).
        let epoch = server.stamps.run_epoch();
        let sender = Sender {
            server,
            page: self.live.page.clone(),
            columns: self.columns.clone(),
            robot: self.robot.clone(),
            joints: self.joints,
            sent: self.sent.clone(),
            reported_drops: 0,
            sources,
            epoch,
        };
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("live-{}", ctx.name))
            .spawn(move || sender.run(consumer, &stop2))
            .map_err(|e| format!("cannot start the live view's thread: {e}"))?;
        self.producer = Some(producer);
        self.drain = Some(Drain { stop, thread });
        Ok(())
    }

    /// Real-time path: copies the inputs into the preallocated row and
    /// pushes it; never blocks, allocates or calls the system.
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], _outputs: &mut [Value]) -> Step {
        if !ctx.step.is_multiple_of(self.decimation) {
            return Step::Continue;
        }
        let Some(producer) = self.producer.as_mut() else {
            return Step::Continue;
        };
        self.row[0] = ctx.time;
        for (c, v) in self.columns.iter().zip(inputs) {
            match v {
                Value::Vector(x) => {
                    let n = c.width.min(x.len());
                    self.row[c.offset..c.offset + n].copy_from_slice(&x[..n]);
                }
                other => self.row[c.offset] = other.real(),
            }
        }
        // A full ring drops the row and counts it (/morc/live shows it).
        producer.push_row(&self.row);
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        self.stop_drain();
        results.set("sent", Value::Integer(self.sent.load(Ordering::Relaxed) as i64));
    }
}

impl Drop for LiveTap {
    fn drop(&mut self) {
        self.stop_drain();
    }
}

/// The drain thread's side: rows to JSON messages.
struct Sender {
    server: Arc<Server>,
    /// The operator page's state, for the faults `/morc/bus` lists.
    page: Arc<page::Page>,
    columns: Vec<Column>,
    robot: Option<LiveRobot>,
    joints: [Option<(usize, usize)>; 3],
    sent: Arc<AtomicU64>,
    reported_drops: u64,
    sources: Option<Sources>,
    /// The wall time (ns since the Unix epoch) the run's time 0 maps to.
    epoch: u64,
}

fn push_number(out: &mut String, x: f64) {
    if x.is_finite() {
        let _ = write!(out, "{x:?}");
    } else {
        out.push_str("null");
    }
}

fn push_array(out: &mut String, xs: &[f64]) {
    out.push('[');
    for (k, x) in xs.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        push_number(out, *x);
    }
    out.push(']');
}

impl Sender {
    fn run(mut self, mut consumer: RingConsumer, stop: &AtomicBool) {
        let width = consumer.width();
        let mut batch = Vec::with_capacity(consumer.capacity() * width);
        let mut json = String::with_capacity(1024);
        let mut data = self.robot.as_ref().map(|r| morc_model::Data::new(&r.model));
        if let Some(s) = &self.sources {
            s.timing.request();
        }
        let mut status_sent = std::time::Instant::now();
        let mut last_time = 0.0;
        loop {
            let stopping = stop.load(Ordering::Acquire);
            batch.clear();
            let n = consumer.pop_into(&mut batch, usize::MAX);
            for row in batch.chunks_exact(width) {
                self.send_row(row, &mut json, data.as_mut());
            }
            self.sent.fetch_add(n as u64, Ordering::Relaxed);
            self.server.sent.fetch_add(n as u64, Ordering::Relaxed);
            let dropped = consumer.dropped();
            if n > 0 || dropped != self.reported_drops {
                self.server.dropped.fetch_add(dropped - self.reported_drops, Ordering::Relaxed);
                self.reported_drops = dropped;
                let t = batch.len().checked_sub(width).map_or(last_time, |i| batch[i]);
                last_time = t;
                json.clear();
                json.push_str("{\"time\":");
                push_number(&mut json, t);
                let _ = write!(json, ",\"rows\":{},\"dropped\":{}}}", self.sent.load(Ordering::Relaxed), dropped);
                self.server.send("/morc/live", "morc.Live", &json, self.server.stamps.at(self.epoch, t));
            }
            if stopping || status_sent.elapsed() >= STATUS_PERIOD {
                status_sent = std::time::Instant::now();
                self.send_status(last_time, &mut json);
            }
            if stopping {
                break;
            }
            std::thread::park_timeout(Duration::from_millis(20));
        }
    }

    /// `/morc/stats` (the engine's timing copied since last asked; asks again) and `/morc/bus`.
    fn send_status(&self, t: f64, json: &mut String) {
        let Some(sources) = &self.sources else { return };
        if let Some(timing) = sources.timing.latest() {
            json.clear();
            json.push_str("{\"time\":");
            push_number(json, t);
            let _ = write!(json, r#","assembly":{},"ticks":{},"late_ticks":{},"cycle":"#, json_string(&timing.assembly), timing.ticks, timing.late_ticks);
            push_timing(json, &timing.cycle);
            json.push_str(",\"components\":[");
            for (i, c) in timing.components.iter().enumerate() {
                if i > 0 {
                    json.push(',');
                }
                let _ = write!(json, r#"{{"name":{},"kind":{},"every":{},"steps":{},"overruns":{},"exec":"#, json_string(&c.name), json_string(&c.kind), c.every, c.steps, c.overruns);
                push_timing(json, &c.exec);
                json.push('}');
            }
            let _ = write!(json, r#"],"rows":{},"dropped":{}}}"#, self.sent.load(Ordering::Relaxed), self.reported_drops);
            self.server.send("/morc/stats", "morc.Stats", json, self.server.stamps.at(self.epoch, t));
        }
        sources.timing.request();

        json.clear();
        json.push_str("{\"time\":");
        push_number(json, t);
        json.push_str(",\"bus\":");
        match &sources.bus {
            Some(bus) => {
                let b = bus.status();
                let fault = b.fault.as_deref().map_or("null".to_string(), json_string);
                let _ = write!(
                    json,
                    r#"{{"cycles":{},"lost_frames":{},"working_counter_errors":{},"not_op":{},"faults":{},"faulted":{},"fault":{fault},"devices":["#,
                    b.cycles, b.lost_frames, b.working_counter_errors, b.not_op, b.faults, b.faulted
                );
                for (i, d) in b.devices.iter().enumerate() {
                    if i > 0 {
                        json.push(',');
                    }
                    let _ = write!(json, r#"{{"position":{},"name":{},"state":{}}}"#, d.position, json_string(&d.name), json_string(d.state));
                }
                json.push_str("]}");
            }
            None => json.push_str("null"),
        }
        json.push_str(",\"faults\":");
        page::push_strings(json, &self.page.faults());
        json.push('}');
        self.server.send("/morc/bus", "morc.Bus", json, self.server.stamps.at(self.epoch, t));
    }

    fn send_row(&self, row: &[f64], json: &mut String, data: Option<&mut morc_model::Data>) {
        let t = row[0];
        let stamp = self.server.stamps.at(self.epoch, t);
        for c in self.columns.iter().filter(|c| c.own_channel) {
            json.clear();
            json.push_str("{\"time\":");
            push_number(json, t);
            json.push_str(",\"value\":");
            match c.ty {
                ValueType::Vector(_) => push_array(json, &row[c.offset..c.offset + c.width]),
                ValueType::Integer => {
                    let _ = write!(json, "{}", row[c.offset] as i64);
                }
                ValueType::Boolean => json.push_str(if row[c.offset] != 0.0 { "true" } else { "false" }),
                _ => push_number(json, row[c.offset]),
            }
            json.push('}');
            self.server.send(&c.name, &format!("morc.{}", c.ty), json, stamp);
        }
        let (Some(robot), Some((q_at, nq))) = (&self.robot, self.joints[0]) else {
            return;
        };
        let q = &row[q_at..q_at + nq];
        let names = robot.model.joint_names();
        json.clear();
        json.push_str("{\"time\":");
        push_number(json, t);
        json.push_str(",\"name\":[");
        for (i, n) in names.iter().skip(names.len().saturating_sub(nq)).enumerate() {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&json_string(n));
        }
        json.push_str("],\"position\":");
        push_array(json, q);
        for (key, at) in [("velocity", self.joints[1]), ("effort", self.joints[2])] {
            let _ = write!(json, ",\"{key}\":");
            match at {
                Some((o, w)) => push_array(json, &row[o..o + w]),
                None => json.push_str("[]"),
            }
        }
        json.push('}');
        self.server.send("/joint_states", "morc.JointState", json, stamp);

        let Some(data) = data else { return };
        if q.len() != robot.model.nq() {
            return;
        }
        morc_model::forward_kinematics_placements(&robot.model, data, q);
        morc_model::update_frame_placements(&robot.model, data);
        let mut timestamp = String::new();
        push_stamp(&mut timestamp, stamp);
        let pose = |json: &mut String, x: &morc_model::Se3| {
            let p = x.translation;
            let r = nalgebra_quat(x);
            let _ = write!(json, r#"{{"x":{:?},"y":{:?},"z":{:?}}},"#, p[0], p[1], p[2]);
            let _ = write!(json, r#"{{"x":{:?},"y":{:?},"z":{:?},"w":{:?}}}"#, r[0], r[1], r[2], r[3]);
        };
        json.clear();
        json.push_str("{\"transforms\":[");
        for (i, f) in robot.model.frames().iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            let x = morc_model::frame_placement(&robot.model, data, i);
            let _ = write!(json, r#"{{"timestamp":{timestamp},"parent_frame_id":"world","child_frame_id":{},"translation":"#, json_string(&f.name));
            // pose() writes translation, then the rotation object; name the rotation field between.
            let mut one = String::new();
            pose(&mut one, &x);
            let (tr, rot) = one.split_once("},").unwrap_or((&one, ""));
            let _ = write!(json, "{tr}}},\"rotation\":{rot}}}");
        }
        json.push_str("],\"time\":");
        push_number(json, t);
        json.push('}');
        self.server.send("/tf", "foxglove.FrameTransforms", json, stamp);

        let tool = morc_model::frame_placement(&robot.model, data, robot.tool_frame);
        let mut one = String::new();
        pose(&mut one, &tool);
        let (tr, rot) = one.split_once("},").unwrap_or((&one, ""));
        json.clear();
        let _ = write!(json, r#"{{"timestamp":{timestamp},"frame_id":"world","pose":{{"position":{tr}}},"orientation":{rot}}},"time":"#);
        push_number(json, t);
        json.push('}');
        self.server.send("/tool_pose", "foxglove.PoseInFrame", json, stamp);
    }
}

/// A histogram's mean, p99 and max in seconds, as a JSON object.
fn push_timing(out: &mut String, h: &Histogram) {
    let _ = write!(out, r#"{{"count":{},"mean":"#, h.count());
    push_number(out, h.mean() * 1e-9);
    out.push_str(",\"p99\":");
    push_number(out, h.quantile(0.99) as f64 * 1e-9);
    out.push_str(",\"max\":");
    push_number(out, h.max() as f64 * 1e-9);
    out.push('}');
}

/// The rotation of `x` as a unit quaternion (x, y, z, w).
fn nalgebra_quat(x: &morc_model::Se3) -> [f64; 4] {
    let q = nalgebra::UnitQuaternion::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(x.rotation));
    [q.i, q.j, q.k, q.w]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_live_views_share_nothing() {
        let (a, b) = (Live::new(), Live::new());
        let served = a.start("127.0.0.1:0", None).unwrap();
        assert_eq!(a.address().as_deref(), Some(served.as_str()));
        assert_eq!(b.address(), None, "b serves nothing");
        let other = b.start("127.0.0.1:0", None).unwrap();
        assert_ne!(served, other);
        assert_ne!(a.access().unwrap().token(), b.access().unwrap().token());
        a.page().set_program("a.lua");
        assert!(a.page().state_json().contains("a.lua") && !b.page().state_json().contains("a.lua"));
        let shared = a.clone();
        a.stop();
        assert_eq!(shared.address(), None, "a clone is the same live view");
        assert_eq!(b.address().as_deref(), Some(other.as_str()), "stopping a leaves b serving");
        b.stop();
    }
}

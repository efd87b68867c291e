//! The operator page: a small web page served beside the live view (`morc --live`) for a lab
//! PC that has a browser and nothing else. It shows the robot on the engine (joints, tool pose,
//! its one state: idle, moving, paused, jogging, holding, stopping or faulted; the override), the running
//! command and its progress, faults with a reset button, and has hold and resume, an override
//! slider and joint jog buttons.
//!
//! HTTP is hyper's (http1) on a small tokio runtime of its own: every connection is a task;
//! [`crate::admission`] budgets them so that connections not (yet) carrying the token — silent,
//! slow or idle on keep-alive — cannot crowd out the token's holder, and a body is at most
//! [`MAX_BODY`] bytes, so no client holds up Hold or Reset. Who may do what is [`crate::access`]'s: the
//! Host must name the address served, commands need the token (header `X-Morc-Token` or the
//! cookie set when the page is opened with `?token=`), come with a JSON body and from the page's
//! own origin. The page is one HTML file embedded in the binary (no build step, nothing loaded
//! from elsewhere). Its state comes from the engine's lock-free snapshot ([`BaseSnapshot`]); its
//! commands go through the robot's operator handles ([`Controls`], the ones `robot:override()`,
//! `robot:pause()` and the REPL's jog use), never into the Lua state.
//!
//! ```text
//! GET  /?token=T               the page (sets the cookie morc_token)
//! GET  /state                  the state as JSON (without the token on loopback only)
//! POST /hold  /resume          pause the running motion on its path, go on
//! POST /override   {"percent": P}                       the speed override, 0–100 %
//! POST /jog        {"joint": J, "dir": ±1, "step": S, "speed": V}   jog joint J (1-based) by S ° or mm
//!                  (S = 0: while held, kept alive by /jog/hold); V % of its velocity limit
//! POST /jog        {"axis": A, "frame": F, "dir": ±1, "step": S, "speed": V}   the tool along x, y, z (S mm)
//!                  or about a, b, c (S °; A about z, B about y, C about x, as on a KUKA pendant)
//!                  of the base or tool frame (F = "base" | "tool"); answers {"ok":true,"id":N}
//! POST /jog/hold   {"id": N}   keeps the held jog N moving another 200 ms (the page sends one every 50 ms)
//! POST /jog/stop               stops jogging
//! POST /reset                  resets latched faults and clears the last run's fault
//! ```
//! Commands need `Content-Type: application/json` (a page of another origin cannot send that
//! without the browser asking first, and morc does not answer such asks). A jog with no jog
//! session running is refused (409) and forgotten.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE, COOKIE, HOST, ORIGIN, SET_COOKIE};
use hyper::{Method, Request, Response, StatusCode};
use morc_kernel::{BaseSnapshot, RobotState, StateFacts, Value};
use morc_model::{FrameIndex, Model};
use serde_json::{Map, Value as Json};

use crate::access::{Access, TOKEN_COOKIE, TOKEN_HEADER, TOKEN_QUERY};
use crate::admission::{Admission, HEADER_TIMEOUT, SWEEP_EVERY};

/// The page, embedded in the binary.
const PAGE: &str = include_str!("operator_page.html");

/// How long one heartbeat of a held jog keeps it moving: the page sends one every 50 ms, so a
/// closed tab or a lost network stops the jog (it starts braking) at most this long after the last.
pub const JOG_HOLD: Duration = Duration::from_millis(200);

/// A command's body: a small JSON object.
pub const MAX_BODY: usize = 4096;
/// A body must arrive within this.
const BODY_TIMEOUT: Duration = Duration::from_secs(5);

/// The robot's operator handles, as the page uses them (implemented over the robot's
/// `Operator` and the bus, where there is one). Called from the page's threads.
pub trait Controls: Send + Sync {
    /// Pauses the running motion on its path.
    fn hold(&self);
    /// Goes on from where the motion paused.
    fn resume(&self);
    /// Whether a pause is asked for.
    fn paused(&self) -> bool;
    /// Sets the override (0–1).
    fn set_override(&self, fraction: f64) -> Result<(), String>;
    /// The override asked for (0–1).
    fn override_setting(&self) -> f64;
    /// The running motion's progress (0–1) and the override it moves at now (0–1), if one runs.
    fn motion(&self) -> Option<(f64, f64)>;
    /// Jogs `axis` in direction `dir` (±1) at `speed` (0–1 of the joint's limit or of the tool's
    /// jog speed) by `step` (rad or m; 0: while held, until `hold` from now unless held longer);
    /// the command's id, or why not (no jog session runs: nothing is stored).
    fn jog(&self, axis: JogAxis, dir: f64, step: f64, speed: f64, hold: Duration) -> Result<u64, String>;
    /// Keeps the held jog `id` moving until `hold` from now; false when it is no longer the jog.
    fn hold_jog(&self, id: u64, hold: Duration) -> bool;
    /// Stops jogging.
    fn stop_jog(&self);
    /// Whether a jog session runs (jog commands are taken).
    fn jogging(&self) -> bool;
    /// Why the last jog stopped by itself, in words.
    fn jog_stopped(&self) -> Option<String>;
    /// Latched faults (the bus's), in words.
    fn faults(&self) -> Vec<String>;
    /// Asks to reset latched faults; what was done, in words.
    fn reset_faults(&self) -> String;
}

/// What a jog button moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JogAxis {
    /// A joint (0-based).
    Joint(usize),
    /// The tool along x, y, z (0–2) or about them (3–5), axes of the robot's base.
    Base(usize),
    /// As `Base`, axes of the tool.
    Tool(usize),
}

/// One joint as the page shows it.
#[derive(Clone, Debug)]
pub struct PageJoint {
    /// Its name.
    pub name: String,
    /// Display units per SI unit (180/π for °, 1000 for mm).
    pub scale: f64,
    /// The display unit ("°" or "mm").
    pub unit: String,
}

/// The robot on the engine, as the page reads and commands it.
#[derive(Clone)]
pub struct Station {
    /// The robot's name.
    pub robot: String,
    /// Its joints, in order.
    pub joints: Vec<PageJoint>,
    /// The model, for the tool pose.
    pub model: Arc<Model>,
    /// The tool frame.
    pub tool_frame: FrameIndex,
    /// The engine's snapshot cell.
    pub snapshot: Arc<BaseSnapshot>,
    /// The robot's operator handles.
    pub controls: Arc<dyn Controls>,
}

#[derive(Default)]
struct PageState {
    station: Option<Station>,
    /// The program `morc run` runs.
    program: Option<String>,
    /// An assembly was started and has not ended.
    running: bool,
    /// The last run: assembly, outcome, reason.
    last_run: Option<(String, String, String)>,
    /// The last run's fault, until reset.
    fault: Option<String>,
}

/// What the page of one live view ([`crate::Live::page`]) shows and commands: the robot on the
/// engine, the program, the last run. Shared by the page's server and the live view's taps.
#[derive(Default)]
pub struct Page {
    state: Mutex<PageState>,
}

impl Page {
    fn with<R>(&self, f: impl FnOnce(&mut PageState) -> R) -> R {
        f(&mut crate::lock(&self.state))
    }

    /// Sets the robot the page shows and commands (the engine's), or none.
    pub fn set_station(&self, station: Option<Station>) {
        self.with(|s| s.station = station);
    }

    /// Names the program that runs (shown on the page).
    pub fn set_program(&self, program: &str) {
        self.with(|s| s.program = Some(program.to_string()));
    }

    /// An assembly starts on the engine.
    pub fn run_starting(&self) {
        self.with(|s| s.running = true);
    }

    /// A run morc made for itself ended: not the operator's last run, but nothing runs now.
    pub fn run_left(&self) {
        self.with(|s| s.running = false);
    }

    /// An assembly ended: `outcome` is "finished", "fault" or "cancelled".
    pub(crate) fn run_ended(&self, assembly: &str, outcome: &str, reason: &str) {
        self.with(|s| {
            s.running = false;
            s.last_run = Some((assembly.to_string(), outcome.to_string(), reason.to_string()));
            s.fault = (outcome == "fault").then(|| format!("the last run ({assembly}) faulted: {reason}"));
        });
    }
}

/// The page's server: a tokio runtime of its own, stopped when dropped.
pub(crate) struct PageServer {
    /// The address served ("host:port").
    pub address: String,
    runtime: Option<tokio::runtime::Runtime>,
}

/// Binds the page's listener on `host:port` (0: a free port).
pub(crate) fn bind(host: &str, port: u16) -> std::io::Result<std::net::TcpListener> {
    std::net::TcpListener::bind((host.trim_matches(['[', ']']), port))
}

impl PageServer {
    /// Serves `page` on `listener` under `access`.
    pub fn start(listener: std::net::TcpListener, access: Arc<Access>, page: Arc<Page>) -> std::io::Result<PageServer> {
        let local = listener.local_addr()?;
        let address = if local.is_ipv6() { format!("[{}]:{}", local.ip(), local.port()) } else { local.to_string() };
        listener.set_nonblocking(true)?;
        // Two workers: a command is a few atomic stores, the state a few microseconds of work.
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("operator-page").enable_all().build()?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        runtime.spawn(serve(listener, access, page, local.port()));
        Ok(PageServer { address, runtime: Some(runtime) })
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// Accepts connections, each served by a task of its own, as [`Admission`] admits them.
async fn serve(listener: tokio::net::TcpListener, access: Arc<Access>, page: Arc<Page>, port: u16) {
    let admission = Arc::new(Admission::default());
    let sweeper = admission.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        loop {
            every.tick().await;
            sweeper.sweep(Instant::now());
        }
    });
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors, most likely: wait a moment rather than spin.
                log::warn!("operator page: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(ticket) = admission.admit(peer.ip(), stream.as_raw_fd(), Instant::now()) else {
            log::debug!("operator page: every connection is busy or the token's: closing a new one from {peer}");
            continue;
        };
        let (access, page) = (access.clone(), page.clone());
        tokio::spawn(async move {
            let ticket = Arc::new(ticket);
            let _ = stream.set_nodelay(true);
            let served = ticket.clone();
            let service = hyper::service::service_fn(move |request| {
                let (access, page, ticket) = (access.clone(), page.clone(), served.clone());
                async move {
                    let asked = asked(&request);
                    let proven = asked.token.as_deref().or(asked.query(TOKEN_QUERY)).is_some_and(|t| access.token_matches(t));
                    ticket.request_started(proven, Instant::now());
                    let response = answer(request, asked, &access, &page, port).await;
                    ticket.request_answered(Instant::now());
                    Ok::<_, Infallible>(response)
                }
            });
            // The header timeout is the admission's (shorter under pressure); hyper's own is a backstop.
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT + Duration::from_secs(1))
                .max_buf_size(16 * 1024)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let served = tokio::select! {
                served = connection.as_mut() => served,
                () = ticket.closing() => {
                    // Pushed out or past its time: an answer being written is finished, then closed.
                    connection.as_mut().graceful_shutdown();
                    tokio::time::timeout(Duration::from_secs(1), connection.as_mut()).await.unwrap_or(Ok(()))
                }
            };
            // The slot goes before the socket closes (the pinned connection, at the end of the task).
            ticket.leave();
            if let Err(e) = served {
                log::debug!("operator page: {e}");
            }
        });
    }
}

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";

/// An answer: status, content type, body.
type Answer = (StatusCode, &'static str, String);

fn text(status: StatusCode, message: impl Into<String>) -> Answer {
    (status, TEXT, message.into())
}

/// What one request asks, read off hyper's request.
struct Asked {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    host: Option<String>,
    origin: Option<String>,
    content_type: Option<String>,
    /// The token from the header, else the cookie.
    token: Option<String>,
}

fn header(request: &Request<Incoming>, name: impl hyper::header::AsHeaderName) -> Option<String> {
    request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
}

fn asked(request: &Request<Incoming>) -> Asked {
    let query = request
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    let cookie = request
        .headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(TOKEN_COOKIE).and_then(|r| r.strip_prefix('=')).map(str::to_string));
    Asked {
        method: request.method().clone(),
        path: request.uri().path().to_string(),
        query,
        host: header(request, HOST),
        origin: header(request, ORIGIN),
        content_type: header(request, CONTENT_TYPE),
        token: header(request, TOKEN_HEADER).or(cookie),
    }
}

impl Asked {
    fn query(&self, key: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Answers one request.
async fn answer(request: Request<Incoming>, asked: Asked, access: &Access, page: &Page, port: u16) -> Response<Full<Bytes>> {
    let mut set_cookie = None;
    let (status, content_type, body) = match check(&asked, access, port) {
        Err(refused) => refused,
        Ok(Route::Page) => {
            // Opened with the token: the cookie carries it from now on (a reload of "/" included).
            if let Some(t) = asked.query(TOKEN_QUERY).filter(|t| access.token_matches(t)) {
                set_cookie = Some(format!("{TOKEN_COOKIE}={t}; HttpOnly; SameSite=Strict; Path=/"));
            }
            (StatusCode::OK, "text/html; charset=utf-8", PAGE.to_string())
        }
        Ok(Route::State) => (StatusCode::OK, JSON, page.state_json()),
        Ok(Route::Command) => {
            let limited = Limited::new(request.into_body(), MAX_BODY);
            match tokio::time::timeout(BODY_TIMEOUT, limited.collect()).await {
                Err(_) => text(StatusCode::REQUEST_TIMEOUT, format!("{} {}: the body did not arrive within {} s", asked.method, asked.path, BODY_TIMEOUT.as_secs())),
                Ok(Err(_)) => text(StatusCode::PAYLOAD_TOO_LARGE, format!("{} {}: a command's body is a small JSON object (at most {MAX_BODY} bytes)", asked.method, asked.path)),
                Ok(Ok(body)) => match parse_body(&asked, &body.to_bytes()) {
                    Err(e) => e,
                    Ok(fields) => match run_command(page, &asked.path, &fields) {
                        Ok(done) => (StatusCode::OK, JSON, done),
                        Err(e) => e,
                    },
                },
            }
        }
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(c) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(SET_COOKIE, c);
    }
    response
}

/// What a request that passed the checks is for.
#[derive(Debug, PartialEq)]
enum Route {
    Page,
    State,
    Command,
}

const COMMANDS: &[&str] = &["/hold", "/resume", "/override", "/jog", "/jog/hold", "/jog/stop", "/reset"];

/// Who may ask what: the Host first (a rebound name gets nothing, not even the page), then the
/// route and method, then the token, Origin and Content-Type of a command.
fn check(asked: &Asked, access: &Access, port: u16) -> Result<Route, Answer> {
    let forbidden = |why: String| text(StatusCode::FORBIDDEN, why);
    access.check_host(asked.host.as_deref(), port).map_err(|r| forbidden(r.to_string()))?;
    let what = format!("{} {}", asked.method, asked.path);
    let route = match asked.path.as_str() {
        "/" | "/index.html" => Route::Page,
        "/state" => Route::State,
        p if COMMANDS.contains(&p) => Route::Command,
        p => return Err(text(StatusCode::NOT_FOUND, format!("no page '{p}' here: the operator page is at /, its state at /state"))),
    };
    match (&asked.method, &route) {
        (&Method::GET, Route::Page | Route::State) | (&Method::POST, Route::Command) => {}
        (_, Route::Command) => return Err(text(StatusCode::METHOD_NOT_ALLOWED, format!("{what}: commands are sent with POST and a JSON body"))),
        _ => return Err(text(StatusCode::METHOD_NOT_ALLOWED, format!("{what}: use GET"))),
    }
    match route {
        Route::Page => {}
        Route::State => {
            let token = asked.token.as_deref().or(asked.query(TOKEN_QUERY));
            if !access.may_read(token) {
                return Err(forbidden(format!("{what}: {}", crate::access::Refusal::Token)));
            }
        }
        Route::Command => {
            access.check_command_origin(asked.origin.as_deref(), asked.host.as_deref()).map_err(|r| forbidden(format!("{what}: {r}")))?;
            access.may_command(asked.token.as_deref()).map_err(|r| forbidden(format!("{what}: {r}")))?;
            let json = asked.content_type.as_deref().is_some_and(|c| c.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case(JSON)));
            if !json {
                return Err(text(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!("{what}: a command's body is JSON, sent with Content-Type: {JSON} (got {})", asked.content_type.as_deref().unwrap_or("none")),
                ));
            }
        }
    }
    Ok(route)
}

/// The keys each command takes.
fn known_keys(path: &str) -> &'static [&'static str] {
    match path {
        "/override" => &["percent"],
        "/jog" => &["joint", "axis", "frame", "dir", "step", "speed"],
        "/jog/hold" => &["id"],
        _ => &[],
    }
}

/// A command's body: a JSON object (empty: no fields) of the keys it takes.
fn parse_body(asked: &Asked, body: &[u8]) -> Result<Map<String, Json>, Answer> {
    let what = format!("{} {}", asked.method, asked.path);
    let bad = |m: String| text(StatusCode::BAD_REQUEST, m);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    let fields = match serde_json::from_slice::<Json>(body) {
        Ok(Json::Object(fields)) => fields,
        Ok(other) => return Err(bad(format!("{what}: the body must be a JSON object, got {other}"))),
        Err(e) => return Err(bad(format!("{what}: the body is not JSON: {e}"))),
    };
    let known = known_keys(&asked.path);
    if let Some(key) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(bad(format!("{what}: {}", morc_kernel::names::unknown("key", key, &format!("in {what}'s body"), known))));
    }
    Ok(fields)
}

/// A number field, if given.
fn number(what: &str, fields: &Map<String, Json>, key: &str) -> Result<Option<f64>, Answer> {
    match fields.get(key) {
        None => Ok(None),
        Some(v) => v.as_f64().filter(|x| x.is_finite()).map(Some).ok_or_else(|| text(StatusCode::BAD_REQUEST, format!("{what}: {key}={v} is not a number"))),
    }
}

/// A text field, if given.
fn string<'a>(what: &str, fields: &'a Map<String, Json>, key: &str) -> Result<Option<&'a str>, Answer> {
    match fields.get(key) {
        None => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(v) => Err(text(StatusCode::BAD_REQUEST, format!("{what}: {key}={v} is not a string"))),
    }
}

fn done(message: &str) -> String {
    format!("{{\"ok\":true,\"message\":{}}}", crate::json_string(message))
}

fn run_command(page: &Page, path: &str, fields: &Map<String, Json>) -> Result<String, Answer> {
    let what = format!("POST {path}");
    let bad = |m: String| text(StatusCode::BAD_REQUEST, m);
    let station = page.with(|s| s.station.clone());
    if path == "/reset" {
        let cleared = page.with(|s| s.fault.take());
        let bus = station.map(|s| s.controls.reset_faults());
        let mut message = String::new();
        if let Some(f) = cleared {
            let _ = write!(message, "cleared: {f}");
        }
        if let Some(b) = bus {
            if !message.is_empty() {
                message.push_str("; ");
            }
            message.push_str(&b);
        }
        return Ok(done(if message.is_empty() { "no faults to reset" } else { &message }));
    }
    let Some(station) = station else {
        return Err(text(StatusCode::CONFLICT, format!("{what}: no robot is on the engine yet (the program has not run a motion): nothing to command")));
    };
    let c = &station.controls;
    match path {
        "/hold" => {
            c.hold();
            Ok(done("holding: the motion stops on its path"))
        }
        "/resume" => {
            c.resume();
            Ok(done("resumed"))
        }
        "/override" => {
            let p = number(&what, fields, "percent")?.ok_or_else(|| bad(format!("{what}: give {{\"percent\": 0…100}}")))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(bad(format!("{what}: percent={p}: give a percentage from 0 to 100")));
            }
            c.set_override(p / 100.0).map_err(|e| bad(format!("{what}: {e}")))?;
            Ok(done(&format!("override {p} %")))
        }
        "/jog" => {
            let dir = number(&what, fields, "dir")?.unwrap_or(1.0);
            if dir != 1.0 && dir != -1.0 {
                return Err(bad(format!("{what}: dir={dir}: give 1 or -1")));
            }
            let speed = number(&what, fields, "speed")?.unwrap_or(10.0);
            if !(speed > 0.0 && speed <= 100.0) {
                return Err(bad(format!("{what}: speed={speed}: a percentage of the joint's velocity limit (of the tool's jog speed), above 0 up to 100")));
            }
            let step = number(&what, fields, "step")?.unwrap_or(0.0);
            let (axis, unit, scale) = jog_axis(&what, fields, &station)?;
            if step < 0.0 {
                return Err(bad(format!("{what}: step={step}: give an increment ≥ 0 ({unit}; 0 moves while held)")));
            }
            let id = c.jog(axis, dir, step / scale, speed / 100.0, JOG_HOLD).map_err(|why| text(StatusCode::CONFLICT, format!("{what}: {why}")))?;
            Ok(format!("{{\"ok\":true,\"id\":{id},\"message\":{}}}", crate::json_string(&format!("jog {id}"))))
        }
        "/jog/hold" => {
            let id = number(&what, fields, "id")?.ok_or_else(|| bad(format!("{what}: give {{\"id\": N}} (the id POST /jog answered)")))?;
            if c.hold_jog(id as u64, JOG_HOLD) {
                Ok(done("held"))
            } else {
                Err(text(StatusCode::CONFLICT, format!("{what}: jog {id} is no longer moving (stopped, or another jog since): press again")))
            }
        }
        "/jog/stop" => {
            c.stop_jog();
            Ok(done("jog stopped"))
        }
        _ => Err(text(StatusCode::NOT_FOUND, format!("{what}: no such command"))),
    }
}

/// The axis a `/jog` request names (`joint`, or `axis` x…c with `frame` base|tool), its display
/// unit and display units per SI unit.
fn jog_axis(what: &str, fields: &Map<String, Json>, station: &Station) -> Result<(JogAxis, String, f64), Answer> {
    let bad = |m: String| text(StatusCode::BAD_REQUEST, m);
    if let Some(axis) = string(what, fields, "axis")? {
        // A, B, C turn about z, y, x (KUKA's order); the jog's axes 3–5 turn about x, y, z.
        let k = match axis.to_ascii_lowercase().as_str() {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            "a" => 5,
            "b" => 4,
            "c" => 3,
            _ => return Err(bad(format!("{what}: axis='{axis}': give x, y or z (along, mm) or a, b or c (about z, y, x, °)"))),
        };
        let axis = match string(what, fields, "frame")?.unwrap_or("base") {
            "base" => JogAxis::Base(k),
            "tool" => JogAxis::Tool(k),
            f => return Err(bad(format!("{what}: frame='{f}': give base or tool"))),
        };
        return Ok(if k < 3 { (axis, "mm".into(), 1e3) } else { (axis, "°".into(), 180.0 / std::f64::consts::PI) });
    }
    let n = station.joints.len();
    let joint = number(what, fields, "joint")?.ok_or_else(|| bad(format!("{what}: give joint 1…{n}, or axis x…c and frame base|tool")))?;
    if joint.fract() != 0.0 || !(1.0..=n as f64).contains(&joint) {
        return Err(bad(format!("{what}: joint={joint}: robot '{}' has joints 1 to {n}", station.robot)));
    }
    let j = &station.joints[joint as usize - 1];
    Ok((JogAxis::Joint(joint as usize - 1), j.unit.clone(), j.scale))
}

fn push_numbers(out: &mut String, xs: impl Iterator<Item = f64>) {
    out.push('[');
    for (i, x) in xs.enumerate() {
        if i > 0 {
            out.push(',');
        }
        crate::push_number(out, x);
    }
    out.push(']');
}

/// The one state of the robot of `st`, from its last tick `snap` and what the page knows.
fn station_state(st: &Station, snap: &morc_kernel::Snapshot, running: bool, faulted: bool) -> RobotState {
    let c = &st.controls;
    RobotState::of(StateFacts { running, stopping: snap.stopping, holding: snap.holding, faulted, jogging: c.jogging(), paused: c.paused() && c.motion().is_some() })
}

impl Page {
    /// The robot's one state, the word the page shows (for ROS 2's `~/state` and others that
    /// show it without the page).
    pub fn robot_state(&self) -> RobotState {
        let (station, running, fault) = self.with(|s| (s.station.clone(), s.running, s.fault.is_some()));
        let Some(st) = station else {
            return if fault { RobotState::Faulted } else { RobotState::Idle };
        };
        let snap = st.snapshot.read();
        let running = running && snap.running.is_some();
        let faulted = fault || !st.controls.faults().is_empty();
        station_state(&st, &snap, running, faulted)
    }

    /// The state the page shows, as JSON: read from the snapshot and the operator handles.
    pub fn state_json(&self) -> String {
        let (station, program, running, last_run, fault) = self.with(|s| (s.station.clone(), s.program.clone(), s.running, s.last_run.clone(), s.fault.clone()));
        let opt_str = |s: &Option<String>| s.as_deref().map_or("null".to_string(), crate::json_string);
        let mut json = format!("{{\"program\":{}", opt_str(&program));
        if let Some((a, o, r)) = &last_run {
            let _ = write!(json, ",\"last_run\":{{\"assembly\":{},\"outcome\":{},\"reason\":{}}}", crate::json_string(a), crate::json_string(o), crate::json_string(r));
        }
        let mut faults: Vec<String> = fault.into_iter().collect();
        let Some(st) = station else {
            let _ = write!(json, ",\"robot\":null,\"state\":\"{}\",\"faults\":", if faults.is_empty() { "idle" } else { "faulted" });
            push_strings(&mut json, &faults);
            json.push('}');
            return json;
        };
        let snap = st.snapshot.read();
        let port = |name: &str| snap.measured.iter().find(|p| p.name == name).map(|p| p.value.clone());
        let vector = |v: Option<Value>| match v {
            Some(Value::Vector(x)) => x,
            _ => Vec::new(),
        };
        let (q, qd, tau) = (vector(port("q")), vector(port("qd")), vector(port("tau")));
        let _ = write!(json, ",\"robot\":{},\"tick\":{},\"joints\":[", crate::json_string(&st.robot), snap.tick);
        for (i, j) in st.joints.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            let _ = write!(json, "{{\"name\":{},\"unit\":{},\"q\":", crate::json_string(&j.name), crate::json_string(&j.unit));
            crate::push_number(&mut json, q.get(i).map_or(f64::NAN, |x| x * j.scale));
            json.push_str(",\"qd\":");
            crate::push_number(&mut json, qd.get(i).map_or(f64::NAN, |x| x * j.scale));
            json.push_str(",\"tau\":");
            crate::push_number(&mut json, tau.get(i).copied().unwrap_or(f64::NAN));
            json.push('}');
        }
        json.push(']');
        if q.len() == st.model.nq() {
            let mut data = morc_model::Data::new(&st.model);
            morc_model::forward_kinematics_placements(&st.model, &mut data, &q);
            morc_model::update_frame_placements(&st.model, &mut data);
            let x = morc_model::frame_placement(&st.model, &data, st.tool_frame);
            let rpy = morc_model::rpy_from_rotation(&x.rotation);
            let _ = write!(json, ",\"tool\":{{\"frame\":{},\"pos\":", crate::json_string(&st.model.frames()[st.tool_frame].name));
            push_numbers(&mut json, x.translation.iter().map(|v| v * 1e3));
            json.push_str(",\"rpy\":");
            push_numbers(&mut json, rpy.iter().map(|v| v.to_degrees()));
            json.push('}');
        }
        let c = &st.controls;
        let running = running.then_some(snap.running.as_ref()).flatten();
        faults.extend(c.faults());
        let state = station_state(&st, &snap, running.is_some(), !faults.is_empty());
        let _ = write!(json, ",\"state\":\"{}\",\"override\":", state.name());
        crate::push_number(&mut json, c.override_setting() * 100.0);
        match running {
            Some((name, ticks)) => {
                let _ = write!(json, ",\"command\":{{\"name\":{},\"ticks\":{ticks}", crate::json_string(name));
                if let Some((progress, now)) = c.motion() {
                    json.push_str(",\"progress\":");
                    crate::push_number(&mut json, progress);
                    json.push_str(",\"override_now\":");
                    crate::push_number(&mut json, now * 100.0);
                }
                json.push('}');
            }
            None => json.push_str(",\"command\":null"),
        }
        if let Some(why) = c.jog_stopped() {
            let _ = write!(json, ",\"jog_stopped\":{}", crate::json_string(&why));
        }
        json.push_str(",\"faults\":");
        push_strings(&mut json, &faults);
        json.push('}');
        json
    }

    /// The faults the page shows: the last run's (until reset) and the robot's latched ones.
    pub(crate) fn faults(&self) -> Vec<String> {
        let (station, fault) = self.with(|s| (s.station.clone(), s.fault.clone()));
        let mut faults: Vec<String> = fault.into_iter().collect();
        if let Some(st) = station {
            faults.extend(st.controls.faults());
        }
        faults
    }
}

pub(crate) fn push_strings(out: &mut String, xs: &[String]) {
    out.push('[');
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&crate::json_string(x));
    }
    out.push(']');
}

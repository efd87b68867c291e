//! The operator page: a small web page served beside the live view (`morc --live`) for a lab
//! PC that has a browser and nothing else. It shows the robot on the engine (joints, tool pose,
//! holding or paused, the override), the running command and its progress, faults with a reset
//! button, and has hold and resume, an override slider and joint jog buttons.
//!
//! HTTP is a plain `std::net::TcpListener` on a thread of its own (one short request at a time:
//! the page asks for its state a few times a second). The page is one HTML file embedded in the
//! binary (no build step, nothing loaded from elsewhere). Its state comes from the engine's
//! lock-free snapshot ([`BaseSnapshot`]); its commands go through the robot's operator handles
//! ([`Controls`], the ones `robot:override()`, `robot:pause()` and the REPL's jog use), never
//! into the Lua state.
//!
//! ```text
//! GET  /                       the page
//! GET  /state                  the state as JSON
//! POST /hold  /resume          pause the running motion on its path, go on
//! POST /override?percent=P     the speed override, 0–100 %
//! POST /jog?joint=J&dir=±1&step=S&speed=V   jog joint J (1-based) by S ° or mm (S = 0: while held, ≈ 0.3 s per request)
//! POST /jog?axis=A&frame=F&dir=±1&step=S&speed=V   jog the tool along x, y, z (S mm) or about a, b, c (S °; A about z,
//!                              B about y, C about x, as on a KUKA pendant) of the base or tool frame (F = base | tool)
//! POST /jog/hold?id=N          keeps the held jog N moving another ≈ 0.3 s
//! POST /jog/stop               stops jogging
//! POST /reset                  resets latched faults and clears the last run's fault
//! ```

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use morc_kernel::{BaseSnapshot, Value};
use morc_model::{FrameIndex, Model};

/// The page, embedded in the binary.
const PAGE: &str = include_str!("operator_page.html");

/// How long one request of a held jog keeps it moving: the page repeats every 100 ms.
pub const JOG_HOLD: Duration = Duration::from_millis(300);

/// The robot's operator handles, as the page uses them (implemented over the robot's
/// `Operator` and the bus, where there is one). Every method is called from the page's thread.
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
    /// the command's id.
    fn jog(&self, axis: JogAxis, dir: f64, step: f64, speed: f64, hold: Duration) -> u64;
    /// Keeps the held jog `id` moving until `hold` from now.
    fn hold_jog(&self, id: u64, hold: Duration);
    /// Stops jogging.
    fn stop_jog(&self);
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

static STATE: Mutex<Option<PageState>> = Mutex::new(None);

fn with_state<R>(f: impl FnOnce(&mut PageState) -> R) -> R {
    let mut s = STATE.lock().unwrap_or_else(|p| p.into_inner());
    f(s.get_or_insert_with(PageState::default))
}

/// Sets the robot the page shows and commands (the engine's), or none.
pub fn set_station(station: Option<Station>) {
    with_state(|s| s.station = station);
}

/// Names the program that runs (shown on the page).
pub fn set_program(program: &str) {
    with_state(|s| s.program = Some(program.to_string()));
}

/// An assembly starts on the engine.
pub fn run_starting() {
    with_state(|s| s.running = true);
}

/// An assembly ended: `outcome` is "finished", "fault" or "cancelled".
pub(crate) fn run_ended(assembly: &str, outcome: &str, reason: &str) {
    with_state(|s| {
        s.running = false;
        s.last_run = Some((assembly.to_string(), outcome.to_string(), reason.to_string()));
        s.fault = (outcome == "fault").then(|| format!("the last run ({assembly}) faulted: {reason}"));
    });
}

/// The page's server thread.
pub(crate) struct PageServer {
    /// The address served ("host:port").
    pub address: String,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PageServer {
    /// Serves the page on `host:port` (0: a free port).
    pub fn start(host: &str, port: u16) -> std::io::Result<PageServer> {
        let listener = TcpListener::bind((host, port))?;
        let address = format!("{host}:{}", listener.local_addr()?.port());
        // Polled, so that stop() ends the thread without a connection to wake it.
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new().name("operator-page".into()).spawn(move || serve(listener, &stop2))?;
        Ok(PageServer { address, stop, thread: Some(thread) })
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: TcpListener, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Err(e) = handle(stream) {
                    log::debug!("operator page: {e}");
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                log::warn!("operator page: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// A request as the page sends it: method, path, query pairs.
#[derive(Debug, PartialEq)]
struct Request {
    method: String,
    path: String,
    query: Vec<(String, String)>,
}

/// Requests are a line and a few headers; anything longer is refused.
const MAX_REQUEST: usize = 16 * 1024;

fn read_request(stream: &mut TcpStream) -> Result<Request, (u16, String)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).map_err(|e| (400, format!("cannot read the request: {e}")))?;
        if n == 0 {
            return Err((400, "the request ended before its headers did".into()));
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_REQUEST {
            return Err((431, format!("the request is longer than {MAX_REQUEST} bytes")));
        }
    }
    let text = String::from_utf8_lossy(&buf);
    parse_request_line(text.lines().next().unwrap_or(""))
}

fn parse_request_line(line: &str) -> Result<Request, (u16, String)> {
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Err((400, format!("not an HTTP request line: '{line}'")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err((505, format!("HTTP version '{version}': the operator page speaks HTTP/1.1")));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    Ok(Request { method: method.to_string(), path: path.to_string(), query })
}

fn respond(stream: &mut TcpStream, status: u16, content_type: &str, body: &str) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        431 => "Request Header Fields Too Large",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    };
    let head = format!("HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n", body.len());
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

fn handle(mut stream: TcpStream) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    // A client that stalls does not hold the page up for long.
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    let (status, content_type, body) = match read_request(&mut stream) {
        Ok(request) => route(&request),
        Err((status, message)) => (status, "text/plain; charset=utf-8", message),
    };
    respond(&mut stream, status, content_type, &body)?;
    if status == 431 {
        // Closing with the rest unread would reset the connection before the client reads the
        // answer: read on a little (bounded by the size and the read timeout).
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let _ = std::io::copy(&mut (&stream).take(1 << 20), &mut std::io::sink());
    }
    Ok(())
}

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";

/// Answers one request: status, content type, body.
fn route(request: &Request) -> (u16, &'static str, String) {
    let command = !matches!(request.path.as_str(), "/" | "/index.html" | "/state");
    let known = matches!(request.path.as_str(), "/" | "/index.html" | "/state" | "/hold" | "/resume" | "/override" | "/jog" | "/jog/hold" | "/jog/stop" | "/reset");
    if !known {
        return (404, TEXT, format!("no page '{}' here: the operator page is at /, its state at /state", request.path));
    }
    match (request.method.as_str(), command) {
        ("GET", false) => {}
        ("POST", true) => {}
        (m, false) => return (405, TEXT, format!("{m} {}: use GET", request.path)),
        (m, true) => return (405, TEXT, format!("{m} {}: commands are sent with POST", request.path)),
    }
    match request.path.as_str() {
        "/" | "/index.html" => (200, "text/html; charset=utf-8", PAGE.to_string()),
        "/state" => (200, JSON, state_json()),
        _ => match run_command(request) {
            Ok(done) => (200, JSON, format!("{{\"ok\":true,\"message\":{}}}", crate::json_string(&done))),
            Err((status, message)) => (status, TEXT, message),
        },
    }
}

fn number(request: &Request, key: &str) -> Result<Option<f64>, (u16, String)> {
    match request.query.iter().find(|(k, _)| k == key) {
        None => Ok(None),
        Some((_, v)) => v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| (400, format!("{} {}: {key}='{v}' is not a number", request.method, request.path))),
    }
}

fn run_command(request: &Request) -> Result<String, (u16, String)> {
    let what = format!("{} {}", request.method, request.path);
    let station = with_state(|s| s.station.clone());
    if request.path == "/reset" {
        let cleared = with_state(|s| s.fault.take());
        let bus = station.map(|s| s.controls.reset_faults());
        let mut done = String::new();
        if let Some(f) = cleared {
            let _ = write!(done, "cleared: {f}");
        }
        if let Some(b) = bus {
            if !done.is_empty() {
                done.push_str("; ");
            }
            done.push_str(&b);
        }
        return Ok(if done.is_empty() { "no faults to reset".into() } else { done });
    }
    let Some(station) = station else {
        return Err((409, format!("{what}: no robot is on the engine yet (the program has not run a motion): nothing to command")));
    };
    let c = &station.controls;
    match request.path.as_str() {
        "/hold" => {
            c.hold();
            Ok("holding: the motion stops on its path".into())
        }
        "/resume" => {
            c.resume();
            Ok("resumed".into())
        }
        "/override" => {
            let p = number(request, "percent")?.ok_or_else(|| (400, format!("{what}: give percent=0…100")))?;
            if !(0.0..=100.0).contains(&p) {
                return Err((400, format!("{what}: percent={p}: give a percentage from 0 to 100")));
            }
            c.set_override(p / 100.0).map_err(|e| (400, format!("{what}: {e}")))?;
            Ok(format!("override {p} %"))
        }
        "/jog" => {
            let dir = number(request, "dir")?.unwrap_or(1.0);
            if dir != 1.0 && dir != -1.0 {
                return Err((400, format!("{what}: dir={dir}: give 1 or -1")));
            }
            let speed = number(request, "speed")?.unwrap_or(10.0);
            if !(speed > 0.0 && speed <= 100.0) {
                return Err((400, format!("{what}: speed={speed}: a percentage of the joint's velocity limit (of the tool's jog speed), above 0 up to 100")));
            }
            let step = number(request, "step")?.unwrap_or(0.0);
            let (axis, unit, scale) = jog_axis(request, &station)?;
            if step < 0.0 {
                return Err((400, format!("{what}: step={step}: give an increment ≥ 0 ({unit}; 0 moves while held)")));
            }
            let id = c.jog(axis, dir, step / scale, speed / 100.0, JOG_HOLD);
            Ok(format!("{id}"))
        }
        "/jog/hold" => {
            let id = number(request, "id")?.ok_or_else(|| (400, format!("{what}: give id=N (the answer of POST /jog)")))?;
            c.hold_jog(id as u64, JOG_HOLD);
            Ok("held".into())
        }
        "/jog/stop" => {
            c.stop_jog();
            Ok("jog stopped".into())
        }
        _ => Err((404, format!("{what}: no such command"))),
    }
}

/// The axis a `/jog` request names (`joint=J`, or `axis=x…c` with `frame=base|tool`), its
/// display unit and display units per SI unit.
fn jog_axis(request: &Request, station: &Station) -> Result<(JogAxis, String, f64), (u16, String)> {
    let what = format!("{} {}", request.method, request.path);
    let text = |key: &str| request.query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    if let Some(axis) = text("axis") {
        // A, B, C turn about z, y, x (KUKA's order); the jog's axes 3–5 turn about x, y, z.
        let k = match axis.to_ascii_lowercase().as_str() {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            "a" => 5,
            "b" => 4,
            "c" => 3,
            _ => return Err((400, format!("{what}: axis='{axis}': give x, y or z (along, mm) or a, b or c (about z, y, x, °)"))),
        };
        let axis = match text("frame").unwrap_or("base") {
            "base" => JogAxis::Base(k),
            "tool" => JogAxis::Tool(k),
            f => return Err((400, format!("{what}: frame='{f}': give base or tool"))),
        };
        return Ok(if k < 3 { (axis, "mm".into(), 1e3) } else { (axis, "°".into(), 180.0 / std::f64::consts::PI) });
    }
    let n = station.joints.len();
    let joint = number(request, "joint")?.ok_or_else(|| (400, format!("{what}: give joint=1…{n}, or axis=x…c and frame=base|tool")))?;
    if joint.fract() != 0.0 || !(1.0..=n as f64).contains(&joint) {
        return Err((400, format!("{what}: joint={joint}: robot '{}' has joints 1 to {n}", station.robot)));
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

/// The state the page shows, as JSON: read from the snapshot and the operator handles.
pub fn state_json() -> String {
    let (station, program, running, last_run, fault) = with_state(|s| (s.station.clone(), s.program.clone(), s.running, s.last_run.clone(), s.fault.clone()));
    let opt_str = |s: &Option<String>| s.as_deref().map_or("null".to_string(), crate::json_string);
    let mut json = format!("{{\"program\":{}", opt_str(&program));
    if let Some((a, o, r)) = &last_run {
        let _ = write!(json, ",\"last_run\":{{\"assembly\":{},\"outcome\":{},\"reason\":{}}}", crate::json_string(a), crate::json_string(o), crate::json_string(r));
    }
    let mut faults: Vec<String> = fault.into_iter().collect();
    let Some(st) = station else {
        json.push_str(",\"robot\":null,\"faults\":");
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
    let _ = write!(json, ",\"holding\":{},\"paused\":{},\"override\":", running.is_none() || snap.holding, c.paused());
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
    faults.extend(c.faults());
    json.push_str(",\"faults\":");
    push_strings(&mut json, &faults);
    json.push('}');
    json
}

/// The faults the page shows: the last run's (until reset) and the robot's latched ones.
pub(crate) fn faults() -> Vec<String> {
    let (station, fault) = with_state(|s| (s.station.clone(), s.fault.clone()));
    let mut faults: Vec<String> = fault.into_iter().collect();
    if let Some(st) = station {
        faults.extend(st.controls.faults());
    }
    faults
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_parsed_and_bad_ones_answered_with_a_reason() {
        let r = parse_request_line("POST /override?percent=20 HTTP/1.1").unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/override"));
        assert_eq!(r.query, vec![("percent".to_string(), "20".to_string())]);
        assert_eq!(parse_request_line("garbage").unwrap_err().0, 400);
        assert_eq!(parse_request_line("GET / SPDY/3").unwrap_err().0, 505);
        let get = |m: &str, p: &str| route(&parse_request_line(&format!("{m} {p} HTTP/1.1")).unwrap());
        assert_eq!(get("GET", "/").0, 200);
        assert_eq!(get("GET", "/nothing").0, 404);
        assert_eq!(get("GET", "/hold").0, 405);
        assert_eq!(get("POST", "/state").0, 405);
        let (status, _, body) = get("POST", "/override?percent=abc");
        assert!(status == 400 || status == 409, "{status} {body}");
    }
}

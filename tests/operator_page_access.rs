//! The operator page is the operator's alone (issue 26): what a page of another site, a DNS
//! rebinding, a client without the token, a crowd of idle or slow clients and a stale jog press
//! could do to the robot on `morc --live`, tried over raw HTTP against the simulated KR 16 (the
//! cross-origin page in a real browser is in tests/python/operator_page.py).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-page-access-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `morc --clock wall --live=127.0.0.1:0 run FILE` and its page: address and token.
struct Page {
    morc: Child,
    address: String,
    token: String,
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.morc.kill();
        let _ = self.morc.wait();
    }
}

fn morc_with_page(dir: &Path, file: &str, extra: &[&str]) -> Page {
    let mut morc = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(dir)
        .args(["--clock", "wall", "--live=127.0.0.1:0"])
        .args(extra)
        .args(["run", file])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(morc.stderr.take().unwrap());
    let mut url = None;
    let mut head = String::new();
    for _ in 0..2 {
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        head.push_str(&line);
        url = url.or_else(|| line.trim().strip_prefix("operator page: http://").map(str::to_string));
    }
    let url = url.unwrap_or_else(|| panic!("morc did not print the page's URL: {head}"));
    let (address, token) = url.split_once("/?token=").unwrap_or_else(|| panic!("the page's URL has no token: {url}"));
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Page { morc, address: address.to_string(), token: token.to_string() }
}

/// One raw HTTP request; status and body (status 0 and what went wrong when no answer came).
fn raw(address: &str, request: &str) -> (u16, String) {
    let asked = || -> std::io::Result<String> {
        let mut s = TcpStream::connect(address)?;
        s.write_all(request.as_bytes())?;
        let mut answer = String::new();
        s.read_to_string(&mut answer)?;
        Ok(answer)
    };
    match asked() {
        Err(e) => (0, format!("no answer from {address}: {e}")),
        Ok(answer) => {
            let status = answer.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
            (status, answer.split_once("\r\n\r\n").map_or(String::new(), |(_, b)| b.to_string()))
        }
    }
}

impl Page {
    /// POST `path` with a JSON `body` and these extra header lines ("Name: value\r\n" each).
    fn post_with(&self, path: &str, body: &str, headers: &str) -> (u16, String) {
        raw(&self.address, &format!("POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n{headers}\r\n{body}", self.address, body.len()))
    }
    /// A command as the page sends it: JSON, with the token.
    fn command(&self, path: &str, body: &str) -> (u16, String) {
        self.post_with(path, body, &format!("Content-Type: application/json\r\nX-Morc-Token: {}\r\n", self.token))
    }
    fn state(&self) -> Json {
        let (status, body) = raw(&self.address, &format!("GET /state HTTP/1.1\r\nHost: {}\r\nX-Morc-Token: {}\r\nConnection: close\r\n\r\n", self.address, self.token));
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }
    fn wait_for(&self, what: &str, ok: impl Fn(&Json) -> bool) -> Json {
        let start = Instant::now();
        loop {
            let s = self.state();
            if ok(&s) {
                return s;
            }
            assert!(start.elapsed().as_secs() < 60, "waited 60 s for {what}: {s}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn a1(s: &Json) -> f64 {
    s["joints"][0]["q"].as_f64().unwrap()
}

/// The robot on the engine (short runs of nothing) until the test writes "go", then what
/// `after` does; the program ends when the test writes "bye" (or the test kills it).
fn program(after: &str) -> String {
    format!(
        "local kr16 = require 'robots.kr16'\nmorc.use_robot(kr16, {{ q0 = kr16.home }})\n\
         local function there(f) local h = io.open(f) if h then h:close() return true end return false end\n\
         local n = 0\nwhile not there('go') and n < 2400 do morc.engine:run(morc.assembly {{ 'waiting', duration = 0.05 }}); n = n + 1 end\n\
         {after}\n"
    )
}

const JOG_SESSION: &str = "local h = morc.engine:start(require 'stdlib.assemblies.jog'(kr16, { until_still = false }))\n\
     local m = 0\nwhile not there('bye') and m < 2400 do os.execute('sleep 0.05'); m = m + 1 end\nmorc.engine:cancel()";

const LONG_MOVE: &str = "local a = morc.assembly { 'long move' }\n\
     a:add('traj', kr16:component('ptp'), { target = { 90, -70, 100, 60, 30, 90 }, vel_scale = 0.03, acc_scale = 0.2 })\n\
     a:connect('robot.q', 'traj.start'); a:connect('traj.q', 'robot.q_cmd'); a:connect('traj.qd', 'robot.qd_ff')\n\
     local h = morc.engine:start(a)\nlocal m = 0\nwhile not there('bye') and m < 2400 do os.execute('sleep 0.05'); m = m + 1 end\nmorc.engine:cancel()";

#[test]
fn without_the_token_from_another_name_or_another_origin_nothing_moves() {
    let dir = scratch("token");
    std::fs::write(dir.join("p.lua"), program("")).unwrap();
    let page = morc_with_page(&dir, "p.lua", &[]);
    assert_eq!(page.token.len(), 64, "a random secret: {}", page.token);
    page.wait_for("the robot on the page", |s| s["robot"].is_string());
    let json = "Content-Type: application/json\r\n";
    let good = format!("X-Morc-Token: {}\r\n", page.token);
    let wrong = format!("X-Morc-Token: {}\r\n", "0".repeat(64));
    let body = r#"{"percent":20}"#;
    for (headers, status, says) in [
        (json.to_string(), 403, "no token or a wrong one"),
        (format!("{json}{wrong}"), 403, "no token or a wrong one"),
        // A page of another site, even one that has the token.
        (format!("{json}{good}Origin: http://evil.example\r\n"), 403, "a page from 'http://evil.example' may not command the robot"),
        (format!("{json}{good}Origin: http://127.0.0.1:9\r\n"), 403, "may not command"),
        // What a no-cors fetch or a form can send: not JSON.
        (format!("{good}Content-Type: text/plain\r\n"), 415, "Content-Type: application/json"),
        (format!("{good}Content-Type: application/x-www-form-urlencoded\r\n"), 415, "Content-Type: application/json"),
    ] {
        let (got, answer) = page.post_with("/override", body, &headers);
        assert_eq!(got, status, "{headers:?} → {answer}");
        assert!(answer.contains(says), "{headers:?} → {answer}");
    }
    for path in ["/hold", "/jog", "/reset"] {
        assert_eq!(page.post_with(path, "{}", json).0, 403, "{path} without the token");
    }
    // DNS rebinding: evil.example resolved to 127.0.0.1 sends its own name as Host.
    let rebound =
        format!("POST /override HTTP/1.1\r\nHost: evil.example:{}\r\n{json}{good}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", page.address.rsplit_once(':').unwrap().1, body.len());
    let (status, answer) = raw(&page.address, &rebound);
    assert_eq!(status, 403, "{answer}");
    assert!(answer.contains("does not name this server"), "{answer}");
    let rebound_read = format!("GET /state HTTP/1.1\r\nHost: evil.example:{}\r\nConnection: close\r\n\r\n", page.address.rsplit_once(':').unwrap().1);
    assert_eq!(raw(&page.address, &rebound_read).0, 403, "a rebound page does not read the state either");
    let s = page.state();
    assert_eq!(s["override"].as_f64(), Some(100.0), "nothing moved the override: {s}");

    // The token in the header, or in the cookie the page sets when opened with it.
    assert_eq!(page.command("/override", body).0, 200);
    assert_eq!(page.state()["override"].as_f64(), Some(20.0));
    let mut s = TcpStream::connect(&page.address).unwrap();
    write!(s, "GET /?token={} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", page.token, page.address).unwrap();
    let mut head = String::new();
    s.read_to_string(&mut head).unwrap();
    let cookie = format!("set-cookie: morc_token={}; HttpOnly; SameSite=Strict; Path=/", page.token);
    assert!(head.to_ascii_lowercase().contains(&cookie.to_ascii_lowercase()), "{}", head.split("\r\n\r\n").next().unwrap());
    let by_cookie = page.post_with("/override", r#"{"percent":40}"#, &format!("{json}Cookie: other=1; morc_token={}\r\nOrigin: http://{}\r\n", page.token, page.address));
    assert_eq!(by_cookie.0, 200, "{}", by_cookie.1);
    assert_eq!(page.state()["override"].as_f64(), Some(40.0));

    // A JSON body of the keys a command takes: a typo is named with the keys known.
    let (status, answer) = page.command("/override", r#"{"percnt":20}"#);
    assert_eq!(status, 400);
    assert!(answer.contains("unknown key 'percnt'") && answer.contains("did you mean 'percent'"), "{answer}");
    let (status, answer) = page.command("/jog", r#"{"joint":1,"sped":5}"#);
    assert!(status == 400 && answer.contains("'speed'"), "{answer}");
    let (status, answer) = page.command("/override", "percent=20");
    assert!(status == 400 && answer.contains("is not JSON"), "{answer}");
    std::fs::write(dir.join("bye"), "").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_given_token_is_the_one_and_a_weak_one_is_refused() {
    let dir = scratch("given");
    std::fs::write(dir.join("p.lua"), "print('ran')\n").unwrap();
    let weak = Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(&dir).args(["--live=127.0.0.1:0", "--live-token", "secret", "run", "p.lua"]).output().unwrap();
    assert!(!weak.status.success());
    assert!(String::from_utf8_lossy(&weak.stderr).contains("too short to be a secret"), "{}", String::from_utf8_lossy(&weak.stderr));
    std::fs::write(dir.join("p.lua"), program("")).unwrap();
    let page = morc_with_page(&dir, "p.lua", &["--live-token", "lab-bench-3-0123456789"]);
    assert_eq!(page.token, "lab-bench-3-0123456789");
    page.wait_for("the robot", |s| s["robot"].is_string());
    assert_eq!(page.command("/override", r#"{"percent":50}"#).0, 200);
    std::fs::write(dir.join("bye"), "").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hold_acts_at_once_beside_a_hundred_idle_connections_and_a_slow_client() {
    let dir = scratch("crowd");
    std::fs::write(dir.join("p.lua"), program(LONG_MOVE)).unwrap();
    let page = morc_with_page(&dir, "p.lua", &[]);
    page.wait_for("the robot", |s| s["robot"].is_string());
    std::fs::write(dir.join("go"), "").unwrap();
    page.wait_for("the long move", |s| s["state"] == "moving");
    let idle: Vec<TcpStream> = (0..100).map(|_| TcpStream::connect(&page.address).unwrap()).collect();
    // A slow-loris: a header byte a second, never done.
    let slow_address = page.address.clone();
    let slow = std::thread::spawn(move || {
        let mut s = TcpStream::connect(&slow_address).unwrap();
        let _ = s.write_all(b"GET /state HTTP/1.1\r\nHost: ");
        for _ in 0..4 {
            if s.write_all(b"x").is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    std::thread::sleep(Duration::from_millis(1500));
    let start = Instant::now();
    let (status, answer) = page.command("/hold", "{}");
    let took = start.elapsed();
    assert_eq!(status, 200, "{answer}");
    println!("POST /hold beside 100 idle connections and a slow client: {:.1} ms", took.as_secs_f64() * 1e3);
    assert!(took < Duration::from_millis(100), "hold took {took:?}");
    page.wait_for("the motion paused", |s| s["state"] == "paused");
    drop(idle);
    slow.join().unwrap();
    std::fs::write(dir.join("bye"), "").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A local process crowding the page: `silent` connections that never send a byte and `idle`
/// keep-alive ones that asked for the state once (allowed without the token on loopback) and sit
/// there, each reopened as soon as the server closes it, until dropped. Counts the reopenings.
struct Crowd {
    stop: Arc<AtomicBool>,
    reopened: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Crowd {
    fn start(address: &str, silent: usize, idle: usize) -> Crowd {
        let (stop, reopened) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let (address, stop_flag, count) = (address.to_string(), stop.clone(), reopened.clone());
        let thread = std::thread::spawn(move || {
            let open = |keep_alive: bool| -> Option<TcpStream> {
                let s = TcpStream::connect(&address).ok()?;
                if keep_alive {
                    let mut session = Session { stream: s.try_clone().ok()?, read: Vec::new() };
                    session.exchange(&format!("GET /state HTTP/1.1\r\nHost: {address}\r\n\r\n"))?;
                }
                s.set_nonblocking(true).ok()?;
                Some(s)
            };
            let mut held: Vec<(bool, Option<TcpStream>)> = (0..silent).map(|_| (false, None)).chain((0..idle).map(|_| (true, None))).collect();
            while !stop_flag.load(Ordering::Relaxed) {
                let mut opened = 0;
                for (keep_alive, stream) in held.iter_mut() {
                    let closed = stream.as_mut().is_none_or(|s| !matches!(s.read(&mut [0u8; 64]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock));
                    // At most 64 reopenings a round: a storm, not a loop that exhausts the ports.
                    if closed && opened < 64 {
                        if stream.is_some() {
                            count.fetch_add(1, Ordering::Relaxed);
                        }
                        *stream = open(*keep_alive);
                        opened += 1;
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Crowd { stop, reopened, thread: Some(thread) }
    }
}

impl Drop for Crowd {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One kept-alive HTTP/1.1 connection: a request, its answer (Content-Length bodies), the next.
struct Session {
    stream: TcpStream,
    read: Vec<u8>,
}

impl Session {
    /// Sends `request` and reads its answer: status and body; none when the connection failed.
    fn exchange(&mut self, request: &str) -> Option<(u16, String)> {
        self.stream.write_all(request.as_bytes()).ok()?;
        loop {
            if let Some(end) = self.read.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.read[..end]).to_string();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-length")).and_then(|(_, v)| v.trim().parse().ok()))
                    .unwrap_or(0);
                if self.read.len() >= end + 4 + length {
                    let body = String::from_utf8_lossy(&self.read[end + 4..end + 4 + length]).to_string();
                    self.read.drain(..end + 4 + length);
                    return Some((head.get(9..12)?.parse().ok()?, body));
                }
            }
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.read.extend_from_slice(&buf[..n]),
            }
        }
    }
}

#[test]
fn hold_and_reset_get_through_300_silent_and_256_idle_keep_alive_connections() {
    let dir = scratch("flood");
    std::fs::write(dir.join("p.lua"), program(LONG_MOVE)).unwrap();
    let page = morc_with_page(&dir, "p.lua", &[]);
    page.wait_for("the robot", |s| s["robot"].is_string());
    std::fs::write(dir.join("go"), "").unwrap();
    page.wait_for("the long move", |s| s["state"] == "moving");
    // The operator's page, open before the crowd came: a kept connection that showed the token.
    let mut kept = Session { stream: TcpStream::connect(&page.address).unwrap(), read: Vec::new() };
    let with_token = |path: &str| format!("POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nX-Morc-Token: {}\r\nContent-Length: 2\r\n\r\n{{}}", page.address, page.token);
    assert_eq!(kept.exchange(&with_token("/resume")).map(|a| a.0), Some(200));

    let crowd = Crowd::start(&page.address, 300, 256);
    // The crowd is there and the server is pushing it out (it reconnects at once).
    let start = Instant::now();
    while crowd.reopened.load(Ordering::Relaxed) < 1000 {
        assert!(start.elapsed() < Duration::from_secs(60), "the crowd did not get going");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut took = Vec::new();
    let mut timed = |what: &str, answer: (Instant, (u16, String))| {
        took.push(answer.0.elapsed());
        assert_eq!(answer.1 .0, 200, "{what} beside the crowd: {}", answer.1 .1);
    };
    for _ in 0..40 {
        // A new connection each time, as curl or a script sends it; then resume, so each Hold holds.
        timed("POST /hold (new connection)", (Instant::now(), page.command("/hold", "{}")));
        assert_eq!(page.command("/resume", "{}").0, 200);
    }
    for _ in 0..40 {
        timed("POST /hold (the kept connection)", (Instant::now(), kept.exchange(&with_token("/hold")).unwrap_or((0, "connection closed".into()))));
        assert_eq!(kept.exchange(&with_token("/resume")).map(|a| a.0), Some(200));
    }
    for _ in 0..10 {
        timed("POST /reset", (Instant::now(), page.command("/reset", "{}")));
    }
    let reopened = crowd.reopened.load(Ordering::Relaxed);
    drop(crowd);
    took.sort();
    let slowest = *took.last().unwrap();
    println!(
        "Hold/Reset beside 300 silent + 256 idle keep-alive connections ({reopened} reopened by the crowd): {} answered, median {:.1} ms, slowest {:.1} ms",
        took.len(),
        took[took.len() / 2].as_secs_f64() * 1e3,
        slowest.as_secs_f64() * 1e3
    );
    assert!(slowest < Duration::from_millis(500), "the slowest Hold/Reset took {slowest:?}");
    page.wait_for("the motion still going", |s| s["state"] == "moving");
    std::fs::write(dir.join("bye"), "").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_jog_press_with_no_session_is_refused_and_never_acted_on_later() {
    let dir = scratch("stale-jog");
    std::fs::write(dir.join("p.lua"), program(JOG_SESSION)).unwrap();
    let page = morc_with_page(&dir, "p.lua", &[]);
    let before = page.wait_for("the robot", |s| s["robot"].is_string() && s["joints"][0]["q"].is_number());
    let (status, answer) = page.command("/jog", r#"{"joint":1,"dir":1,"step":5,"speed":50}"#);
    assert_eq!(status, 409, "{answer}");
    assert!(answer.contains("no jog session: start `jog` in the REPL or the jog assembly in the program"), "{answer}");
    std::fs::write(dir.join("go"), "").unwrap();
    page.wait_for("the jog session", |s| s["state"] == "jogging");
    std::thread::sleep(Duration::from_millis(1500));
    let s = page.state();
    assert!((a1(&s) - a1(&before)).abs() < 0.01, "A1 moved from {} to {} without a press in the session", a1(&before), a1(&s));
    // In the session the same press moves it.
    assert_eq!(page.command("/jog", r#"{"joint":1,"dir":1,"step":5,"speed":50}"#).0, 200);
    page.wait_for("A1 5° on", |s| (a1(s) - a1(&before) - 5.0).abs() < 0.05);
    std::fs::write(dir.join("bye"), "").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_held_jog_stops_within_200_ms_of_its_last_heartbeat() {
    let dir = scratch("deadman");
    std::fs::write(dir.join("p.lua"), program(JOG_SESSION)).unwrap();
    let page = morc_with_page(&dir, "p.lua", &[]);
    page.wait_for("the robot", |s| s["robot"].is_string());
    std::fs::write(dir.join("go"), "").unwrap();
    page.wait_for("the jog session", |s| s["state"] == "jogging");
    let (status, answer) = page.command("/jog", r#"{"joint":1,"dir":1,"step":0,"speed":10}"#);
    assert_eq!(status, 200, "{answer}");
    let id = serde_json::from_str::<Json>(&answer).unwrap()["id"].as_u64().unwrap();
    // Heartbeats every 50 ms for a second: it keeps moving (a jog held 1 s, five times the bound).
    let start = Instant::now();
    let mut moving_ticks = 0;
    while start.elapsed() < Duration::from_secs(1) {
        let (status, answer) = page.command("/jog/hold", &format!(r#"{{"id":{id}}}"#));
        assert_eq!(status, 200, "{answer}");
        std::thread::sleep(Duration::from_millis(50));
        moving_ticks += 1;
    }
    let cruising = page.state();
    let v = cruising["joints"][0]["qd"].as_f64().unwrap();
    assert!(v > 5.0, "held for {moving_ticks} heartbeats, A1 moves at {v} °/s: {cruising}");
    // The last heartbeat; then none (a tab closed). Robot time: the engine's ticks (1 ms).
    assert_eq!(page.command("/jog/hold", &format!(r#"{{"id":{id}}}"#)).0, 200);
    let last = page.state()["tick"].as_u64().unwrap();
    let braking = page.wait_for("A1 to brake", |s| s["joints"][0]["qd"].as_f64().unwrap() < 0.9 * v);
    let still = page.wait_for("A1 still", |s| s["joints"][0]["qd"].as_f64().unwrap().abs() < 0.5);
    let (b, s) = (braking["tick"].as_u64().unwrap() - last, still["tick"].as_u64().unwrap() - last);
    println!("after the last heartbeat: braking at {b} ms, still at {s} ms (robot time)");
    // The bound plus what reading the state over HTTP adds (a poll every 20 ms, and its answer).
    assert!(b <= 200 + 60, "the jog went on {b} ms after its last heartbeat");
    assert!(s >= b, "{s} {b}");
    // A heartbeat after the jog stopped does not start it again: refused, the page stops its timer.
    let (status, answer) = page.command("/jog/hold", &format!(r#"{{"id":{id}}}"#));
    assert_eq!(status, 409, "{answer}");
    // 300 ms of robot time later (the engine's ticks prove it got that far), A1 is still still.
    let refused = page.state()["tick"].as_u64().unwrap();
    let later = page.wait_for("300 ticks after the refused heartbeat", |s| s["tick"].as_u64().unwrap() >= refused + 300);
    assert!(later["joints"][0]["qd"].as_f64().unwrap().abs() < 0.5, "a late heartbeat moved A1 again: {later}");
    std::fs::write(dir.join("bye"), "").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

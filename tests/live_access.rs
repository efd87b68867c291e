//! Who may open the live view, and what time its messages carry (issue 26, items 1 and 8).
//!
//! - In this process, raw WebSocket handshakes written by hand (no client library between the
//!   test and the bytes): a page of another origin is refused with 403 and is sent nothing, nor
//!   is a request whose Host names another site (DNS rebinding); Foxglove's app, the operator
//!   page and clients with no Origin are served; off loopback (0.0.0.0, reached via 127.0.0.1)
//!   the token is needed, in the URL or the header. A client that does not read loses messages,
//!   counted and told, while the sender never waits; the number of clients is bounded.
//! - Through `morc` and the independent Python client (tests/python/live_client.py): a page's
//!   Origin is refused and Foxglove's accepted; `--live=0.0.0.0:…` prints the URL with its token
//!   and who can reach it, and a client without the token is refused; the stamps are wall-clock
//!   UTC, map run time to wall time (not the moment of draining) and never go backwards across
//!   runs, while `time`, the run's own, restarts.
//!
//! Needs python3 with websockets (scripts/setup --test).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value as Json;

/// A handshake's answer: the HTTP status, the headers' text, and the connection after them.
struct Answer {
    status: u16,
    head: String,
    stream: TcpStream,
    /// Bytes read past the headers.
    rest: Vec<u8>,
}

/// Opens a WebSocket handshake to 127.0.0.1:`port` for `target` ("/", "/?token=…") with the
/// headers given (a "Host" or "Sec-WebSocket-Protocol" among them replaces the usual one).
fn handshake(port: u16, target: &str, headers: &[(&str, &str)]) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // A guard against a hang, not a measure: every answer here comes at once.
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let host = format!("127.0.0.1:{port}");
    let mut request = format!("GET {target} HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n");
    let has = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if !has("Host") {
        request.push_str(&format!("Host: {host}\r\n"));
    }
    if !has("Sec-WebSocket-Protocol") {
        request.push_str("Sec-WebSocket-Protocol: foxglove.sdk.v1\r\n");
    }
    for (name, value) in headers {
        if !value.is_empty() {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut got = Vec::new();
    let end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "the server closed before answering: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..end]).to_string();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status: {head}"));
    Answer { status, head, stream, rest: got[end..].to_vec() }
}

impl Answer {
    /// A refused handshake: everything the server sends after its headers, to the close.
    fn everything_after(mut self) -> String {
        self.stream.read_to_end(&mut self.rest).unwrap();
        String::from_utf8_lossy(&self.rest).to_string()
    }

    /// The next WebSocket frame from the server (unmasked): its opcode and payload.
    fn frame(&mut self) -> (u8, Vec<u8>) {
        let header = self.take(2);
        let (opcode, len) = (header[0] & 0x0f, (header[1] & 0x7f) as usize);
        let len = match len {
            126 => u16::from_be_bytes(self.take(2).try_into().unwrap()) as usize,
            127 => u64::from_be_bytes(self.take(8).try_into().unwrap()) as usize,
            n => n,
        };
        (opcode, self.take(len))
    }

    /// The next text frame as JSON.
    fn json(&mut self) -> Json {
        let (opcode, payload) = self.frame();
        assert_eq!(opcode, 1, "a text frame");
        serde_json::from_slice(&payload).unwrap()
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        while self.rest.len() < n {
            let mut buf = vec![0u8; 65536];
            let got = self.stream.read(&mut buf).unwrap();
            assert!(got > 0, "the server closed");
            self.rest.extend_from_slice(&buf[..got]);
        }
        self.rest.drain(..n).collect()
    }

    /// Sends a text frame, masked as a client's must be.
    fn send_text(&mut self, text: &str) {
        let mask = [0x5a, 0x17, 0xc3, 0x81];
        let mut frame = vec![0x81];
        match text.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(text.bytes().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&frame).unwrap();
    }
}

/// A served handshake: 101, the subprotocol, then serverInfo first.
fn assert_served(mut answer: Answer, case: &str) -> Answer {
    assert_eq!(answer.status, 101, "{case}: {}", answer.head);
    assert!(answer.head.to_ascii_lowercase().contains("sec-websocket-protocol: foxglove.sdk.v1"), "{case}: {}", answer.head);
    let info = answer.json();
    assert_eq!((info["op"].as_str(), info["name"].as_str()), (Some("serverInfo"), Some("morc")), "{case}: {info}");
    answer
}

/// A refused handshake: `status`, a reason in the body, and nothing of the protocol.
fn assert_refused(answer: Answer, status: u16, reason: &str, case: &str) {
    assert_eq!(answer.status, status, "{case}: {}", answer.head);
    let body = answer.everything_after();
    assert!(body.contains(reason), "{case}: the reason '{reason}' is said: {body}");
    assert!(!body.contains("serverInfo") && !body.contains("advertise") && !body.contains("\"op\""), "{case}: nothing of the live view is sent: {body}");
}

fn port_of(address: &str) -> u16 {
    address.rsplit_once(':').unwrap().1.parse().unwrap()
}

/// The handshake's checks, in this process.
#[test]
fn only_the_operator_and_foxglove_open_the_live_view() {
    // Each test its own live view: they run side by side and share nothing.
    let live = morc_live::Live::new();
    let served = live.start("127.0.0.1:0", None).unwrap();
    let port = port_of(&served);
    let page = live.page_address().unwrap();
    let host = format!("127.0.0.1:{port}");

    // Another site's page (what `new WebSocket("ws://127.0.0.1:8765")` in any tab sends).
    assert_refused(handshake(port, "/", &[("Origin", "http://evil.example")]), 403, "evil.example", "a page of another origin");
    assert_refused(handshake(port, "/", &[("Origin", "null")]), 403, "null", "a sandboxed page");
    // DNS rebinding: evil.example resolves to 127.0.0.1, the browser sends its own name.
    let rebound = format!("evil.example:{port}");
    assert_refused(handshake(port, "/", &[("Host", &rebound), ("Origin", &format!("http://{rebound}"))]), 403, "evil.example", "a rebound name");
    assert_refused(handshake(port, "/", &[("Host", &rebound)]), 403, "evil.example", "a rebound name, no Origin");
    // Served: no Origin (a script, Foxglove's desktop app), Foxglove's web app, the operator page.
    assert_served(handshake(port, "/", &[]), "no Origin");
    assert_served(handshake(port, "/", &[("Origin", "https://app.foxglove.dev")]), "Foxglove's app");
    assert_served(handshake(port, "/", &[("Origin", &format!("http://{page}")), ("Host", &host)]), "the operator page");
    assert_served(handshake(port, "/", &[("Host", &format!("localhost:{port}"))]), "by the name localhost");
    // The protocol must be offered.
    assert_refused(handshake(port, "/", &[("Sec-WebSocket-Protocol", "chat")]), 400, "foxglove.sdk.v1", "no Foxglove subprotocol");
    let older = handshake(port, "/", &[("Sec-WebSocket-Protocol", "foxglove.websocket.v1")]);
    assert!(older.status == 101 && older.head.contains("foxglove.websocket.v1"), "{}", older.head);
    drop(older);

    // At most MAX_CLIENTS at once; one more is told to come back.
    let mut held = Vec::new();
    while live.clients() > 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    for i in 0..morc_live::ws::MAX_CLIENTS {
        held.push(assert_served(handshake(port, "/", &[]), &format!("client {i}")));
    }
    assert_refused(handshake(port, "/", &[]), 503, "at most", "one client too many");
    held.clear();
    while live.clients() > 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_served(handshake(port, "/", &[]), "once the others have gone");
    live.stop();

    // Off loopback, reached via 127.0.0.1 (the policy goes by the address served): the token.
    let token = "a-token-for-the-test-0123456789";
    let served = live.start("0.0.0.0:0", Some(token.to_string())).unwrap();
    let port = port_of(&served);
    assert!(!live.access().unwrap().loopback_only());
    assert_refused(handshake(port, "/", &[]), 403, "token", "no token");
    assert_refused(handshake(port, "/?token=not-the-token-0123456789", &[]), 403, "token", "a wrong token");
    assert_served(handshake(port, &format!("/?token={token}"), &[]), "the token in the URL");
    assert_served(handshake(port, "/", &[("X-Morc-Token", token)]), "the token in the header");
    assert_refused(handshake(port, &format!("/?token={token}"), &[("Origin", "http://evil.example")]), 403, "evil.example", "the token from another site's page");
    assert_refused(handshake(port, &format!("/?token={token}"), &[("Host", &format!("evil.example:{port}"))]), 403, "evil.example", "the token, a rebound name");
    let url = live.access().unwrap().live_url();
    assert!(url.starts_with("ws://") && url.ends_with(&format!(":{port}/?token={token}")), "{url}");
    live.stop();
}

/// A client that subscribes and then reads nothing: its queue fills, its messages are dropped
/// and counted, the sender goes on at once, and the client is told when it reads again.
#[test]
fn a_client_that_does_not_read_loses_messages_and_nobody_waits_for_it() {
    // Each test its own live view: they run side by side and share nothing.
    let live = morc_live::Live::new();
    let served = live.start("127.0.0.1:0", None).unwrap();
    let mut slow = assert_served(handshake(port_of(&served), "/", &[]), "the slow client");
    let advertise = slow.json();
    let log = advertise["channels"].as_array().unwrap().iter().find(|c| c["topic"] == "/morc/log").unwrap_or_else(|| panic!("{advertise}"))["id"].as_u64().unwrap();
    slow.send_text(&format!(r#"{{"op":"subscribe","subscriptions":[{{"id":7,"channelId":{log}}}]}}"#));
    assert!(live.wait_for_client(Duration::from_secs(60)));

    let line = "x".repeat(10_000);
    const LINES: u64 = 20_000;
    for _ in 0..LINES {
        live.log_line(log::Level::Info, "test", &line);
    }
    // 200 MB offered: the queue (1024) and the socket's buffers hold a few MB, the rest is dropped.
    let unsent = live.unsent();
    assert!(unsent > LINES / 2 && unsent < LINES, "{unsent} of {LINES} messages dropped for the slow client");

    // Reading again, it finds its messages (subscription 7) and the warning that it lost some.
    let mut data = 0;
    let warning = loop {
        let (opcode, payload) = slow.frame();
        match opcode {
            2 => {
                assert_eq!((payload[0], u32::from_le_bytes(payload[1..5].try_into().unwrap())), (1, 7), "messageData of subscription 7");
                data += 1;
            }
            1 => {
                let m: Json = serde_json::from_slice(&payload).unwrap();
                if m["op"] == "status" {
                    break m;
                }
            }
            _ => {}
        }
    };
    assert!(warning["message"].as_str().unwrap().contains("reads too slowly") && warning["level"] == 1, "{warning}");
    assert!(data < LINES, "{data}");
    live.stop();
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-live-access-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn python() -> String {
    std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/live_client.py")
}

/// Runs the Python client with `args`; its JSON.
fn python_client(args: &[&str]) -> Json {
    let out = Command::new(python()).arg(client_script()).args(args).output().unwrap_or_else(|e| panic!("python3: {e}"));
    assert!(out.status.success(), "the client failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// Starts `morc ARGS run prog.lua` in `dir`; the child and its stderr lines up to the first
/// that names a ws:// URL, and that URL.
fn morc_live(dir: &Path, args: &[&str]) -> (std::process::Child, String, String, std::thread::JoinHandle<String>) {
    let mut morc = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(dir)
        .args(args)
        .args(["run", "prog.lua"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(morc.stderr.take().unwrap());
    let mut said = String::new();
    let url = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("morc said no address: {said}");
        }
        said.push_str(&line);
        if let Some(u) = line.split_whitespace().find(|w| w.starts_with("ws://")) {
            break u.to_string();
        }
    };
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    (morc, said, url, rest)
}

fn wall_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
}

/// Through `morc` on the virtual clock: a page of another site is refused (the Python client
/// sends its Origin), Foxglove's app is served and sees two runs of the KR 16: every stamp is
/// the wall clock's, a run's stamps are its start plus its time, and no stamp goes back from
/// one run to the next while `time` restarts.
#[test]
fn stamps_are_wall_clock_time_and_never_go_back_across_runs() {
    let dir = scratch("stamps");
    let program = r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = { 0, 0, 0, 0, 0, 0 } })
-- A first short run advertises the robot's channels before the client comes.
assert(morc.engine:run(morc.assembly { "settle", duration = 0.01 }).ok)
assert(morc.live.wait_for_client(60), "no client came")
for i = 1, 2 do
  -- A whole period: each run ends where and as the robot stood.
  local a = morc.assembly { "run " .. i, duration = 0.5 }
  -- 0.02·(1 − cos 4πt): from where the robot stands, at rest (the base refuses a jump), and small,
  -- so the servo's lag at the end leaves the robot within a command's step of where the next run starts.
  a:add("ref", "sine", { n = 6, amplitude = 0.02, frequency = 2, phase = -math.pi / 2, offset = 0.02 })
  a:connect("ref.y", "robot.q_cmd")
  local r = morc.engine:run(a)
  assert(r.ok, r.reason)
end
"#;
    std::fs::write(dir.join("prog.lua"), program).unwrap();
    let before = wall_ns();
    let (morc, _, url, rest) = morc_live(&dir, &["--live=127.0.0.1:0"]);

    let refused = python_client(&["--origin=http://evil.example", &url, "foxglove.sdk.v1", "60", "*"]);
    assert_eq!(refused["refused"], 403, "{refused}");
    assert!(refused["body"].as_str().unwrap().contains("evil.example"), "{refused}");

    let got = python_client(&["--runs=2", "--origin=https://app.foxglove.dev", &url, "foxglove.sdk.v1", "60", "/tool_pose", "/tf", "/morc/run", "/morc/log", "/morc/live"]);
    let out = morc.wait_with_output().unwrap();
    let said = rest.join().unwrap();
    assert!(out.status.success(), "morc failed: {said}");
    let after = wall_ns();
    assert_eq!(got["server"], "morc", "{got}");
    let runs: Vec<&str> = got["messages"]["/morc/run"].as_array().unwrap().iter().map(|r| r["assembly"].as_str().unwrap()).collect();
    assert_eq!(runs, ["run 1", "run 2"]);

    // Wall-clock UTC: between the test's own readings of the clock (the virtual clock runs the
    // two 0.5 s runs faster than the wall: their stamps may lead it by that much).
    for (topic, stamps) in got["stamps"].as_object().unwrap() {
        for s in stamps.as_array().unwrap() {
            let s = s.as_u64().unwrap();
            assert!(s >= before && s <= after + 2_000_000_000, "{topic}: stamp {s} is not between {before} and {after} (+ the runs' 1 s)");
        }
    }
    // The tool pose: its timestamp is the message's stamp; the stamps never go back though the
    // run time restarts; within a run the stamps are its start plus its time.
    let poses = got["messages"]["/tool_pose"].as_array().unwrap();
    let stamps: Vec<u64> = got["stamps"]["/tool_pose"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect();
    assert!(poses.len() >= 80, "{} poses from two 0.5 s runs at 100 Hz", poses.len());
    let mut restarts = 0;
    for (i, (pose, stamp)) in poses.iter().zip(&stamps).enumerate() {
        let ts = &pose["timestamp"];
        assert_eq!(ts["sec"].as_u64().unwrap() * 1_000_000_000 + ts["nsec"].as_u64().unwrap(), *stamp, "{pose}");
        if i == 0 {
            continue;
        }
        assert!(*stamp >= stamps[i - 1], "stamp {i} goes back: {} then {stamp}", stamps[i - 1]);
        let (t0, t1) = (poses[i - 1]["time"].as_f64().unwrap(), pose["time"].as_f64().unwrap());
        if t1 < t0 {
            restarts += 1;
        } else {
            let by_time = ((t1 * 1e9).round() - (t0 * 1e9).round()) as i64;
            let by_stamp = (*stamp - stamps[i - 1]) as i64;
            assert!((by_stamp - by_time).abs() <= 1, "within a run, stamps go as the run's time: {by_stamp} ns for {by_time} ns");
        }
    }
    assert_eq!(restarts, 1, "the run time restarts once, with run 2");
    // /tf carries the same stamps and time as the tool pose; the runs' ends and log lines go on from there.
    let tf = got["messages"]["/tf"].as_array().unwrap();
    for m in tf {
        let t = m["time"].as_f64().unwrap();
        assert!((0.0..=0.5).contains(&t), "{t}");
    }
    let run_stamps: Vec<u64> = got["stamps"]["/morc/run"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect();
    assert!(run_stamps[1] >= *stamps.last().unwrap() && run_stamps[0] <= run_stamps[1], "{run_stamps:?}");
}

/// `--live=0.0.0.0:…` says who can reach it and the URL with the token; the Python client
/// without the token is refused, with it served.
#[test]
fn off_loopback_morc_says_so_and_the_token_is_needed() {
    let dir = scratch("lan");
    std::fs::write(dir.join("prog.lua"), "assert(morc.live.wait_for_client(60), 'no client came')\nassert(morc.engine:run(morc.assembly { 'lan', duration = 0.05 }).ok)\n").unwrap();
    let (morc, said, url, rest) = morc_live(&dir, &["--live=0.0.0.0:0"]);
    let token = url.split_once("?token=").unwrap_or_else(|| panic!("no token in the URL: {said}")).1.to_string();
    assert!(token.len() >= 32, "{url}");
    let port = url.rsplit_once(':').unwrap().1.split('/').next().unwrap().to_string();
    let local = format!("ws://127.0.0.1:{port}/");
    let refused = python_client(&[&local, "foxglove.sdk.v1", "60", "/morc/run"]);
    assert_eq!(refused["refused"], 403, "{refused}");
    let got = python_client(&[&format!("{local}?token={token}"), "foxglove.sdk.v1", "60", "/morc/run"]);
    let out = morc.wait_with_output().unwrap();
    let said = said + &rest.join().unwrap();
    assert!(out.status.success(), "morc failed: {said}");
    assert_eq!(got["messages"]["/morc/run"][0]["assembly"], "lan", "{got}");
    assert!(said.contains("every interface") && said.contains("token"), "who can reach it is said: {said}");
}

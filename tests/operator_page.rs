//! The operator page as a person meets it: `morc --live ADDR run prog.lua` prints where the page
//! is, and a real browser (Debian's headless Chromium, driven by selenium through chromedriver:
//! tests/python/operator_page.py) opens it while the simulated KR 16 holds and then makes a long
//! motion: the joints and tool shown are the robot's (as the program's robot:state() has them),
//! a screenshot is taken, Hold really holds the robot (paused, its joints at rest, no progress),
//! Resume moves it on, the override slider at 20 % slows the motion to a fifth, and at 100 %
//! again it finishes.
//!
//! Needs chromium, chromium-driver and python3 with selenium (scripts/setup --test).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value as Json;

/// The KR 16 holds at home until the test writes "go" (short runs of nothing, on the wall clock,
/// so the page has the robot), then makes a slow PTP of about 20 s, printing its robot:state()
/// every 50 ms; it ends when the test writes "bye".
const PROGRAM: &str = r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = kr16.home })
local function csv(xs) local t = {} for i, x in ipairs(xs) do t[i] = string.format("%.4f", x) end return table.concat(t, ",") end
morc.engine:run(morc.assembly { "waiting", duration = 0.1 })
local s = kr16:state()
print("home q=" .. csv(s.q) .. " tool=" .. csv(s.tool.pos))
io.stdout:flush()
local waited = 0
while not io.open("go") do
  morc.engine:run(morc.assembly { "waiting", duration = 0.1 })
  waited = waited + 0.1
  assert(waited < 120, "the test did not say go")
end
local a = morc.assembly { "long move" }
a:add("traj", kr16:component("ptp"), { target = { 90, -70, 100, 60, 30, 90 }, vel_scale = 0.03, acc_scale = 0.2, settle = 0.05 })
kr16:add(a, "ff", "rnea")
a:connect("robot.q", "traj.start")
a:connect("traj.q", "robot.q_cmd")
a:connect("traj.qd", "robot.qd_ff")
a:connect("traj.q", "ff.q"); a:connect("traj.qd", "ff.qd"); a:connect("traj.qdd", "ff.qdd")
a:connect("ff.tau", "robot.tau_ff")
local h = morc.engine:start(a)
while h:status() == "running" do
  local st = kr16:state()
  local qd = 0
  for _, v in ipairs(st.qd) do qd = math.max(qd, math.abs(v)) end
  local progress = st.command and st.command.progress or -1
  print(string.format("state tick=%d paused=%s qd=%.6f progress=%.6f q=%s", st.tick, tostring(st.paused), qd, progress, csv(st.q)))
  io.stdout:flush()
  os.execute("sleep 0.05")
end
local r = h:wait()
print("done ok=" .. tostring(r.ok))
io.stdout:flush()
-- The page stays up until the test has seen the run finished on it.
local left = 1200
while not io.open("bye") and left > 0 do os.execute("sleep 0.05"); left = left - 1 end
"#;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-page-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn python() -> String {
    std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Pixels of a PNG: width, height and how many distinct colours it has.
fn png_colours(path: &Path) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let channels = frame.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> = pixels[..frame.buffer_size()].chunks_exact(channels).collect();
    (frame.width, frame.height, colours.len())
}

#[test]
fn an_operator_holds_resumes_and_slows_the_robot_from_the_page_in_a_browser() {
    for (file, package) in [("/usr/bin/chromium", "chromium"), ("/usr/bin/chromedriver", "chromium-driver")] {
        assert!(Path::new(file).exists(), "{file} is missing: run scripts/setup --test (it installs {package}; CI does)");
    }
    let has_selenium = Command::new(python()).args(["-c", "import selenium"]).status().is_ok_and(|s| s.success());
    assert!(has_selenium, "python3 has no selenium: run scripts/setup --test (CI does)");

    let dir = scratch("page");
    std::fs::write(dir.join("long.lua"), PROGRAM).unwrap();
    let out = std::fs::File::create(dir.join("out.txt")).unwrap();
    let mut morc = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(&dir)
        .args(["--clock", "wall", "--live=127.0.0.1:0", "run", "long.lua"])
        .stdout(out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // "live view on ws://…", then "operator page: http://127.0.0.1:PORT/?token=…".
    let mut stderr = BufReader::new(morc.stderr.take().unwrap());
    let mut url = None;
    let mut head = String::new();
    for _ in 0..2 {
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        head.push_str(&line);
        if let Some(u) = line.trim().strip_prefix("operator page: ") {
            url = Some(u.to_string());
        }
    }
    let Some(url) = url else {
        let _ = morc.kill();
        panic!("morc did not say where the operator page is: {head}");
    };
    assert!(url.starts_with("http://127.0.0.1:") && url.contains("/?token="), "{url}");
    // The rest of stderr, read on so that morc never blocks writing it.
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });

    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let shot = shots.join("operator_page.png");
    let _ = std::fs::remove_file(&shot);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/operator_page.py");
    let browser = Command::new(python()).arg(&script).arg(&url).arg(&dir).arg(&shot).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&browser.stdout), String::from_utf8_lossy(&browser.stderr));
    if !browser.status.success() {
        let _ = morc.kill();
        let _ = morc.wait();
        let program = std::fs::read_to_string(dir.join("out.txt")).unwrap_or_default();
        let tail: Vec<&str> = program.lines().rev().take(5).collect();
        panic!("the browser test failed:\n{said}\nmorc's stderr: {}\nthe program's last lines: {tail:?}", rest.join().unwrap_or_default());
    }
    println!("{said}");
    let status = morc.wait().unwrap();
    assert!(status.success(), "morc: {status}: {}", rest.join().unwrap_or_default());

    // The screenshot is the page drawn, not a blank window.
    let (w, h, colours) = png_colours(&shot);
    assert!(w >= 800 && h >= 600, "screenshot {w}×{h}");
    assert!(colours > 50, "the screenshot has only {colours} colours: the page was not drawn");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `morc --clock wall --live 127.0.0.1:0 run FILE` in `dir`, the page's address (host:port) and token.
fn morc_with_page(dir: &Path, file: &str) -> (std::process::Child, String, String) {
    let mut morc = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(dir)
        .args(["--clock", "wall", "--live=127.0.0.1:0", "run", file])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(morc.stderr.take().unwrap());
    let mut address = None;
    for _ in 0..2 {
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        address = address.or_else(|| line.trim().strip_prefix("operator page: http://").map(|a| a.trim_end_matches('/').to_string()));
    }
    let address: String = address.expect("morc says where the page is");
    let (address, token) = address.split_once("/?token=").expect("the page's URL has its token");
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (morc, address.to_string(), token.to_string())
}

/// A command as the page sends it: POST `path` with the JSON `body` and the token.
fn command(address: &str, token: &str, path: &str, body: &str) -> String {
    ask(address, &format!("POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nX-Morc-Token: {token}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()))
}

/// One raw HTTP request to the page; the whole answer.
fn ask(address: &str, request: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(address).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn the_page_jogs_the_robot_in_a_jog_session() {
    let dir = scratch("jog");
    std::fs::write(
        dir.join("jog.lua"),
        "local kr16 = require 'robots.kr16'\nmorc.use_robot(kr16, { q0 = kr16.home })\n\
         local h = morc.engine:start(require 'stdlib.assemblies.jog'(kr16, { until_still = false }))\n\
         local n = 0\nwhile not io.open('go') and n < 2400 do os.execute('sleep 0.05'); n = n + 1 end\nmorc.engine:cancel()\n",
    )
    .unwrap();
    let (mut morc, address, token) = morc_with_page(&dir, "jog.lua");
    let state = || -> Json {
        let answer = ask(&address, &format!("GET /state HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"));
        serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap()
    };
    let waiting = |what: &str, ok: &dyn Fn(&Json) -> bool| {
        let start = std::time::Instant::now();
        loop {
            let s = state();
            if ok(&s) {
                return s;
            }
            assert!(start.elapsed().as_secs() < 60, "waited 60 s for {what}: {s}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    waiting("the jog session", &|s| s["command"]["name"] == "jog");
    // 5° on A1 at 50 % of its speed, as the page's + button with step 5 sends it.
    let answer = command(&address, &token, "/jog", r#"{"joint":1,"dir":1,"step":5,"speed":50}"#);
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    let s = waiting("A1 at 5°", &|s| (s["joints"][0]["q"].as_f64().unwrap() - 5.0).abs() < 0.05 && s["joints"][0]["qd"].as_f64().unwrap().abs() < 0.5);
    assert!((s["joints"][1]["q"].as_f64().unwrap() + 90.0).abs() < 0.05, "A2 stayed: {s}");
    std::fs::write(dir.join("go"), "").unwrap();
    assert!(morc.wait().unwrap().success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Cartesian buttons pressed in a browser (tests/python/operator_jog.py): X+ in the base
/// frame moves the tool 10 mm along x keeping its orientation, Z− in the tool frame moves it
/// back along its own z, A+ turns it about the base's z keeping its position.
#[test]
fn the_pages_cartesian_buttons_move_the_tool_along_and_about_the_axes() {
    let has_selenium = Command::new(python()).args(["-c", "import selenium"]).status().is_ok_and(|s| s.success());
    assert!(Path::new("/usr/bin/chromedriver").exists() && has_selenium, "chromium-driver or python3's selenium is missing: run scripts/setup --test (CI does)");
    let dir = scratch("cartesian");
    // Away from singularities: the wrist bent, the arm reaching forward.
    std::fs::write(
        dir.join("jog.lua"),
        "local kr16 = require 'robots.kr16'\nmorc.use_robot(kr16, { q0 = { 10, -80, 100, 20, 40, 30 } })\n\
         local h = morc.engine:start(require 'stdlib.assemblies.jog'(kr16, { until_still = false }))\n\
         local n = 0\nwhile not io.open('go') and n < 2400 do os.execute('sleep 0.05'); n = n + 1 end\nmorc.engine:cancel()\n",
    )
    .unwrap();
    let (mut morc, address, token) = morc_with_page(&dir, "jog.lua");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/operator_jog.py");
    let browser = Command::new(python()).arg(&script).arg(format!("http://{address}/?token={token}")).output().unwrap();
    std::fs::write(dir.join("go"), "").unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&browser.stdout), String::from_utf8_lossy(&browser.stderr));
    assert!(browser.status.success(), "the browser test failed:\n{said}");
    println!("{said}");
    assert!(morc.wait().unwrap().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_requests_get_a_clear_http_error() {
    let dir = scratch("bad");
    // The live view on, the robot on the engine after one short run; the program waits for "go".
    std::fs::write(
        dir.join("wait.lua"),
        "local kr16 = require 'robots.kr16'\nmorc.use_robot(kr16, { q0 = kr16.home })\nlocal n = 0\nrepeat morc.engine:run(morc.assembly { 'waiting', duration = 0.05 }); n = n + 1 until io.open('go') or n > 2000\n",
    )
    .unwrap();
    let (mut morc, address, token) = morc_with_page(&dir, "wait.lua");
    let post = |path: &str, body: &str| command(&address, &token, path, body);
    let get = |path: &str| ask(&address, &format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"));
    // Until the robot is on the engine, commands say so (409); wait for it.
    let start = std::time::Instant::now();
    while post("/override", r#"{"percent":100}"#).starts_with("HTTP/1.1 409") {
        assert!(start.elapsed().as_secs() < 60, "the robot never came onto the page");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for (answer, status, says) in [
        (get("/nothing"), "404", "no page '/nothing'"),
        (get("/hold"), "405", "commands are sent with POST"),
        (post("/state", "{}"), "405", "use GET"),
        (post("/override", r#"{"percent":150}"#), "400", "from 0 to 100"),
        (post("/override", r#"{"percent":"x"}"#), "400", "percent=\"x\" is not a number"),
        (post("/override", "[1]"), "400", "must be a JSON object"),
        (post("/jog", r#"{"joint":7,"dir":1}"#), "400", "has joints 1 to 6"),
        (post("/jog", r#"{"joint":1,"dir":2}"#), "400", "give 1 or -1"),
        (post("/jog", r#"{"axis":"w","dir":1}"#), "400", "give x, y or z (along, mm) or a, b or c"),
        (post("/jog", r#"{"axis":"x","frame":"world","dir":1}"#), "400", "frame='world': give base or tool"),
        (post("/jog", &format!(r#"{{"joint":1,"step":"{}"}}"#, "9".repeat(5000))), "413", "at most 4096 bytes"),
        (ask(&address, "BREW / HTCPCP/1.0\r\n\r\n"), "400", ""),
        (get("/state"), "200", "\"robot\":\"KUKA KR 16-2\""),
    ] {
        assert!(answer.starts_with(&format!("HTTP/1.1 {status} ")), "{answer}");
        assert!(answer.contains(says), "{answer}");
    }
    // A request that never ends its headers is cut off, and the page goes on answering.
    let long = format!("GET /{} HTTP/1.1\r\n", "x".repeat(20_000));
    assert!(ask(&address, &long).starts_with("HTTP/1.1 431"), "an endless request");
    assert!(get("/").contains("morc operator"));
    std::fs::write(dir.join("go"), "").unwrap();
    assert!(morc.wait().unwrap().success());
    let _ = std::fs::remove_dir_all(&dir);
}

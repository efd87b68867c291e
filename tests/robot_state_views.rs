//! The state tells the truth (issue 39): while the arm brakes after Ctrl-C every view says
//! `stopping` with the joints' speeds, and once it stands still it says so — the operator page's
//! `GET /state` and the live view's `/morc/state` (read by an independent Foxglove client,
//! tests/python/live_client.py). ROS 2's `/morc/state` is checked in tests/ros_robot.rs.
//! The program is tests/programs/interrupted_swing.lua: A1 at 156 °/s; the test presses Ctrl-C
//! (SIGINT) once the page shows it at 120 °/s.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value as Json;

#[path = "support/state_story.rs"]
mod state_story;
use state_story::{check_story, watch_page_and_press_ctrl_c, word_and_speed};

fn python() -> String {
    std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into())
}

#[test]
fn braking_after_ctrl_c_is_stopping_on_the_page_and_the_live_view_then_idle() {
    let dir = std::env::temp_dir().join(format!("morc-state-views-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/interrupted_swing.lua");
    let mut morc = Command::new(env!("CARGO_BIN_EXE_morc"))
        .current_dir(&dir)
        .env("MORC_TEST_WATCHER", "live")
        .args(["--clock", "wall", "--live=127.0.0.1:0", "run"])
        .arg(&program)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(morc.stderr.take().unwrap());
    let (mut ws_url, mut page_url) = (None, None);
    let mut head = String::new();
    while ws_url.is_none() || page_url.is_none() {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "morc did not say where it serves: {head}");
        head.push_str(&line);
        ws_url = ws_url.or_else(|| line.split_whitespace().find(|w| w.starts_with("ws://")).map(str::to_string));
        page_url = page_url.or_else(|| line.trim().strip_prefix("operator page: http://").map(str::to_string));
    }
    let said = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let page_url = page_url.unwrap();
    let (address, token) = page_url.split_once("/?token=").unwrap();
    let (address, token) = (address.to_string(), token.to_string());
    let pid = morc.id();
    let poller = std::thread::spawn(move || watch_page_and_press_ctrl_c(&address, &token, pid));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/live_client.py");
    // --runs=2: the swing is the only run, so the client listens until morc closes the live view.
    let client = Command::new(python()).arg(script).arg("--runs=2").arg(ws_url.unwrap()).arg("foxglove.sdk.v1").arg("60").arg("/morc/state").output().unwrap();
    let out = morc.wait_with_output().unwrap();
    let said = said.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("interrupted\ttrue"), "morc: {stdout}\n{said}");
    let page = poller.join().unwrap();
    check_story("the operator page", &page, true);
    assert!(client.status.success(), "{}", String::from_utf8_lossy(&client.stderr));
    let got: Json = serde_json::from_slice(&client.stdout).unwrap();
    let live: Vec<(String, f64)> = got["messages"]["/morc/state"].as_array().unwrap_or_else(|| panic!("no /morc/state: {got}")).iter().map(word_and_speed).collect();
    check_story("the live view's /morc/state", &live, true);
    println!("page: {} states polled; live view: {} /morc/state messages", page.len(), live.len());
    let _ = std::fs::remove_dir_all(&dir);
}

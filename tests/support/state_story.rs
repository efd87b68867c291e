//! What a view of the robot's state showed, checked as a story (tests/robot_state_views.rs,
//! tests/ros_robot.rs): moving, then `stopping` while the arm brakes, then still.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

/// The operator page's state now (none when morc is gone).
pub fn page_state(address: &str, token: &str) -> Option<Json> {
    let mut s = TcpStream::connect(address).ok()?;
    write!(s, "GET /state HTTP/1.1\r\nHost: {address}\r\nX-Morc-Token: {token}\r\nConnection: close\r\n\r\n").ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    serde_json::from_str(answer.split_once("\r\n\r\n")?.1).ok()
}

/// Polls the page as a script would (every 10 ms) until morc is gone; presses Ctrl-C on morc
/// (`pid`: SIGINT, as the terminal sends it) once A1 turns faster than 120 °/s. What it showed.
pub fn watch_page_and_press_ctrl_c(address: &str, token: &str, pid: u32) -> Vec<(String, f64)> {
    let mut seen = Vec::new();
    let mut pressed = false;
    let start = Instant::now();
    while let Some(s) = page_state(address, token) {
        if s["robot"].is_string() {
            let a1 = s["joints"][0]["qd"].as_f64().unwrap_or(0.0);
            if !pressed && s["state"] == "moving" && a1.abs() > 120.0 {
                // SAFETY: kill(2) on the pid of the child the test started.
                unsafe { libc::kill(pid as i32, libc::SIGINT) };
                pressed = true;
            }
            seen.push(word_and_speed(&s));
        }
        assert!(start.elapsed() < Duration::from_secs(120), "morc ran 120 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(pressed, "A1 never turned at 120 °/s: {seen:?}");
    seen
}

/// A state message's word and its fastest joint (°/s, or mm/s).
pub fn word_and_speed(state: &Json) -> (String, f64) {
    let speed = state["joints"].as_array().map_or(0.0, |js| js.iter().filter_map(|j| j["qd"].as_f64()).fold(0.0_f64, |m, v| m.max(v.abs())));
    (state["state"].as_str().unwrap_or("?").to_string(), speed)
}

/// What a view showed, state by state, tells the truth: it moved, then braked as `stopping`
/// from a good speed (never `holding` or `idle` while a joint still turns), then stood still.
/// `with_speeds`: the view carries the joints' speeds with its states (else only the words are checked).
pub fn check_story(view: &str, seen: &[(String, f64)], with_speeds: bool) {
    let story: Vec<&str> = seen.iter().map(|(w, _)| w.as_str()).fold(Vec::new(), |mut v, w| {
        if v.last() != Some(&w) {
            v.push(w);
        }
        v
    });
    let moving = seen.iter().position(|(w, _)| w == "moving").unwrap_or_else(|| panic!("{view} never said moving: {story:?}"));
    let stopping = seen[moving..].iter().position(|(w, _)| w == "stopping").map(|i| i + moving).unwrap_or_else(|| panic!("{view} never said stopping: {story:?}"));
    let fastest_braking = seen.iter().filter(|(w, _)| w == "stopping").map(|(_, v)| *v).fold(0.0, f64::max);
    if !with_speeds {
        assert!(story.ends_with(&["stopping", "idle"]), "{view}: {story:?}");
        println!("{view}: {story:?}");
        return;
    }
    assert!(fastest_braking > 50.0, "{view}: while stopping the joints' speeds show the braking (fastest {fastest_braking:.1} °/s): {story:?}");
    for (w, v) in &seen[stopping..] {
        assert!(w == "stopping" || *v < 1.0, "{view} said '{w}' while a joint turned at {v:.1} °/s: {story:?}");
    }
    let (last, still) = seen.last().unwrap();
    assert!(last == "idle" && *still < 0.5, "{view} ends '{last}' at {still} °/s: {story:?}");
    println!("{view}: {story:?}, braking from {fastest_braking:.0} °/s");
}

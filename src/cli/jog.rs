//! The REPL's jog mode (`jog` typed alone), as on a pendant: keys move the robot on the engine —
//! a joint, or the tool along or about an axis of the base or the tool — while they are held
//! (the terminal's key repeat keeps the jog alive; when the repeats stop the robot stops), or
//! by an increment per press. The robot's jog component does the moving within the limits
//! (crates/morc-robot/src/components/jog.rs); this file only reads keys and shows where the
//! robot is.

use std::time::{Duration, Instant};

use mlua::{AnyUserData, Function, Lua, ObjectLike, Table};

use morc_kernel::monotonic_ns;
use morc_lua::LuaRobot;
use morc_robot::operator::{JogCommand, JogFrame};

/// A key press keeps the jog moving this long; the terminal's first repeat comes after its
/// repeat delay (typically 250–600 ms), later ones every 30–50 ms.
const FIRST_HOLD: Duration = Duration::from_millis(650);
const REPEAT_HOLD: Duration = Duration::from_millis(150);
/// Jog speeds offered (% of the joint's velocity limit, or of the tool's 250 mm/s).
const SPEEDS: [f64; 6] = [1.0, 5.0, 10.0, 25.0, 50.0, 100.0];
/// Increments offered: 0 is moving while held; the rest in ° or mm.
const INCREMENTS: [f64; 4] = [0.0, 10.0, 1.0, 0.1];

const HELP: &str = "jog mode — q/a w/s e/d r/f t/g y/h: axis 1…6 + / −   arrows: axis 1, 2   m: joint / base / tool   +/−: speed   i: increment   Esc or Enter: back to the prompt";

/// The terminal in raw mode while jogging (keys arrive one by one, unechoed); restored on drop.
struct RawTerminal(libc::termios);

impl RawTerminal {
    fn enter() -> Result<RawTerminal, String> {
        // SAFETY: tcgetattr/tcsetattr on standard input with a termios we own.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return Err("jog mode needs a terminal (standard input is not one)".into());
            }
            let saved = t;
            t.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG);
            t.c_cc[libc::VMIN] = 0;
            t.c_cc[libc::VTIME] = 0;
            if libc::tcsetattr(0, libc::TCSANOW, &t) != 0 {
                return Err(format!("cannot set the terminal to raw mode: {}", std::io::Error::last_os_error()));
            }
            Ok(RawTerminal(saved))
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        // SAFETY: restores the attributes read in `enter`.
        unsafe { libc::tcsetattr(0, libc::TCSANOW, &self.0) };
    }
}

/// The keys that arrived within `wait` (empty when none did).
fn read_keys(wait: Duration) -> Vec<u8> {
    let mut fds = libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 };
    // SAFETY: one pollfd we own; a read into a buffer we own.
    unsafe {
        if libc::poll(&mut fds, 1, wait.as_millis() as i32) <= 0 {
            return Vec::new();
        }
        let mut buf = [0u8; 64];
        let n = libc::read(0, buf.as_mut_ptr().cast(), buf.len());
        if n <= 0 {
            return Vec::new();
        }
        buf[..n as usize].to_vec()
    }
}

/// What one key asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Key {
    Move(usize, f64),
    Mode,
    Faster,
    Slower,
    Increment,
    Leave,
}

fn keys(bytes: &[u8]) -> Vec<Key> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        i += 1;
        let key = match b {
            0x1b if bytes.get(i) == Some(&b'[') => {
                let k = bytes.get(i + 1).copied();
                i += 2;
                match k {
                    Some(b'C') => Key::Move(0, 1.0),
                    Some(b'D') => Key::Move(0, -1.0),
                    Some(b'A') => Key::Move(1, 1.0),
                    Some(b'B') => Key::Move(1, -1.0),
                    _ => continue,
                }
            }
            0x1b | b'\r' | b'\n' | 3 | 4 => Key::Leave,
            b'm' => Key::Mode,
            b'+' | b'=' => Key::Faster,
            b'-' | b'_' => Key::Slower,
            b'i' => Key::Increment,
            c => match b"qawsedrftgyh".iter().position(|k| *k == c) {
                Some(p) => Key::Move(p / 2, if p % 2 == 0 { 1.0 } else { -1.0 }),
                None => continue,
            },
        };
        out.push(key);
    }
    out
}

/// Runs jog mode until the operator leaves it; the robot is still when it returns.
pub fn run(lua: &Lua) -> Result<(), String> {
    let err = |e: mlua::Error| e.to_string();
    let morc: Table = lua.globals().get("morc").map_err(err)?;
    let robot_ud = match morc.get::<mlua::Value>("current_robot").map_err(err)? {
        mlua::Value::UserData(ud) if ud.is::<LuaRobot>() => ud,
        _ => return Err("no robot on the engine: morc.use_robot(require \"robots.kr16\", { clock = \"wall\" }) first".into()),
    };
    let robot = robot_ud.borrow::<LuaRobot>().map_err(err)?.0.clone();
    let clock: String = lua.load("return morc.engine.clock").eval().map_err(err)?;
    if clock != "wall" {
        return Err(format!("jog mode moves in real time, and the engine runs on the {clock} clock: morc.use_robot(r, {{ clock = \"wall\" }}) first"));
    }
    let start: Function = lua
        .load("return function(r) return morc.engine:start(require 'stdlib.assemblies.jog'(r, { until_still = false })) end")
        .set_name("=morc.jog")
        .eval()
        .map_err(err)?;
    // A fresh command: nothing moves, and nothing left over asks the new run to end.
    robot.operator.jog(JogCommand::default());
    let handle: AnyUserData = start.call(robot_ud.clone()).map_err(|e| morc_lua::lua_error_text(&e))?;
    let state: Function = lua.load("return function(r) return r:state() end").set_name("=morc.jog").eval().map_err(err)?;
    println!("{HELP}");
    let terminal = RawTerminal::enter();
    let mut frame = JogFrame::Joint;
    let (mut speed, mut increment) = (2usize, 0usize);
    let mut last: Option<(Key, Instant)> = None;
    let mut shown = Instant::now() - Duration::from_secs(1);
    let mut ended = None;
    if let Err(e) = &terminal {
        ended = Some(e.clone());
    }
    while ended.is_none() {
        for key in keys(&read_keys(Duration::from_millis(20))) {
            match key {
                Key::Leave => ended = Some(String::new()),
                Key::Mode => {
                    frame = match frame {
                        JogFrame::Joint => JogFrame::Base,
                        JogFrame::Base => JogFrame::Tool,
                        JogFrame::Tool => JogFrame::Joint,
                    };
                    robot.operator.stop_jog();
                }
                Key::Faster => speed = (speed + 1).min(SPEEDS.len() - 1),
                Key::Slower => speed = speed.saturating_sub(1),
                Key::Increment => increment = (increment + 1) % INCREMENTS.len(),
                Key::Move(axis, direction) => {
                    let axes = if frame == JogFrame::Joint { robot.dof() } else { 6 };
                    if axis >= axes {
                        continue;
                    }
                    let step = INCREMENTS[increment];
                    let repeat = last.is_some_and(|(k, at)| k == key && at.elapsed() < FIRST_HOLD) && step == 0.0;
                    let hold = if repeat { REPEAT_HOLD } else { FIRST_HOLD };
                    let until_ns = monotonic_ns() + hold.as_nanos() as u64;
                    let current = robot.operator.jog_now();
                    // A repeat keeps the jog held, unless it ran out already (then it starts anew).
                    if !(repeat && current.direction != 0.0 && robot.operator.hold_jog(current.id, until_ns)) {
                        let to_si = match frame {
                            JogFrame::Joint if robot.is_prismatic(axis) => 1e-3,
                            JogFrame::Joint => 1f64.to_radians(),
                            _ if axis < 3 => 1e-3,
                            _ => 1f64.to_radians(),
                        };
                        let until_ns = if step > 0.0 { 0 } else { until_ns };
                        robot.operator.jog(JogCommand { frame, axis, direction, speed: SPEEDS[speed] / 100.0, step: step * to_si, until_ns, ..JogCommand::default() });
                    }
                    last = Some((key, Instant::now()));
                }
            }
        }
        let status: String = handle.call_method("status", ()).map_err(err)?;
        if status != "running" {
            ended = Some("the jog ended".into());
        }
        if shown.elapsed() > Duration::from_millis(100) || ended.is_some() {
            shown = Instant::now();
            let s: Table = state.call(robot_ud.clone()).map_err(err)?;
            print!("\r\x1b[K{}", status_line(&robot, &s, frame, SPEEDS[speed], INCREMENTS[increment]));
            let _ = std::io::Write::flush(&mut std::io::stdout());
        }
    }
    drop(terminal);
    println!();
    // Back to the prompt with the robot still: the jog decelerates and its run ends then.
    robot.operator.finish_jog();
    let result: Table = handle.call_method("wait", ()).map_err(|e| morc_lua::lua_error_text(&e))?;
    match ended.filter(|e| !e.is_empty()) {
        Some(why) if why != "the jog ended" => Err(why),
        Some(why) => Err(format!("{why}: {}", result.get::<String>("reason").unwrap_or_default())),
        None => Ok(()),
    }
}

/// One line: mode, speed, increment, where the robot is, and why a jog stopped.
fn status_line(robot: &morc_robot::Robot, s: &Table, frame: JogFrame, speed: f64, increment: f64) -> String {
    let mode = match frame {
        JogFrame::Joint => "joints",
        JogFrame::Base => "base",
        JogFrame::Tool => "tool",
    };
    let step = if increment > 0.0 { format!("step {increment}") } else { "held".into() };
    let position = if frame == JogFrame::Joint {
        let q: Vec<f64> = s.get("q").unwrap_or_default();
        q.iter().zip(&robot.joints).map(|(x, j)| format!("{} {x:.2}", j.name)).collect::<Vec<_>>().join("  ")
    } else {
        let tool: Option<Table> = s.get("tool").ok();
        let pos: Vec<f64> = tool.as_ref().and_then(|t| t.get("pos").ok()).unwrap_or_default();
        let rpy: Vec<f64> = tool.as_ref().and_then(|t| t.get("rpy").ok()).unwrap_or_default();
        let names = ["x", "y", "z", "a", "b", "c"];
        pos.iter().chain(&rpy).zip(names).map(|(x, n)| format!("{n} {x:.1}")).collect::<Vec<_>>().join("  ")
    };
    let stopped = match robot.operator.jog_stopped() {
        morc_robot::operator::JogStop::None => String::new(),
        morc_robot::operator::JogStop::Limit(j) => format!("  — {} stops before its limit", robot.joints[j].name),
        morc_robot::operator::JogStop::Singularity => "  — near a singularity: jog a joint".into(),
    };
    format!("jog {mode} {speed}% {step} | {position}{stopped}")
}

#[cfg(test)]
mod tests {
    use super::{keys, Key};

    #[test]
    fn keys_and_arrows_map_to_axes() {
        assert_eq!(keys(b"qa"), [Key::Move(0, 1.0), Key::Move(0, -1.0)]);
        assert_eq!(keys(b"h"), [Key::Move(5, -1.0)]);
        assert_eq!(keys(b"\x1b[A\x1b[D"), [Key::Move(1, 1.0), Key::Move(0, -1.0)]);
        assert_eq!(keys(b"m+-i\x1b"), [Key::Mode, Key::Faster, Key::Slower, Key::Increment, Key::Leave]);
        assert_eq!(keys(b"z"), []);
    }
}

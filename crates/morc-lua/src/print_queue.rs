//! `print` from a real-time Lua step: the line goes into a bounded queue of preallocated lines
//! (no lock, no allocation, never blocking; a line that finds the queue full is dropped and
//! counted), and a thread of its own writes the queue to standard output. A run's lines are
//! all out when its result comes back ([`flush`]).

use std::io::Write;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, Sender};
use mlua::ffi;

/// Bytes of a line kept; the rest is cut (and marked by "…").
const LINE_BYTES: usize = 240;
/// Lines the queue holds before new ones are dropped.
const QUEUE_LINES: usize = 4096;

/// One printed line, fixed size so queueing it allocates nothing.
pub(crate) struct Line {
    len: usize,
    cut: bool,
    bytes: [u8; LINE_BYTES],
}

impl Line {
    fn new() -> Self {
        Line { len: 0, cut: false, bytes: [0; LINE_BYTES] }
    }
    fn push(&mut self, s: &[u8]) {
        let room = LINE_BYTES - self.len;
        let n = s.len().min(room);
        self.bytes[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
        self.cut |= n < s.len();
    }
}

struct Queue {
    lines: Sender<Line>,
    out: Receiver<Line>,
    dropped: AtomicU64,
}

static QUEUE: OnceLock<Queue> = OnceLock::new();

fn queue() -> &'static Queue {
    QUEUE.get_or_init(|| {
        let (lines, out) = bounded(QUEUE_LINES);
        let _ = std::thread::Builder::new().name("morc-lua-print".into()).spawn(|| loop {
            std::thread::sleep(Duration::from_millis(20));
            flush();
        });
        Queue { lines, out, dropped: AtomicU64::new(0) }
    })
}

/// Makes sure the queue and its writer thread exist (before any real-time step prints).
pub(crate) fn start() {
    queue();
}

/// Writes every queued line to standard output now (and says how many were dropped).
pub fn flush() {
    let Some(q) = QUEUE.get() else {
        return; // no Lua component has run
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    while let Ok(line) = q.out.try_recv() {
        let _ = out.write_all(&line.bytes[..line.len]);
        let _ = out.write_all(if line.cut { "…\n".as_bytes() } else { b"\n" });
    }
    let dropped = q.dropped.swap(0, Ordering::Relaxed);
    if dropped > 0 {
        let _ = writeln!(out, "({dropped} lines printed by real-time Lua components were dropped: more than {QUEUE_LINES} waited to be written)");
    }
    let _ = out.flush();
}

/// `print(...)` in a stepping thread's Lua state: like Lua's (tab-separated `tostring`s), into
/// the queue.
///
/// # Safety
/// Called by Lua as a C function.
pub(crate) unsafe extern "C-unwind" fn lua_print(state: *mut ffi::lua_State) -> c_int {
    let mut line = Line::new();
    let n = ffi::lua_gettop(state);
    for i in 1..=n {
        if i > 1 {
            line.push(b"\t");
        }
        let mut len = 0usize;
        let p = ffi::luaL_tolstring(state, i, &mut len);
        line.push(std::slice::from_raw_parts(p as *const u8, len));
        ffi::lua_pop(state, 1);
    }
    let q = queue();
    if q.lines.try_send(line).is_err() {
        q.dropped.fetch_add(1, Ordering::Relaxed);
    }
    0
}

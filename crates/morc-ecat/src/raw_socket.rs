//! The virtual segment on a Linux network interface: an AF_PACKET raw socket bound to
//! EtherType 0x88A4 takes EtherCAT frames from whatever master is on the other end of the
//! wire (a veth peer, a NIC), passes them through the simulated devices, and sends the
//! replies back, as the first ESC of a real line would. The master side
//! ([`crate::master::Link::Interface`]) uses the same socket type for ethercrab's frames.
//!
//! Needs root or CAP_NET_RAW. Virtual time follows the wall clock here: before each frame
//! the segment advances by the time elapsed since the last one.

use crate::transport::{lock, SharedSegment, MAX_FRAME_LEN};
use crate::virtual_bus::{shared_sim_segment, SimSegmentConfig};
use crate::BusError;
use morc_ecat_wire::frame::ETHERTYPE_ETHERCAT;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Linux `PACKET_OUTGOING` (sll_pkttype of frames this host sent).
const PACKET_OUTGOING: u8 = 4;
/// Linux `PACKET_IGNORE_OUTGOING` socket option (4.20+).
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// A raw socket on one interface, EtherCAT frames only.
pub(crate) struct RawSocket {
    fd: OwnedFd,
    ifindex: i32,
}

impl RawSocket {
    pub(crate) fn open(interface: &str) -> io::Result<RawSocket> {
        let name = CString::new(interface).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name contains NUL"))?;
        // SAFETY: `name` is a NUL-terminated CString that outlives the call; if_nametoindex only reads it.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no network interface '{interface}'")));
        }
        let protocol = ETHERTYPE_ETHERCAT.to_be();
        // SAFETY: socket() takes no pointers; its result is checked before use.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(protocol)) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a freshly opened descriptor (checked >= 0 above) that nothing else owns or closes.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let one: libc::c_int = 1;
        // Our own replies would otherwise come back to us as input.
        // SAFETY: `fd` is open; the option value points to `one`, a live c_int, with its exact size.
        unsafe {
            libc::setsockopt(fd.as_raw_fd(), libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &one as *const _ as *const libc::c_void, std::mem::size_of::<libc::c_int>() as u32);
        }
        // SAFETY: sockaddr_ll is a plain C struct of integers and byte arrays: all-zero is a valid value.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = protocol;
        addr.sll_ifindex = ifindex;
        // SAFETY: `fd` is open; the address points to `addr`, a live sockaddr_ll, and the length is its size.
        let r = unsafe { libc::bind(fd.as_raw_fd(), &addr as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        // Masters send to the broadcast address, but some use the device's MAC: take all.
        // SAFETY: packet_mreq is a plain C struct of integers and a byte array: all-zero is a valid value.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        // SAFETY: `fd` is open; the option value points to `mreq`, a live packet_mreq, with its exact size.
        unsafe {
            libc::setsockopt(fd.as_raw_fd(), libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq as *const _ as *const libc::c_void, std::mem::size_of::<libc::packet_mreq>() as u32);
        }
        Ok(RawSocket { fd, ifindex })
    }

    /// Waits up to `timeout` for an incoming frame; `Ok(None)` on timeout.
    pub(crate) fn receive(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut pfd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // ppoll: microsecond timeouts (cycle times are below a millisecond).
            let ts = libc::timespec { tv_sec: left.as_secs() as libc::time_t, tv_nsec: left.subsec_nanos() as libc::c_long };
            // SAFETY: `pfd` and `ts` are live locals and nfds is 1 (one pollfd); a null sigmask means "keep the current one".
            let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                return Ok(None);
            }
            // SAFETY: sockaddr_ll is a plain C struct of integers and byte arrays: all-zero is a valid value.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            // SAFETY: the kernel writes at most `buf.len()` bytes into `buf` (an exclusive borrow) and at most
            // `len` bytes into `from`, a live sockaddr_ll whose size `len` holds.
            let n = unsafe { libc::recvfrom(self.fd.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, buf.len(), 0, &mut from as *mut _ as *mut libc::sockaddr, &mut len) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            // Kernels without PACKET_IGNORE_OUTGOING still show us what we sent.
            if from.sll_pkttype == PACKET_OUTGOING {
                continue;
            }
            return Ok(Some(n as usize));
        }
    }

    pub(crate) fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: sockaddr_ll is a plain C struct of integers and byte arrays: all-zero is a valid value.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = ETHERTYPE_ETHERCAT.to_be();
        addr.sll_ifindex = self.ifindex;
        addr.sll_halen = 6;
        addr.sll_addr[..6].copy_from_slice(&frame[..6.min(frame.len())]);
        // SAFETY: the kernel reads `frame.len()` bytes from `frame` and the sockaddr_ll `addr`, both alive for the call.
        let n = unsafe {
            libc::sendto(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), 0, &addr as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32)
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// An OS error in words with its name, as "network is down (ENETDOWN)" (strerror's text
/// alone does not say which errno to look up).
pub(crate) fn os_error_text(errno: i32) -> String {
    let name = match errno {
        libc::ENETDOWN => "ENETDOWN",
        libc::ENODEV => "ENODEV",
        libc::ENXIO => "ENXIO",
        libc::ENOBUFS => "ENOBUFS",
        libc::EAGAIN => "EAGAIN",
        libc::EPERM => "EPERM",
        libc::EACCES => "EACCES",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::EIO => "EIO",
        libc::EINVAL => "EINVAL",
        libc::EBADF => "EBADF",
        libc::EINTR => "EINTR",
        _ => "",
    };
    let text = io::Error::from_raw_os_error(errno).to_string();
    // "Network is down (os error 100)" → "network is down".
    let text = text.split(" (os error").next().unwrap_or(&text);
    let mut words: String = text.chars().take(1).flat_map(char::to_lowercase).chain(text.chars().skip(1)).collect();
    if name.is_empty() {
        words.push_str(&format!(" (errno {errno})"));
    } else {
        words.push_str(&format!(" ({name})"));
    }
    words
}

/// Counts of a running server.
#[derive(Debug, Default)]
pub struct ServerCounters {
    /// EtherCAT frames received on the interface.
    pub frames: AtomicU64,
    /// Replies sent back.
    pub replies: AtomicU64,
    /// Frames the segment refused as malformed (no reply: the master times out).
    pub malformed: AtomicU64,
    /// Frames taken and not answered because the server was made silent.
    pub ignored: AtomicU64,
    /// Times the server stopped serving for a while ([`SegmentServer::stall`]).
    pub stalls: AtomicU64,
}

/// Fault injection on a served segment, set from another thread.
#[derive(Debug, Default)]
struct ServerFaults {
    /// Hold the next frame taken this many ns before answering it (0: no stall).
    stall_ns: AtomicU64,
    /// Take frames and answer none (a line cut behind the master's port).
    silent: AtomicBool,
}

/// A segment served on an interface by a thread of its own; stops when dropped.
pub struct SegmentServer {
    stop: Arc<AtomicBool>,
    faults: Arc<ServerFaults>,
    thread: Option<JoinHandle<io::Result<()>>>,
    counters: Arc<ServerCounters>,
    segment: SharedSegment,
}

impl SegmentServer {
    /// Opens the socket on the calling thread (so it lives in the caller's network
    /// namespace), then serves `segment` from a new thread.
    pub fn start(interface: &str, segment: SharedSegment) -> io::Result<SegmentServer> {
        Self::start_with(interface, segment, None)
    }

    /// [`start`](Self::start), the serving thread scheduled by `rt` (a segment stands for
    /// hardware: in a benchmark it must not wait behind ordinary threads).
    pub fn start_with(interface: &str, segment: SharedSegment, rt: Option<morc_kernel::rt::RtPolicy>) -> io::Result<SegmentServer> {
        let socket = RawSocket::open(interface)?;
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(ServerCounters::default());
        let faults = Arc::new(ServerFaults::default());
        let (s, c, seg, f) = (stop.clone(), counters.clone(), segment.clone(), faults.clone());
        let thread = std::thread::Builder::new().name(format!("segment-{interface}")).spawn(move || {
            if let Some(policy) = rt {
                morc_kernel::rt::apply_to_current_thread(policy, "segment server");
            }
            serve(&socket, &seg, &s, &c, &f)
        })?;
        Ok(SegmentServer { stop, faults, thread: Some(thread), counters, segment })
    }

    /// Fault injection: the next frame the server takes waits `pause` before it is answered,
    /// as at a peer that is not real-time when it is descheduled. Frames behind it wait in the
    /// socket meanwhile and are all answered afterwards, in order: their replies come late,
    /// none is lost. (Counted from the frame, not from this call, so the delay a frame sees
    /// does not depend on how the caller's thread was scheduled.)
    pub fn stall(&self, pause: Duration) {
        self.faults.stall_ns.store(pause.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Fault injection: `true` takes every frame and answers none (the line cut behind the
    /// master's port); `false` serves again.
    pub fn set_silent(&self, silent: bool) {
        self.faults.silent.store(silent, Ordering::Relaxed);
    }

    /// What the server has handled so far.
    pub fn counters(&self) -> &ServerCounters {
        &self.counters
    }
    /// The segment being served.
    pub fn segment(&self) -> &SharedSegment {
        &self.segment
    }

    /// Stops serving; the error that ended the thread, if any.
    pub fn stop(mut self) -> io::Result<()> {
        self.stop_thread()
    }

    fn stop_thread(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the segment server thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for SegmentServer {
    fn drop(&mut self) {
        let _ = self.stop_thread();
    }
}

fn serve(socket: &RawSocket, segment: &SharedSegment, stop: &AtomicBool, counters: &ServerCounters, faults: &ServerFaults) -> io::Result<()> {
    let mut frame = vec![0u8; MAX_FRAME_LEN + 4];
    let mut reply = vec![0u8; MAX_FRAME_LEN + 4];
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let Some(n) = socket.receive(&mut frame, Duration::from_millis(20))? else { continue };
        counters.frames.fetch_add(1, Ordering::Relaxed);
        if faults.silent.load(Ordering::Relaxed) {
            counters.ignored.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let stall = faults.stall_ns.swap(0, Ordering::Relaxed);
        if stall > 0 {
            counters.stalls.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_nanos(stall));
        }
        let now = Instant::now();
        let result = {
            let mut s = lock(segment);
            s.advance(now.duration_since(last).as_nanos() as u64);
            s.process_frame(&frame[..n], &mut reply)
        };
        last = now;
        match result {
            Ok(len) => {
                socket.send(&reply[..len])?;
                counters.replies.fetch_add(1, Ordering::Relaxed);
            }
            // A real line would drop or mangle it; the master times out.
            Err(_) => {
                counters.malformed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    Ok(())
}

/// `morc bus serve`: the simulated segment on `interface` until the process ends.
pub fn serve_forever(interface: &str, config: &SimSegmentConfig) -> Result<(), BusError> {
    let segment = shared_sim_segment(config).map_err(BusError::Sim)?;
    let server = SegmentServer::start(interface, segment).map_err(|e| BusError::Link(format!("cannot serve on '{interface}': {e} (needs root or CAP_NET_RAW)")))?;
    eprintln!("serving a simulated segment ({} drives) on {interface}; Ctrl-C to stop", config.drives);
    loop {
        std::thread::sleep(Duration::from_secs(1));
        if server.thread.as_ref().is_some_and(|t| t.is_finished()) {
            return server.stop().map_err(|e| BusError::Link(format!("segment server on '{interface}' stopped: {e}")));
        }
    }
}

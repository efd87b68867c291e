//! Who gets one of the operator page's connections, so that Hold and Reset always get through to
//! the token's holder however many connections others open.
//!
//! Whether a connection belongs to the token's holder is known only once a request on it carries
//! the token ("proven"). Until then it is unproven: silent (no whole request yet) or idle between
//! requests on keep-alive. Unproven connections have a budget of their own, in total
//! ([`UNPROVEN_TOTAL`]) and per peer address ([`UNPROVEN_PER_PEER`]); a new connection beyond it
//! pushes out an unproven one, taken from the peer holding the most: an idle keep-alive first,
//! else the longest silent one that has sent nothing the server has not read yet, else the
//! longest silent. So a crowd of silent or idle clients is cut down, and a fresh connection whose
//! request is already on its way (a Hold's arrives within a millisecond) is not the one pushed
//! out, however fast the crowd reconnects. Under that pressure silent connections have [`PRESSED_HEADER_TIMEOUT`] to finish
//! their headers instead of [`HEADER_TIMEOUT`], and idle unproven ones are closed. A proven
//! connection (the page in the operator's browser) is never pushed out by unproven ones.

use std::collections::HashMap;
use std::net::IpAddr;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Connections served at once, proven or not; a new one beyond pushes out an unproven one, or is
/// closed at once when every one is proven or busy.
pub const MAX_CONNECTIONS: usize = 256;
/// Unproven connections (no request with the token yet) at once, from everyone.
pub const UNPROVEN_TOTAL: usize = 64;
/// Unproven connections at once from one peer address.
pub const UNPROVEN_PER_PEER: usize = 32;
/// A request's headers must arrive within this (a client sending a byte now and then is cut off).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// As [`HEADER_TIMEOUT`], while more than half the unproven budget is taken.
pub const PRESSED_HEADER_TIMEOUT: Duration = Duration::from_millis(250);
/// An unproven keep-alive connection is closed after this long idle (at once under pressure).
pub const UNPROVEN_IDLE: Duration = Duration::from_secs(10);
/// A proven keep-alive connection is closed after this long idle (a browser opens a new one).
pub const PROVEN_IDLE: Duration = Duration::from_secs(120);

/// How often the timeouts are looked at.
pub(crate) const SWEEP_EVERY: Duration = Duration::from_millis(50);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Accepted, no whole request yet.
    Silent,
    /// A request is being answered.
    Busy,
    /// Between requests on keep-alive.
    Idle,
}

struct Slot {
    peer: IpAddr,
    /// Its socket, to ask how much it sent that is not read yet.
    socket: RawFd,
    phase: Phase,
    /// A request on it carried the token.
    proven: bool,
    /// When it entered its phase.
    since: Instant,
    close: Arc<Notify>,
}

#[derive(Default)]
struct Slots {
    next_id: u64,
    open: HashMap<u64, Slot>,
}

impl Slots {
    fn unproven(&self) -> impl Iterator<Item = (&u64, &Slot)> {
        self.open.iter().filter(|(_, s)| !s.proven)
    }

    fn pressed(&self) -> bool {
        self.unproven().count() > UNPROVEN_TOTAL / 2
    }

    /// The unproven connection to push out (from `peer` only, if given): the longest idle, else
    /// the longest silent with nothing unread, else the longest silent; never a busy one.
    fn victim(&self, peer: Option<IpAddr>) -> Option<u64> {
        let candidates = |phase| self.unproven().filter(move |(_, s)| s.phase == phase && peer.is_none_or(|p| s.peer == p));
        if let Some((id, _)) = candidates(Phase::Idle).min_by_key(|(_, s)| s.since) {
            return Some(*id);
        }
        let mut silent: Vec<(&u64, &Slot)> = candidates(Phase::Silent).collect();
        silent.sort_by_key(|(_, s)| s.since);
        silent.iter().find(|(_, s)| unread_bytes(s.socket) == 0).or(silent.first()).map(|(id, _)| **id)
    }

    /// The peer holding the most unproven connections.
    fn crowding_peer(&self) -> Option<IpAddr> {
        let mut per_peer: HashMap<IpAddr, usize> = HashMap::new();
        for (_, s) in self.unproven() {
            *per_peer.entry(s.peer).or_default() += 1;
        }
        per_peer.into_iter().max_by_key(|&(_, n)| n).map(|(p, _)| p)
    }

    fn close(&mut self, id: u64) {
        if let Some(slot) = self.open.remove(&id) {
            slot.close.notify_one();
        }
    }
}

/// The page's connections and their budgets.
#[derive(Default)]
pub(crate) struct Admission {
    slots: Mutex<Slots>,
}

/// One admitted connection: its slot is given back when this is dropped. Its task closes the
/// connection when [`Ticket::closing`] fires.
pub(crate) struct Ticket {
    admission: Arc<Admission>,
    id: u64,
    close: Arc<Notify>,
}

impl Admission {
    fn with<R>(&self, f: impl FnOnce(&mut Slots) -> R) -> R {
        f(&mut crate::lock(&self.slots))
    }

    /// Admits a new connection from `peer`, pushing out an unproven one where a budget is full;
    /// none when every slot is proven or busy.
    /// `socket` is the connection's, open at least as long as the ticket is held.
    pub fn admit(self: &Arc<Self>, peer: IpAddr, socket: RawFd, now: Instant) -> Option<Ticket> {
        self.with(|slots| {
            let from_peer = slots.unproven().filter(|(_, s)| s.peer == peer).count();
            if from_peer >= UNPROVEN_PER_PEER {
                let victim = slots.victim(Some(peer))?;
                slots.close(victim);
            }
            if slots.unproven().count() >= UNPROVEN_TOTAL {
                let victim = slots.victim(slots.crowding_peer())?;
                slots.close(victim);
            }
            if slots.open.len() >= MAX_CONNECTIONS {
                // Only proven ones beyond the unproven budget: the one idle longest makes room.
                let victim = slots.victim(None).or_else(|| slots.open.iter().filter(|(_, s)| s.phase == Phase::Idle).min_by_key(|(_, s)| s.since).map(|(id, _)| *id))?;
                slots.close(victim);
            }
            let id = slots.next_id;
            slots.next_id += 1;
            let close = Arc::new(Notify::new());
            slots.open.insert(id, Slot { peer, socket, phase: Phase::Silent, proven: false, since: now, close: close.clone() });
            Some(Ticket { admission: self.clone(), id, close })
        })
    }

    /// Closes connections past their time: silent past the header timeout (short under pressure),
    /// idle past theirs (unproven ones at once under pressure).
    pub fn sweep(&self, now: Instant) {
        self.with(|slots| {
            let pressed = slots.pressed();
            let header_timeout = if pressed { PRESSED_HEADER_TIMEOUT } else { HEADER_TIMEOUT };
            let expired: Vec<u64> = slots
                .open
                .iter()
                .filter(|(_, s)| {
                    let age = now.saturating_duration_since(s.since);
                    match (s.phase, s.proven) {
                        (Phase::Busy, _) => false,
                        (Phase::Silent, _) => age >= header_timeout,
                        (Phase::Idle, false) => pressed || age >= UNPROVEN_IDLE,
                        (Phase::Idle, true) => age >= PROVEN_IDLE,
                    }
                })
                .map(|(id, _)| *id)
                .collect();
            for id in expired {
                slots.close(id);
            }
        });
    }

    /// Connections open: (all, unproven).
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        self.with(|s| (s.open.len(), s.unproven().count()))
    }
}

impl Ticket {
    fn set(&self, phase: Phase, proven: bool, now: Instant) {
        self.admission.with(|slots| {
            if let Some(slot) = slots.open.get_mut(&self.id) {
                slot.phase = phase;
                slot.proven |= proven;
                slot.since = now;
            }
        });
    }

    /// A whole request arrived; `proven` when it carries the token.
    pub fn request_started(&self, proven: bool, now: Instant) {
        self.set(Phase::Busy, proven, now);
    }

    /// Its answer is given: idle until the next request.
    pub fn request_answered(&self, now: Instant) {
        self.set(Phase::Idle, false, now);
    }

    /// Fires when the connection is to be closed (pushed out or past its time).
    pub async fn closing(&self) {
        self.close.notified().await;
    }
}

impl Ticket {
    /// Gives the slot back (before the socket closes, so its descriptor is never asked about
    /// once another socket may have it).
    pub fn leave(&self) {
        self.admission.with(|slots| slots.open.remove(&self.id));
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Bytes received on `socket` and not read yet (0 when it cannot be told).
fn unread_bytes(socket: RawFd) -> usize {
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points at `unread`; on a
    // descriptor that is not a socket (or is closed) it fails and writes nothing.
    let r = unsafe { libc::ioctl(socket, libc::FIONREAD, &mut unread as *mut libc::c_int) };
    if r == 0 {
        usize::try_from(unread).unwrap_or(0)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    const NO_SOCKET: RawFd = -1;

    fn peer(n: u8) -> IpAddr {
        IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, n))
    }

    #[test]
    fn a_crowd_of_silent_connections_is_cut_down_and_a_new_one_always_gets_in() {
        let admission = Arc::new(Admission::default());
        let t0 = Instant::now();
        let crowd: Vec<Ticket> = (0..300).filter_map(|i| admission.admit(LOCAL, NO_SOCKET, t0 + Duration::from_micros(i))).collect();
        assert_eq!(crowd.len(), 300, "every new connection is admitted (an older one makes room)");
        assert_eq!(admission.counts(), (UNPROVEN_PER_PEER, UNPROVEN_PER_PEER));
        // The newest is among the kept: the 32 last of the crowd.
        let kept: Vec<u64> = admission.with(|s| s.open.keys().copied().collect());
        assert!(kept.iter().all(|&id| id >= 300 - UNPROVEN_PER_PEER as u64), "{kept:?}");
        let hold = admission.admit(LOCAL, NO_SOCKET, t0 + Duration::from_millis(1)).expect("the Hold's connection");
        hold.request_started(true, t0 + Duration::from_millis(2));
        // The crowd goes on; the proven connection stays, busy or idle.
        let more: Vec<Ticket> = (0..300).filter_map(|_| admission.admit(LOCAL, NO_SOCKET, t0 + Duration::from_millis(3))).collect();
        assert_eq!(more.len(), 300);
        hold.request_answered(t0 + Duration::from_millis(4));
        let _more: Vec<Ticket> = (0..300).filter_map(|_| admission.admit(LOCAL, NO_SOCKET, t0 + Duration::from_millis(5))).collect();
        assert!(admission.with(|s| s.open.contains_key(&hold.id)), "a proven connection is never pushed out by unproven ones");
        drop(crowd);
    }

    #[test]
    fn idle_keep_alive_goes_first_and_the_crowding_peer_pays_for_the_total() {
        let admission = Arc::new(Admission::default());
        let t0 = Instant::now();
        let mut tickets = Vec::new();
        // Three peers fill the total budget: 30, 32 (one of them idle) and 2.
        for i in 0..30 {
            tickets.push(admission.admit(peer(1), NO_SOCKET, t0 + Duration::from_millis(i)).unwrap());
        }
        for i in 0..32 {
            tickets.push(admission.admit(peer(2), NO_SOCKET, t0 + Duration::from_millis(100 + i)).unwrap());
        }
        for i in 0..2 {
            tickets.push(admission.admit(peer(4), NO_SOCKET, t0 + Duration::from_millis(150 + i)).unwrap());
        }
        let idle_id = tickets[40].id;
        tickets[40].request_started(false, t0 + Duration::from_millis(200));
        tickets[40].request_answered(t0 + Duration::from_millis(201));
        assert_eq!(admission.counts().1, UNPROVEN_TOTAL);
        // A third peer's connection: the idle keep-alive of a crowding peer makes room, not the oldest silent.
        let third = admission.admit(peer(3), NO_SOCKET, t0 + Duration::from_millis(300)).unwrap();
        assert!(!admission.with(|s| s.open.contains_key(&idle_id)));
        assert!(admission.with(|s| s.open.contains_key(&tickets[0].id)));
        drop(third);
    }

    #[test]
    fn a_connection_whose_request_is_on_its_way_is_not_the_one_pushed_out() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let admission = Arc::new(Admission::default());
        let t0 = Instant::now();
        let mut clients = Vec::new();
        let mut tickets = Vec::new();
        for i in 0..UNPROVEN_PER_PEER as u64 {
            let mut client = std::net::TcpStream::connect(address).unwrap();
            if i == 0 {
                // The oldest: a Hold whose headers arrived and are not read yet.
                client.write_all(b"POST /hold HTTP/1.1\r\n").unwrap();
            }
            let (served, _) = listener.accept().unwrap();
            tickets.push(admission.admit(LOCAL, served.as_raw_fd(), t0 + Duration::from_millis(i)).unwrap());
            clients.push((client, served));
        }
        // The bytes are in the server's queue before it is asked.
        while unread_bytes(clients[0].1.as_raw_fd()) == 0 {
            std::thread::yield_now();
        }
        let newest = admission.admit(LOCAL, NO_SOCKET, t0 + Duration::from_secs(1)).unwrap();
        let open = |t: &Ticket| admission.with(|s| s.open.contains_key(&t.id));
        assert!(open(&tickets[0]), "the connection with its request waiting is kept");
        assert!(!open(&tickets[1]), "the longest silent with nothing sent is pushed out");
        drop(newest);
    }

    #[test]
    fn timeouts_are_short_under_pressure_and_never_cut_a_busy_request() {
        let admission = Arc::new(Admission::default());
        let t0 = Instant::now();
        let few: Vec<Ticket> = (0..4).map(|_| admission.admit(peer(1), NO_SOCKET, t0).unwrap()).collect();
        admission.sweep(t0 + Duration::from_secs(1));
        assert_eq!(admission.counts().0, 4, "silent for 1 s without pressure: still open");
        admission.sweep(t0 + HEADER_TIMEOUT);
        assert_eq!(admission.counts().0, 0, "silent past the header timeout: closed");
        drop(few);
        let crowd: Vec<Ticket> = (0..40).map(|i| admission.admit(peer(1 + i % 2), NO_SOCKET, t0).unwrap()).collect();
        crowd[0].request_started(false, t0);
        crowd[1].request_started(false, t0);
        crowd[1].request_answered(t0);
        admission.sweep(t0 + PRESSED_HEADER_TIMEOUT);
        assert_eq!(admission.counts(), (1, 1), "under pressure: silent past 250 ms and idle closed, the busy one kept");
    }
}

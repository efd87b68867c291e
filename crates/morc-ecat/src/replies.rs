//! Which cyclic frames got their reply, and when: the loss rule kept apart from the count of
//! late replies.
//!
//! A cycle waits for its frame's reply a little (the master's receive timeout, under the
//! cycle time) and then moves on with last cycle's inputs, as IgH's and TwinCAT's masters
//! do: the next setpoints go out on time. The frame it gave up on is not lost yet: it stays
//! *in flight* until its reply comes (a *late* reply: counted, its data not used, since newer
//! frames are already out) or until the reply timeout has passed since it was sent (then it
//! is *lost*). Frames are decided in the order they were sent, so "in a row" means
//! consecutive frames on the wire. Fixed-size storage: nothing here allocates.

use std::time::{Duration, Instant};

/// Most frames waiting for a late reply at once: the reply timeout may span at most this many
/// cycles (checked where the bus is opened).
pub const MAX_IN_FLIGHT: usize = 64;

/// Late replies are summed over this many buckets of [`BUCKET`] each: "in the last second".
const BUCKETS: usize = 10;
const BUCKET: Duration = Duration::from_millis(100);

#[derive(Clone, Copy, Debug)]
struct InFlight {
    /// The frame's number (one per cycle, in sending order).
    seq: u64,
    /// Its first PDU's index, which the reply carries back.
    pdu_index: u8,
    sent: Instant,
    /// It can get no reply (its send failed): lost as soon as the frames before it are decided.
    doomed: bool,
}

/// Late replies seen in one bucket of time.
#[derive(Clone, Copy, Debug, Default)]
struct LateBucket {
    /// Which bucket of time since the ledger began (older content is stale).
    epoch: u64,
    count: u32,
    shortest: Duration,
    longest: Duration,
}

/// Late replies in the last second: how many, and how long after their frame they came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LateSummary {
    /// Replies that came after their cycle had moved on, within the reply timeout.
    pub count: u32,
    /// The quickest of them, from its frame's sending.
    pub shortest: Duration,
    /// The slowest of them.
    pub longest: Duration,
}

/// The fate of each cyclic frame: replied in time, late, or lost.
#[derive(Debug)]
pub struct ReplyLedger {
    /// Frames given up by their cycle, oldest first (a ring: `start`, `len`).
    in_flight: [Option<InFlight>; MAX_IN_FLIGHT],
    start: usize,
    len: usize,
    next_seq: u64,
    last_lost: Option<u64>,
    lost_in_a_row: u32,
    origin: Instant,
    late: [LateBucket; BUCKETS],
    /// Frames lost since bring-up.
    pub lost: u64,
    /// Late replies since bring-up (within the reply timeout).
    pub late_replies: u64,
    /// Replies that came after their frame was already counted lost, or matched no frame.
    pub replies_after_loss: u64,
}

impl ReplyLedger {
    /// An empty ledger; "the last second" counts from `origin`.
    pub fn new(origin: Instant) -> ReplyLedger {
        ReplyLedger {
            in_flight: [None; MAX_IN_FLIGHT],
            start: 0,
            len: 0,
            next_seq: 0,
            last_lost: None,
            lost_in_a_row: 0,
            origin,
            late: [LateBucket::default(); BUCKETS],
            lost: 0,
            late_replies: 0,
            replies_after_loss: 0,
        }
    }

    /// A number for the frame a cycle is about to send.
    pub fn next_frame(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// The frame's reply came within its cycle.
    pub fn replied(&mut self, seq: u64) {
        self.reply_seen(seq);
    }

    /// Its cycle moved on without the reply: in flight until the reply or the timeout.
    pub fn gave_up(&mut self, seq: u64, pdu_index: u8, sent: Instant) {
        self.push(InFlight { seq, pdu_index, sent, doomed: false });
    }

    /// The frame can get no reply (its send failed, or the segment dropped it): lost once the
    /// frames before it are decided.
    pub fn no_reply_possible(&mut self, seq: u64, now: Instant) {
        self.push(InFlight { seq, pdu_index: 0, sent: now, doomed: true });
    }

    /// A reply that came after its cycle had moved on, at `at`. True if it answered a frame
    /// still in flight (then it counts as late, not lost).
    pub fn late_reply(&mut self, pdu_index: u8, at: Instant) -> bool {
        for i in 0..self.len {
            let slot = (self.start + i) % MAX_IN_FLIGHT;
            let Some(f) = self.in_flight[slot] else { continue };
            if f.doomed || f.pdu_index != pdu_index {
                continue;
            }
            self.in_flight[slot] = None;
            self.late_replies += 1;
            self.note_late(at, at.saturating_duration_since(f.sent));
            self.reply_seen(f.seq);
            self.pop_decided();
            return true;
        }
        self.replies_after_loss += 1;
        false
    }

    /// Decides the frames whose reply has not come within `timeout` of their sending: lost.
    pub fn expire(&mut self, now: Instant, timeout: Duration) {
        while self.len > 0 {
            match self.in_flight[self.start] {
                Some(f) if f.doomed || now.saturating_duration_since(f.sent) >= timeout => {
                    self.in_flight[self.start] = None;
                    self.lose(f.seq);
                    self.pop_decided();
                }
                Some(_) => break,
                None => self.pop_decided(),
            }
        }
    }

    /// Consecutive frames (in sending order) lost, up to the latest one decided; 0 once a
    /// later frame got its reply.
    pub fn lost_in_a_row(&self) -> u32 {
        self.lost_in_a_row
    }

    /// Frames given up by their cycle and still waiting for a reply.
    pub fn in_flight(&self) -> usize {
        (0..self.len).filter(|i| self.in_flight[(self.start + i) % MAX_IN_FLIGHT].is_some()).count()
    }

    /// Forgets the current run of lost frames (after a fault reset: a new run is counted).
    pub fn clear_run(&mut self) {
        self.lost_in_a_row = 0;
    }

    /// Late replies within the second before `now`.
    pub fn late_in_last_second(&self, now: Instant) -> LateSummary {
        let epoch = self.epoch(now);
        let mut s = LateSummary { count: 0, shortest: Duration::MAX, longest: Duration::ZERO };
        for b in self.late.iter().filter(|b| b.count > 0 && b.epoch + BUCKETS as u64 > epoch) {
            s.count += b.count;
            s.shortest = s.shortest.min(b.shortest);
            s.longest = s.longest.max(b.longest);
        }
        if s.count == 0 {
            s.shortest = Duration::ZERO;
        }
        s
    }

    fn epoch(&self, at: Instant) -> u64 {
        (at.saturating_duration_since(self.origin).as_nanos() / BUCKET.as_nanos()) as u64
    }

    fn note_late(&mut self, at: Instant, after: Duration) {
        let epoch = self.epoch(at);
        let b = &mut self.late[(epoch % BUCKETS as u64) as usize];
        if b.epoch != epoch || b.count == 0 {
            *b = LateBucket { epoch, count: 0, shortest: after, longest: after };
        }
        b.count += 1;
        b.shortest = b.shortest.min(after);
        b.longest = b.longest.max(after);
    }

    fn reply_seen(&mut self, seq: u64) {
        if self.last_lost.is_none_or(|l| seq > l) {
            self.lost_in_a_row = 0;
        }
    }

    fn lose(&mut self, seq: u64) {
        self.lost += 1;
        self.lost_in_a_row = match self.last_lost {
            Some(l) if l + 1 == seq => self.lost_in_a_row.saturating_add(1),
            _ => 1,
        };
        self.last_lost = Some(seq);
    }

    fn push(&mut self, f: InFlight) {
        if self.len == MAX_IN_FLIGHT {
            // Full (a timeout over more cycles than the ledger holds): the oldest is lost now.
            if let Some(old) = self.in_flight[self.start].take() {
                self.lose(old.seq);
            }
            self.start = (self.start + 1) % MAX_IN_FLIGHT;
            self.len -= 1;
        }
        self.in_flight[(self.start + self.len) % MAX_IN_FLIGHT] = Some(f);
        self.len += 1;
        // A doomed frame with nothing before it is decided at once.
        if f.doomed && self.len == 1 {
            self.in_flight[self.start] = None;
            self.lose(f.seq);
            self.pop_decided();
        }
    }

    /// Drops decided (emptied) slots from the front.
    fn pop_decided(&mut self) {
        while self.len > 0 && self.in_flight[self.start].is_none() {
            self.start = (self.start + 1) % MAX_IN_FLIGHT;
            self.len -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// A burst of replies 1–3 ms late on a 1 ms cycle with a 5 ms timeout: late, none lost.
    #[test]
    fn late_replies_within_the_timeout_are_late_not_lost() {
        let t0 = Instant::now();
        let mut l = ReplyLedger::new(t0);
        for k in 0..3u32 {
            let seq = l.next_frame();
            l.gave_up(seq, k as u8, t0 + MS * k);
            l.expire(t0 + MS * k + MS * 9 / 10, 5 * MS);
        }
        assert_eq!((l.in_flight(), l.lost), (3, 0));
        // The peer wakes up at 4 ms and answers all three.
        for k in 0..3u8 {
            assert!(l.late_reply(k, t0 + 4 * MS));
        }
        l.expire(t0 + 4 * MS, 5 * MS);
        let late = l.late_in_last_second(t0 + 4 * MS);
        assert_eq!((l.lost, l.lost_in_a_row(), l.late_replies, l.in_flight()), (0, 0, 3, 0));
        assert_eq!((late.count, late.shortest, late.longest), (3, 2 * MS, 4 * MS));
        // A second later they are out of the window.
        assert_eq!(l.late_in_last_second(t0 + 1100 * MS).count, 0);
    }

    /// No reply at all: each frame is lost once the timeout has passed since its sending, in
    /// sending order, and the run counts them.
    #[test]
    fn frames_without_reply_are_lost_after_the_timeout_in_a_row() {
        let t0 = Instant::now();
        let mut l = ReplyLedger::new(t0);
        let mut runs = Vec::new();
        for k in 0..6u32 {
            let seq = l.next_frame();
            l.gave_up(seq, k as u8, t0 + MS * k);
            l.expire(t0 + MS * k + MS * 9 / 10, 2 * MS);
            runs.push(l.lost_in_a_row());
        }
        // Frame 0 is lost at 2.9 ms (cycle 2), frame 1 at cycle 3, …
        assert_eq!(runs, [0, 0, 1, 2, 3, 4]);
        // A reply after the timeout does not bring a lost frame back.
        assert!(!l.late_reply(0, t0 + 6 * MS));
        assert_eq!(l.replies_after_loss, 1);
        // A reply to a later frame ends the run.
        assert!(l.late_reply(5, t0 + 6 * MS));
        assert_eq!(l.lost_in_a_row(), 0);
    }

    /// A frame whose send failed is lost at once when nothing is in flight before it, else
    /// after those (so that "in a row" follows the wire's order).
    #[test]
    fn frames_that_cannot_get_a_reply_are_decided_in_order() {
        let t0 = Instant::now();
        let mut l = ReplyLedger::new(t0);
        let a = l.next_frame();
        l.no_reply_possible(a, t0);
        assert_eq!(l.lost_in_a_row(), 1);
        let b = l.next_frame();
        l.gave_up(b, 7, t0 + MS);
        let c = l.next_frame();
        l.no_reply_possible(c, t0 + 2 * MS);
        assert_eq!((l.lost, l.in_flight()), (1, 2), "c waits for b");
        assert!(l.late_reply(7, t0 + 2 * MS));
        l.expire(t0 + 2 * MS, 2 * MS);
        // b came (late): c's loss starts a new run.
        assert_eq!((l.lost, l.lost_in_a_row(), l.in_flight()), (2, 1, 0));
    }

    /// Replies between losses break the run; a full ledger loses its oldest frame.
    #[test]
    fn a_reply_between_losses_breaks_the_run_and_the_ledger_never_overflows() {
        let t0 = Instant::now();
        let mut l = ReplyLedger::new(t0);
        for k in 0..10u32 {
            let seq = l.next_frame();
            if k % 2 == 0 {
                l.gave_up(seq, k as u8, t0 + MS * k);
            } else {
                l.replied(seq);
            }
            l.expire(t0 + MS * k + MS, MS);
            assert!(l.lost_in_a_row() <= 1);
        }
        let mut l = ReplyLedger::new(t0);
        for k in 0..(MAX_IN_FLIGHT as u32 + 5) {
            let seq = l.next_frame();
            l.gave_up(seq, k as u8, t0);
        }
        assert_eq!((l.in_flight(), l.lost, l.lost_in_a_row()), (MAX_IN_FLIGHT, 5, 5));
    }
}

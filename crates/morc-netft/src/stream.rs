//! The two ends of the hand-over from the receiver thread to the bus rate: [`Stream`] sums the
//! records as they arrive (counting the lost ones), [`Filter`] turns two of its snapshots into
//! the mean of the records between them, an anti-alias boxcar down to the bus rate.

use crate::rdt::Record;

/// Words of a [`Snapshot`] in a [`crate::slot::Slot`].
pub const WORDS: usize = 10;

/// What the receiver has seen so far; sums are cumulative and wrap, so the difference of two
/// snapshots is exact however long the stream runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Records taken.
    pub records: u64,
    /// Sum of each axis' counts over the records taken (wrapping).
    pub sums: [i64; 6],
    /// Records lost: gaps in rdt_sequence.
    pub lost: u64,
    /// The last record's status word.
    pub status: u32,
    /// When the last record arrived (CLOCK_MONOTONIC ns; 0: none yet).
    pub last_ns: u64,
}

impl Snapshot {
    /// As the slot's words.
    pub fn to_words(&self) -> [u64; WORDS] {
        let s = self.sums.map(|x| x as u64);
        [self.records, s[0], s[1], s[2], s[3], s[4], s[5], self.lost, self.status as u64, self.last_ns]
    }
    /// From the slot's words.
    pub fn from_words(w: &[u64; WORDS]) -> Self {
        Snapshot { records: w[0], sums: std::array::from_fn(|i| w[1 + i] as i64), lost: w[7], status: w[8] as u32, last_ns: w[9] }
    }
}

/// The receiver's running sums.
#[derive(Clone, Debug, Default)]
pub struct Stream {
    /// What has been seen so far.
    pub now: Snapshot,
    last_sequence: Option<u32>,
}

impl Stream {
    /// Takes record `r`, arrived at `at_ns`. A repeated sequence number is dropped; one that
    /// goes back is a restarted stream (the sensor was restarted), counted from anew.
    pub fn add(&mut self, r: &Record, at_ns: u64) {
        if let Some(prev) = self.last_sequence {
            let gap = r.rdt_sequence.wrapping_sub(prev).wrapping_sub(1);
            if gap == u32::MAX {
                return;
            }
            if gap < 1 << 31 {
                self.now.lost += gap as u64;
            }
        }
        self.last_sequence = Some(r.rdt_sequence);
        self.now.records += 1;
        for (s, c) in self.now.sums.iter_mut().zip(r.counts) {
            *s = s.wrapping_add(c as i64);
        }
        self.now.status = r.status;
        self.now.last_ns = at_ns;
    }
}

/// The bus rate's side: the mean of the records since the previous snapshot, in N and N·m.
#[derive(Clone, Debug)]
pub struct Filter {
    prev: Snapshot,
    counts_per_force: f64,
    counts_per_torque: f64,
}

impl Filter {
    /// A filter starting after `start`, scaling counts by the sensor's calibration.
    pub fn new(start: Snapshot, counts_per_force: f64, counts_per_torque: f64) -> Self {
        Filter { prev: start, counts_per_force, counts_per_torque }
    }

    /// Writes into `wrench` the mean of the records between the previous snapshot and `now`, and
    /// returns how many there were; with none, `wrench` is left as it was.
    pub fn update(&mut self, now: &Snapshot, wrench: &mut [f64]) -> u64 {
        let n = now.records.wrapping_sub(self.prev.records);
        if n > 0 {
            for (i, w) in wrench.iter_mut().enumerate().take(6) {
                let scale = if i < 3 { self.counts_per_force } else { self.counts_per_torque };
                *w = now.sums[i].wrapping_sub(self.prev.sums[i]) as f64 / n as f64 / scale;
            }
        }
        self.prev = *now;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u32, counts: [i32; 6]) -> Record {
        Record { rdt_sequence: seq, ft_sequence: seq, status: 0, counts }
    }

    #[test]
    fn the_filter_gives_the_mean_since_the_last_tick_and_counts_gaps() {
        let mut s = Stream::default();
        let mut f = Filter::new(s.now, 1000.0, 10_000.0);
        let mut w = [0.0; 6];
        s.add(&record(1, [1000, 0, 0, 10_000, 0, 0]), 5);
        s.add(&record(2, [3000, 0, 0, 30_000, 0, 0]), 6);
        assert_eq!(f.update(&s.now, &mut w), 2);
        assert_eq!(w, [2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        // Nothing new: the value holds.
        assert_eq!(f.update(&s.now, &mut w), 0);
        assert_eq!(w[0], 2.0);
        // 3, 4, 5 lost; 7 lost; a repeated 8 dropped.
        for seq in [6, 8, 8] {
            s.add(&record(seq, [-500, 0, 0, 0, 0, 0]), 7);
        }
        assert_eq!(s.now.lost, 4);
        assert_eq!(f.update(&s.now, &mut w), 2);
        assert_eq!(w[0], -0.5);
        assert_eq!(s.now.last_ns, 7);
        // A restarted stream is not a gap of four billion.
        s.add(&record(1, [0; 6]), 8);
        assert_eq!(s.now.lost, 4);
        // The sequence wraps without loss.
        s.add(&record(u32::MAX, [0; 6]), 9);
        s.add(&record(0, [0; 6]), 9);
        assert_eq!(s.now.lost, 4);
    }

    #[test]
    fn sums_stay_exact_across_wrapping() {
        let mut s = Stream::default();
        s.now.sums = [i64::MAX - 1; 6];
        let mut f = Filter::new(s.now, 1.0, 1.0);
        s.add(&record(1, [i32::MAX; 6]), 1);
        s.add(&record(2, [i32::MAX; 6]), 1);
        let mut w = [0.0; 6];
        f.update(&s.now, &mut w);
        assert_eq!(w, [i32::MAX as f64; 6]);
        assert_eq!(Snapshot::from_words(&s.now.to_words()), s.now);
    }
}

//! What a simulated world feeds into the segment's sensors each cycle: a wrench for the
//! force/torque sensor and bits for the digital input terminal (the simulated robot's wrist
//! sensor and its hand-guiding handle). Written by the drives' plant in the same segment cycle,
//! before the sensors send: plain atomics, no lock, no allocation.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The values fed; a sensor given a feed reads it instead of its own load or input bits.
#[derive(Debug, Default)]
pub struct SensorFeed {
    wrench: [AtomicU64; 6],
    bits: AtomicU32,
}

impl SensorFeed {
    /// Sets the wrench: Fx Fy Fz (N), Tx Ty Tz (N·m).
    pub fn set_wrench(&self, w: &[f64]) {
        for (slot, x) in self.wrench.iter().zip(w) {
            slot.store(x.to_bits(), Ordering::Relaxed);
        }
    }
    /// The wrench fed last.
    pub fn wrench(&self) -> [f64; 6] {
        std::array::from_fn(|i| f64::from_bits(self.wrench[i].load(Ordering::Relaxed)))
    }
    /// Sets the input bits, channel 1 in bit 0.
    pub fn set_bits(&self, bits: u32) {
        self.bits.store(bits, Ordering::Relaxed);
    }
    /// The input bits fed last.
    pub fn bits(&self) -> u32 {
        self.bits.load(Ordering::Relaxed)
    }
}

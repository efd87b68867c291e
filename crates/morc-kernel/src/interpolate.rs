//! Linear interpolation of an input fed by a slower component.
//!
//! A producer of period P = k·T publishes a new sample every k ticks
//! (logical execution time: the sample computed from what it read at tick m
//! is seen from tick m + k on). Held, the consumer sees a staircase. With
//! interpolation it sees the straight line from the previous sample to the
//! newest one, drawn over the producer's next period: at tick n, between
//! sample arrivals at a = ⌊n/k⌋·k and a + k, it reads
//! `y_prev + (n − a)/k · (y_new − y_prev)`. The line reaches y_new exactly
//! when the next sample arrives, so the ramp is continuous and never
//! overshoots — at the price of one more producer period of delay, the usual
//! first-order-hold trade (extrapolating from the last two samples would
//! avoid the delay but overshoots at every change of slope).

use super::value::Value;

/// The interpolation state of one input, allocated once.
pub(crate) struct Ramp {
    /// The external (imported) value this input reads.
    pub external: usize,
    /// The producer's period in base ticks.
    pub every: u64,
    from: Value,
    to: Value,
    pub value: Value,
    /// The producer period (tick / every) the current line was drawn for.
    epoch: Option<u64>,
}

impl Ramp {
    pub fn new(external: usize, every: u64, initial: &Value) -> Ramp {
        Ramp { external, every: every.max(1), from: initial.clone(), to: initial.clone(), value: initial.clone(), epoch: None }
    }

    /// Brings `value` to base tick `tick`, `newest` being the input as published now.
    #[inline]
    pub fn update(&mut self, tick: u64, newest: &Value) {
        let epoch = tick / self.every;
        if self.epoch != Some(epoch) {
            if self.epoch.is_none() {
                self.to.copy_from(newest);
            }
            self.from.copy_from(&self.to);
            self.to.copy_from(newest);
            self.epoch = Some(epoch);
        }
        let w = (tick - epoch * self.every) as f64 / self.every as f64;
        match (&mut self.value, &self.from, &self.to) {
            (Value::Real(y), Value::Real(a), Value::Real(b)) => *y = a + w * (b - a),
            (Value::Vector(y), Value::Vector(a), Value::Vector(b)) => {
                for ((y, a), b) in y.iter_mut().zip(a).zip(b) {
                    *y = a + w * (b - a);
                }
            }
            (y, _, b) => y.copy_from(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_the_line_from_the_previous_to_the_newest_sample_over_one_period() {
        let mut r = Ramp::new(0, 4, &Value::Real(0.0));
        let mut seen = Vec::new();
        // The producer's samples as published: 0 until tick 4, then 4, then 8 (a ramp of slope 1 per tick).
        for tick in 0..12u64 {
            let published = Value::Real((tick / 4 * 4) as f64);
            r.update(tick, &published);
            seen.push(r.value.real());
        }
        // One producer period late, and linear in between.
        assert_eq!(seen, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    }
}

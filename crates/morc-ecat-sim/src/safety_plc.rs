//! A simulated safety PLC (the layout of [`morc_ecat_wire::profiles::safety_plc`]): e-stop, door
//! and enabling switch set from outside (a test, Lua), a heartbeat watchdog on morc's toggle
//! bit (on virtual time: over a wire the segment advances by the time between frames), and the re-arm rule of real safety circuits: once tripped, motion stays inhibited
//! after the cause is gone until the controller acknowledges.
//!
//! It powers up armed (permitted, nothing tripped) so that a simulated cell starts ready.

use super::process_data::FixedProcessData;
use morc_ecat_wire::profiles::safety_plc::{control, reason, status};

/// Heartbeat watchdog default: 10 PLC cycles of 1 ms without a toggle trip it.
pub const DEFAULT_WATCHDOG_NS: u64 = 10_000_000;

/// A simulated safety PLC (see the module doc): e-stop, door, enabling switch, heartbeat watchdog and re-arm on acknowledge.
#[derive(Debug, Clone)]
pub struct SimSafetyPlc {
    estop_pressed: bool,
    door_closed: bool,
    enabling_switch: bool,
    /// Time without a heartbeat toggle that trips it. Counted in virtual time, from the first
    /// toggle on: bring-up (no cycles yet) does not trip it.
    pub watchdog_ns: u64,
    last_heartbeat: Option<bool>,
    /// The heartbeat toggled at least once: the watchdog runs.
    watching: bool,
    ns_without_toggle: u64,
    last_acknowledge: bool,
    acknowledged: bool,
    /// Tripped and not acknowledged yet.
    tripped: bool,
    reason: u16,
    trips: u32,
    /// Where the enabling switch comes from each cycle (bit 0), when a simulated world feeds it.
    feed: Option<std::sync::Arc<crate::SensorFeed>>,
}

impl Default for SimSafetyPlc {
    fn default() -> Self {
        Self {
            estop_pressed: false,
            door_closed: true,
            enabling_switch: false,
            feed: None,
            watchdog_ns: DEFAULT_WATCHDOG_NS,
            last_heartbeat: None,
            watching: false,
            ns_without_toggle: 0,
            last_acknowledge: false,
            acknowledged: false,
            tripped: false,
            reason: reason::NONE,
            trips: 0,
        }
    }
}

impl SimSafetyPlc {
    /// Presses or releases the e-stop.
    pub fn set_estop(&mut self, pressed: bool) {
        self.estop_pressed = pressed;
        self.evaluate();
    }
    /// Closes or opens the cell door.
    pub fn set_door_closed(&mut self, closed: bool) {
        self.door_closed = closed;
        self.evaluate();
    }
    /// A PLC whose enabling switch is `feed`'s bit 0, read every cycle (the simulated robot's
    /// hand-guiding handle).
    pub fn fed(feed: std::sync::Arc<crate::SensorFeed>) -> SimSafetyPlc {
        SimSafetyPlc { feed: Some(feed), ..SimSafetyPlc::default() }
    }
    /// Holds or releases the enabling switch (motion with the door open).
    pub fn set_enabling_switch(&mut self, held: bool) {
        self.enabling_switch = held;
        self.evaluate();
    }
    /// Whether the PLC permits motion: nothing tripped, or acknowledged since.
    pub fn motion_permitted(&self) -> bool {
        !self.tripped
    }
    /// Why motion is inhibited, a code of [`morc_ecat_wire::profiles::safety_plc::reason`].
    pub fn reason(&self) -> u16 {
        self.reason
    }
    /// Times it tripped since power-up.
    pub fn trips(&self) -> u32 {
        self.trips
    }

    /// The cause inhibiting motion right now, if any.
    fn cause(&self) -> Option<u16> {
        if self.estop_pressed {
            Some(reason::ESTOP)
        } else if !self.door_closed && !self.enabling_switch {
            Some(reason::DOOR_OPEN)
        } else if self.watching && self.ns_without_toggle > self.watchdog_ns {
            Some(reason::HEARTBEAT_LOST)
        } else {
            None
        }
    }

    fn evaluate(&mut self) {
        match self.cause() {
            Some(cause) => {
                if !self.tripped {
                    self.trips += 1;
                }
                self.tripped = true;
                self.reason = cause;
            }
            None if self.tripped && self.acknowledged => {
                self.tripped = false;
                self.reason = reason::NONE;
            }
            None if self.tripped => self.reason = reason::ACKNOWLEDGE_NEEDED,
            None => self.reason = reason::NONE,
        }
        // An acknowledge counts once, and only with the cause gone.
        self.acknowledged = false;
    }
}

impl FixedProcessData for SimSafetyPlc {
    fn receive(&mut self, outputs: &[u8]) {
        let word = u16::from_le_bytes([outputs.first().copied().unwrap_or(0), outputs.get(1).copied().unwrap_or(0)]);
        let heartbeat = word & control::HEARTBEAT != 0;
        if self.last_heartbeat.is_some_and(|last| last != heartbeat) {
            self.ns_without_toggle = 0;
            self.watching = true;
        }
        self.last_heartbeat = Some(heartbeat);
        let acknowledge = word & control::ACKNOWLEDGE != 0;
        if acknowledge && !self.last_acknowledge {
            self.acknowledged = true;
        }
        self.last_acknowledge = acknowledge;
    }

    fn outputs_invalid(&mut self) {
        // The controller stopped exchanging: as good as a lost heartbeat.
        if self.watching {
            self.ns_without_toggle = self.watchdog_ns + 1;
            self.evaluate();
        }
    }

    fn step(&mut self, dt_ns: u64) {
        if let Some(feed) = &self.feed {
            self.enabling_switch = feed.bits() & 1 != 0;
        }
        if self.watching {
            self.ns_without_toggle = self.ns_without_toggle.saturating_add(dt_ns);
        }
        self.evaluate();
    }

    fn send(&self, inputs: &mut [u8]) {
        let mut word = 0u16;
        for (on, bit) in
            [(self.estop_pressed, status::ESTOP_PRESSED), (self.door_closed, status::DOOR_CLOSED), (self.enabling_switch, status::ENABLING_SWITCH), (!self.tripped, status::MOTION_PERMITTED)]
        {
            if on {
                word |= bit;
            }
        }
        if inputs.len() >= 4 {
            inputs[..2].copy_from_slice(&word.to_le_bytes());
            inputs[2..4].copy_from_slice(&self.reason.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(plc: &mut SimSafetyPlc, control: u16) {
        plc.receive(&control.to_le_bytes());
        plc.step(1_000_000);
    }

    #[test]
    fn estop_trips_and_needs_acknowledge_after_release() {
        let mut plc = SimSafetyPlc::default();
        let mut hb = 0;
        let mut run = |plc: &mut SimSafetyPlc, ack: bool| {
            hb ^= control::HEARTBEAT;
            cycle(plc, hb | if ack { control::ACKNOWLEDGE } else { 0 });
        };
        run(&mut plc, false);
        assert!(plc.motion_permitted());
        plc.set_estop(true);
        assert_eq!((plc.motion_permitted(), plc.reason()), (false, reason::ESTOP));
        // Acknowledge while pressed: nothing.
        run(&mut plc, true);
        run(&mut plc, false);
        assert_eq!(plc.reason(), reason::ESTOP);
        plc.set_estop(false);
        run(&mut plc, false);
        assert_eq!((plc.motion_permitted(), plc.reason()), (false, reason::ACKNOWLEDGE_NEEDED));
        run(&mut plc, true);
        assert!(plc.motion_permitted());
        // Door open: fine while the enabling switch is held.
        plc.set_enabling_switch(true);
        plc.set_door_closed(false);
        assert!(plc.motion_permitted());
        plc.set_enabling_switch(false);
        assert_eq!(plc.reason(), reason::DOOR_OPEN);
        assert_eq!(plc.trips(), 2);
    }

    #[test]
    fn heartbeat_watchdog() {
        let mut plc = SimSafetyPlc { watchdog_ns: 3_000_000, ..Default::default() };
        cycle(&mut plc, 0);
        for _ in 0..5 {
            cycle(&mut plc, control::HEARTBEAT);
        }
        assert_eq!(plc.reason(), reason::HEARTBEAT_LOST);
        cycle(&mut plc, 0);
        assert_eq!(plc.reason(), reason::ACKNOWLEDGE_NEEDED);
        cycle(&mut plc, control::HEARTBEAT | control::ACKNOWLEDGE);
        assert!(plc.motion_permitted());
    }
}

//! A simulated Net F/T: a UDP server on 127.0.0.1 that answers RDT requests like the sensor and
//! streams records at a given rate of a load set through a lock-free handle, with optional noise.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use morc_kernel::{monotonic_ns, sleep_until};

use crate::rdt::{Command, Record, Request};
use crate::slot::Slot;

/// How a [`SimNetFt`] streams.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimConfig {
    /// Records a second (Hz).
    pub rate: f64,
    /// Standard deviation of the noise on each axis (N for forces, N·m for torques); 0: none.
    pub noise: f64,
    /// Counts per newton in the records.
    pub counts_per_force: f64,
    /// Counts per newton-metre in the records.
    pub counts_per_torque: f64,
    /// Leaves out every n-th record (its sequence number is skipped), as a lossy network; 0: none.
    pub drop_every: u32,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig { rate: 7000.0, noise: 0.0, counts_per_force: 1e6, counts_per_torque: 1e6, drop_every: 0 }
    }
}

/// What the server thread and the handles share.
#[derive(Default)]
struct Shared {
    load: Slot<6>,
    status: AtomicU32,
    stop: AtomicBool,
    sent: AtomicU64,
}

/// Sets what a [`SimNetFt`] measures, from any thread; cheap enough for every real-time tick.
#[derive(Clone)]
pub struct SimLoad(Arc<Shared>);

impl SimLoad {
    /// The wrench the sensor measures from now on, `[fx, fy, fz, tx, ty, tz]` (N, N·m). One writer
    /// at a time (the thread that simulates the contact); allocates nothing, never blocks.
    pub fn set(&self, wrench: [f64; 6]) {
        self.0.load.write(&wrench.map(f64::to_bits));
    }
    /// The status word the next records carry (0: all well; [`crate::rdt::STATUS_ERROR`]: a fault).
    pub fn set_status(&self, status: u32) {
        self.0.status.store(status, Ordering::Relaxed);
    }
}

/// A simulated Net F/T on 127.0.0.1; stops when dropped.
pub struct SimNetFt {
    address: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl SimNetFt {
    /// Starts a server on a free port of 127.0.0.1.
    pub fn start(config: SimConfig) -> Result<SimNetFt, String> {
        if !(config.rate.is_finite() && config.rate > 0.0 && config.rate <= 100_000.0) {
            return Err(format!("simulated Net F/T: rate = {} Hz: give a rate from 1 to 100000 Hz (the sensor's is up to 7000)", config.rate));
        }
        if !(config.noise.is_finite() && config.noise >= 0.0) {
            return Err(format!("simulated Net F/T: noise = {}: give a standard deviation of at least 0 (N, N·m)", config.noise));
        }
        let socket = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("simulated Net F/T: cannot bind a UDP port on 127.0.0.1: {e}"))?;
        let address = socket.local_addr().map_err(|e| e.to_string())?;
        socket.set_nonblocking(true).map_err(|e| e.to_string())?;
        let shared = Arc::new(Shared::default());
        shared.load.write(&[0; 6]);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("sim-netft".into())
            .spawn(move || serve(socket, config, s))
            .map_err(|e| format!("simulated Net F/T: cannot start its thread: {e}"))?;
        Ok(SimNetFt { address, shared, thread: Some(thread) })
    }

    /// Where it listens (give it to the `netft` component as `address`).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// A handle that sets the measured load.
    pub fn load(&self) -> SimLoad {
        SimLoad(self.shared.clone())
    }

    /// Records sent so far.
    pub fn sent(&self) -> u64 {
        self.shared.sent.load(Ordering::Relaxed)
    }

    /// Stops streaming and answering: the sensor falls silent.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for SimNetFt {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Uniform noise of a given standard deviation (xorshift64*): cheap and reproducible.
struct Noise(u64);
impl Noise {
    fn next(&mut self, std: f64) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let u = (self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64;
        // Uniform on [−a, a] has standard deviation a/√3.
        (2.0 * u - 1.0) * std * 3f64.sqrt()
    }
}

fn serve(socket: UdpSocket, config: SimConfig, shared: Arc<Shared>) {
    let period_ns = (1e9 / config.rate) as u64;
    let mut client: Option<SocketAddr> = None;
    let mut remaining = 0u32; // records left to send; 0 with a client: until stopped
    let mut next = monotonic_ns();
    let mut sequence = 0u32;
    let mut bias = [0.0; 6];
    let mut load = [0.0; 6];
    let mut noise = Noise(0x9E3779B97F4A7C15);
    let mut buf = [0u8; 64];
    while !shared.stop.load(Ordering::Relaxed) {
        while let Ok((n, from)) = socket.recv_from(&mut buf) {
            match Request::decode(&buf[..n]).map(|r| (r.command, r.count)) {
                Ok((Command::Start, count)) => {
                    client = Some(from);
                    remaining = count;
                    next = monotonic_ns();
                }
                Ok((Command::Stop, _)) => client = None,
                Ok((Command::Bias, _)) => bias = load,
                _ => {} // the sensor ignores what it does not understand
            }
        }
        if let Some(w) = shared.load.read() {
            load = w.map(f64::from_bits);
        }
        let Some(to) = client else {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        let now = monotonic_ns();
        // Late by more than 20 ms (the machine was busy): go on from now, not in a burst.
        if now > next + 20_000_000 {
            next = now;
        }
        while next <= now && client.is_some() {
            next += period_ns;
            sequence = sequence.wrapping_add(1);
            if config.drop_every > 0 && sequence.is_multiple_of(config.drop_every) {
                continue;
            }
            let counts = std::array::from_fn(|i| {
                let scale = if i < 3 { config.counts_per_force } else { config.counts_per_torque };
                ((load[i] - bias[i] + noise.next(config.noise)) * scale).round().clamp(i32::MIN as f64, i32::MAX as f64) as i32
            });
            let record = Record { rdt_sequence: sequence, ft_sequence: sequence, status: shared.status.load(Ordering::Relaxed), counts };
            if socket.send_to(&record.encode(), to).is_err() {
                client = None;
                break;
            }
            shared.sent.fetch_add(1, Ordering::Relaxed);
            if remaining > 0 {
                remaining -= 1;
                if remaining == 0 {
                    client = None;
                }
            }
        }
        sleep_until(next.min(monotonic_ns() + 1_000_000));
    }
}

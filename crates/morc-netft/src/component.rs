//! The `netft` component: a receiver thread (not real-time) asks a Net F/T for its RDT stream
//! and sums the records; each step takes the mean of those received since the last step from a
//! [`Slot`], without blocking or allocating.

use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use morc_kernel::{monotonic_ns, AssemblyResults, Component, ComponentInfo, InitContext, ParamInfo, PortInfo, Step, StepContext, Value, ValueType};

use crate::rdt::{self, Command, Record, Request};
use crate::slot::Slot;
use crate::stream::{Filter, Snapshot, Stream, WORDS};

/// The kind's name.
pub const KIND: &str = "netft";
/// The kind's one line of documentation.
pub const DOC: &str = "ATI Net F/T force/torque sensor over UDP (RDT): the mean of the records received since the last step (N, N·m), lost and silent counted";

/// How often the receiver asks again for the stream while none comes (a restarted sensor forgets it).
const RESTART_NS: u64 = 500_000_000;

/// Output ports, in order.
const WRENCH: usize = 0;
const SAMPLES: usize = 1;
const FRESH: usize = 2;
const AGE: usize = 3;
const LOST: usize = 4;
const RECEIVED: usize = 5;

/// What the receiver thread and the component share.
#[derive(Default)]
struct Shared {
    slot: Slot<WORDS>,
    stop: AtomicBool,
    /// The receiver's last socket error, for the silent sensor's message.
    error: Mutex<Option<String>>,
}

/// The receiver thread's loop: ask for the stream, sum records into the slot until told to stop.
fn receive(socket: UdpSocket, shared: Arc<Shared>) {
    let start = Request { command: Command::Start, count: 0 }.encode();
    let _ = socket.send(&start);
    let mut asked = monotonic_ns();
    let mut stream = Stream::default();
    let mut buf = [0u8; 64];
    while !shared.stop.load(Ordering::Relaxed) {
        match socket.recv(&mut buf) {
            Ok(n) => {
                if let Some(r) = Record::decode(&buf[..n]) {
                    stream.add(&r, monotonic_ns());
                    shared.slot.write(&stream.now.to_words());
                }
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => {
                // Refused: nothing listens at the address (yet); wait rather than spin.
                *shared.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let now = monotonic_ns();
        if now.saturating_sub(stream.now.last_ns.max(asked)) > RESTART_NS {
            let _ = socket.send(&start);
            asked = now;
        }
    }
    let _ = socket.send(&Request { command: Command::Stop, count: 0 }.encode());
}

/// The `netft` component.
pub struct NetFt {
    info: ComponentInfo,
    address: Option<SocketAddr>,
    timeout_ns: u64,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    filter: Filter,
    latest: Snapshot,
    age: i64,
}

impl Default for NetFt {
    fn default() -> Self {
        Self::new()
    }
}

impl NetFt {
    /// A component with the default parameters (no address yet).
    pub fn new() -> Self {
        let info = ComponentInfo::new(KIND, DOC)
            .param(ParamInfo::new("address", Value::String(String::new())).doc("the sensor's IP address, with :port when not 49152 (\"192.168.1.1\")"))
            .param(
                ParamInfo::new("counts_per_force", Value::Real(1e6))
                    .unit("1/N")
                    .doc("counts per newton, from the sensor's calibration (its web page: Counts per Force)"),
            )
            .param(
                ParamInfo::new("counts_per_torque", Value::Real(1e6))
                    .unit("1/(N·m)")
                    .doc("counts per newton-metre, from the sensor's calibration (Counts per Torque)"),
            )
            .param(
                ParamInfo::new("timeout", Value::Real(0.1))
                    .unit("s")
                    .doc("wall time without a record after which the sensor counts as silent and the component faults"),
            )
            .output(PortInfo::wrench("wrench").doc("Fx Fy Fz Tx Ty Tz: the mean of the records received since the last step (held when none came)"))
            .output(PortInfo::new("samples", ValueType::Integer).doc("records received since the last step"))
            .output(PortInfo::new("fresh", ValueType::Boolean).doc("whether a record came since the last step"))
            .output(PortInfo::new("age", ValueType::Integer).doc("steps since the last step that had a record (0: fresh)"))
            .output(PortInfo::new("lost", ValueType::Integer).doc("records lost so far (gaps in the RDT sequence)"))
            .output(PortInfo::new("received", ValueType::Integer).doc("records received so far"));
        NetFt {
            info,
            address: None,
            timeout_ns: 0,
            shared: Arc::default(),
            thread: None,
            filter: Filter::new(Snapshot::default(), 1e6, 1e6),
            latest: Snapshot::default(),
            age: 0,
        }
    }

    fn address_text(&self) -> String {
        self.address.map_or_else(|| self.info.param_value("address").map_or(String::new(), |v| v.str().to_string()), |a| a.to_string())
    }

    fn stop_receiver(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    fn silent(&self, waited: f64) -> String {
        let address = self.address_text();
        let error = self.shared.error.try_lock().ok().and_then(|e| e.clone()).map_or(String::new(), |e| format!(" (the socket says: {e})"));
        format!(
            "Net F/T at {address} sent no record for {waited:.3} s{error}: check that the sensor is powered and cabled, that {address} is its address \
             (its web page answers there), and that nothing else took its stream; raise `timeout` if the network is slow"
        )
    }
}

/// `host[:port]` as a socket address, port 49152 when not given.
fn parse_address(text: &str) -> Result<SocketAddr, String> {
    let hint = "give the sensor's IP address, e.g. address = \"192.168.1.1\" (port 49152) or \"192.168.1.1:49152\"";
    if text.trim().is_empty() {
        return Err(format!("netft needs the sensor's address: {hint}"));
    }
    let with_port = if text.parse::<SocketAddr>().is_ok() || (text.contains(':') && !text.contains("::") && text.rsplit(':').next().is_some_and(|p| p.parse::<u16>().is_ok())) {
        text.to_string()
    } else if text.contains(':') && !text.starts_with('[') {
        format!("[{text}]:{}", rdt::PORT)
    } else {
        format!("{text}:{}", rdt::PORT)
    };
    match with_port.to_socket_addrs() {
        Ok(mut a) => a.next().ok_or_else(|| format!("address '{text}' resolves to nothing: {hint}")),
        Err(e) => Err(format!("address '{text}': {e}: {hint}")),
    }
}

impl Component for NetFt {
    morc_kernel::component_info!(info);

    fn configure(&mut self) -> Result<(), String> {
        self.address = Some(parse_address(self.info.param_value("address").map_or("", |v| v.str()))?);
        for p in ["counts_per_force", "counts_per_torque", "timeout"] {
            let x = self.info.real(p);
            if !(x.is_finite() && x > 0.0) {
                return Err(format!("netft parameter {p} = {x}: must be a positive number"));
            }
        }
        self.timeout_ns = (self.info.real("timeout") * 1e9) as u64;
        Ok(())
    }

    fn initialize(&mut self, _: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        let address = self.address.ok_or("netft: not configured")?;
        self.stop_receiver();
        self.shared = Arc::default();
        let bind: SocketAddr = if address.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { (std::net::Ipv6Addr::UNSPECIFIED, 0).into() };
        let socket = UdpSocket::bind(bind).and_then(|s| s.connect(address).map(|_| s)).map_err(|e| format!("Net F/T at {address}: cannot open a UDP socket to it: {e}"))?;
        socket.set_read_timeout(Some(Duration::from_millis(20))).map_err(|e| format!("Net F/T at {address}: {e}"))?;
        let shared = self.shared.clone();
        self.thread = Some(
            std::thread::Builder::new()
                .name("netft".into())
                .spawn(move || receive(socket, shared))
                .map_err(|e| format!("Net F/T at {address}: cannot start its receiver thread: {e}"))?,
        );
        // Waiting here, off the real-time path, for the first record: the run starts with a
        // measured wrench, and a wrong address fails before the first tick.
        let start = monotonic_ns();
        let first = loop {
            if let Some(s) = self.shared.slot.read().map(|w| Snapshot::from_words(&w)).filter(|s| s.records > 0) {
                break s;
            }
            if monotonic_ns() - start > self.timeout_ns {
                let message = self.silent(self.timeout_ns as f64 * 1e-9);
                self.stop_receiver();
                return Err(message);
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        let mut filter = Filter::new(Snapshot::default(), self.info.real("counts_per_force"), self.info.real("counts_per_torque"));
        filter.update(&first, outputs[WRENCH].as_mut_slice());
        self.filter = filter;
        self.latest = first;
        self.age = 0;
        outputs[SAMPLES] = Value::Integer(first.records as i64);
        outputs[FRESH] = Value::Boolean(true);
        outputs[AGE] = Value::Integer(0);
        outputs[LOST] = Value::Integer(first.lost as i64);
        outputs[RECEIVED] = Value::Integer(first.records as i64);
        Ok(())
    }

    fn step(&mut self, _: &StepContext, _: &[Value], outputs: &mut [Value]) -> Step {
        // A read that met the receiver mid-write each try counts as no news this step.
        if let Some(w) = self.shared.slot.read() {
            self.latest = Snapshot::from_words(&w);
        }
        let n = self.filter.update(&self.latest, outputs[WRENCH].as_mut_slice());
        self.age = if n > 0 { 0 } else { self.age + 1 };
        outputs[SAMPLES] = Value::Integer(n as i64);
        outputs[FRESH] = Value::Boolean(n > 0);
        outputs[AGE] = Value::Integer(self.age);
        outputs[LOST] = Value::Integer(self.latest.lost as i64);
        outputs[RECEIVED] = Value::Integer(self.latest.records as i64);
        if self.latest.status & rdt::STATUS_ERROR != 0 {
            return Step::Fault(format!(
                "Net F/T at {} reports an error (status word 0x{:08x}): open its web page for the diagnostics (saturated gauges, supply voltage, a broken cable to the transducer)",
                self.address_text(),
                self.latest.status
            ));
        }
        let silence = monotonic_ns().saturating_sub(self.latest.last_ns);
        if silence > self.timeout_ns {
            return Step::Fault(self.silent(silence as f64 * 1e-9));
        }
        Step::Continue
    }

    fn terminate(&mut self, results: &mut AssemblyResults) {
        self.stop_receiver();
        results.set("received", Value::Integer(self.latest.records as i64));
        results.set("lost", Value::Integer(self.latest.lost as i64));
    }
}

impl Drop for NetFt {
    fn drop(&mut self) {
        self.stop_receiver();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_take_the_rdt_port_unless_given() {
        assert_eq!(parse_address("127.0.0.1").unwrap(), "127.0.0.1:49152".parse().unwrap());
        assert_eq!(parse_address("127.0.0.1:5000").unwrap(), "127.0.0.1:5000".parse().unwrap());
        assert_eq!(parse_address("::1").unwrap(), "[::1]:49152".parse().unwrap());
        assert!(parse_address("").unwrap_err().contains("needs the sensor's address"));
        assert!(parse_address("not an address!").unwrap_err().contains("e.g. address = \"192.168.1.1\""));
    }
}

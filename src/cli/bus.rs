//! `morc bus …`: the EtherCAT bus from the command line.
//!
//! - `scan [--sim | --iface IF]`: brings the segment up and lists each device the way IgH's
//!   `ethercat slaves` does (position, state, name, identity), with its process-data sizes,
//!   distributed-clock support and the class morc drives it with.
//! - `serve --iface IF`: serves the simulated segment on a network interface (raw EtherCAT
//!   frames), for other masters (SOEM, TwinCAT, ethercrab) to drive.

use clap::Subcommand;

use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::master::{state_name, Link, MasterConfig};
use morc_ecat::virtual_bus::{shared_sim_segment, SimSegmentConfig};

use morc_kernel::EngineConfig;

#[derive(Subcommand, Debug)]
pub(crate) enum BusCommand {
    /// List the devices on the bus (brings them to OP).
    Scan {
        /// Scan the simulated segment instead of hardware.
        #[arg(long, conflicts_with = "iface")]
        sim: bool,
        /// Network interface the EtherCAT line is on (needs root or CAP_NET_RAW).
        #[arg(long)]
        iface: Option<String>,
        /// Drives in the simulated cell.
        #[arg(long, default_value_t = morc_ecat::virtual_bus::DEFAULT_DRIVES)]
        drives: usize,
    },
    /// Serve the simulated segment on a network interface until interrupted.
    Serve {
        #[arg(long)]
        iface: String,
        /// Drives in the simulated cell.
        #[arg(long, default_value_t = morc_ecat::virtual_bus::DEFAULT_DRIVES)]
        drives: usize,
    },
}

pub(crate) use morc_ecat::virtual_bus::link_for;

/// `global_bus`: the global `--bus` flag, which `scan` honours as well (`morc --bus sim bus scan`).
pub(crate) fn main(command: &BusCommand, config: &EngineConfig, global_bus: Option<&str>) -> i32 {
    match command {
        BusCommand::Scan { sim, iface, drives } => {
            let spec = match (sim, iface) {
                (true, _) => "sim".to_string(),
                (false, Some(i)) => i.clone(),
                (false, None) if global_bus.is_some() => global_bus.unwrap_or_default().to_string(),
                (false, None) => {
                    eprintln!("morc bus scan: say where the bus is: --sim, or --iface IF (e.g. --iface eth1), or the global --bus sim|IF");
                    return super::exit::USAGE;
                }
            };
            match scan(&spec, *drives, config) {
                Ok(text) => {
                    print!("{text}");
                    super::exit::OK
                }
                Err(e) => {
                    eprintln!("morc bus scan: {e}");
                    super::exit::FAULT
                }
            }
        }
        // The same cell as `scan --sim` and `--bus sim`: a master on the far end finds what
        // morc itself would.
        BusCommand::Serve { iface, drives } => match morc_ecat::raw_socket::serve_forever(iface, &SimSegmentConfig::cell(*drives)) {
            Ok(()) => super::exit::OK,
            Err(e) => {
                eprintln!("morc bus serve: {e}");
                super::exit::FAULT
            }
        },
    }
}

/// Brings the bus up (drives left switched off) and lists it.
pub(crate) fn scan(spec: &str, drives: usize, config: &EngineConfig) -> Result<String, String> {
    scan_link(link_for(spec, drives)?, config)
}

/// [`scan`] on a link; the devices are back in PREOP when it returns.
pub fn scan_link(link: Link, config: &EngineConfig) -> Result<String, String> {
    use std::fmt::Write;
    // Every device it reached is listed, a refused one with its class's reason.
    let mut base = BusBase::open(link, BusConfig { period: config.period, enable_drives: false, master: MasterConfig::default(), keep_refused: true, ..Default::default() })?;
    let mut s = list(&base, config);
    // A scan only looks: it leaves the line as a master that is not running finds it.
    match base.bus_mut().to_pre_op(std::time::Duration::from_secs(2)) {
        Ok(()) => s.push_str("devices back in PREOP\n"),
        Err(e) => {
            let _ = writeln!(s, "warning: bringing the devices back to PREOP: {e}");
        }
    }
    Ok(s)
}

fn list(base: &BusBase, config: &EngineConfig) -> String {
    use std::fmt::Write;
    let bus = base.bus();
    let mut s = String::new();
    let _ = writeln!(s, "{:>3}  {:<6} {:<10} {:<10} {:<10} {:>6} {:>6}  {:<15} {:<7} name", "pos", "state", "vendor", "product", "revision", "in B", "out B", "DC", "class");
    for (d, state) in bus.devices().iter().zip(bus.states()) {
        let class = base.class_of(d.position).unwrap_or(if base.refusal(d.position).is_some() { "refused" } else { "-" });
        let _ = writeln!(
            s,
            "{:>3}  {:<6} 0x{:08x} 0x{:08x} 0x{:08x} {:>6} {:>6}  {:<15} {:<7} {}",
            d.position,
            state_name(*state),
            d.vendor_id,
            d.product_code,
            d.revision,
            d.input_bytes,
            d.output_bytes,
            if d.sync0 { format!("{}, SYNC0", d.dc) } else { d.dc.to_string() },
            class,
            d.name
        );
    }
    for d in bus.devices() {
        if let Some(why) = base.refusal(d.position) {
            let _ = writeln!(s, "refused: {why}");
        }
    }
    // A device without a class shows what its own PDO description gave it.
    for d in bus.devices() {
        if let Some(source) = base.generic_source(d.position) {
            let (measures, commands) = base.ports_of(d.position);
            let _ = writeln!(s, "device {} '{}' (no class: ports from {source}): measures {}; commands {}", d.position, d.name, list_or_none(&measures), list_or_none(&commands));
        }
    }
    for d in bus.devices().iter().filter(|d| d.pdo_from_eeprom) {
        let _ = writeln!(s, "device {} '{}': its mailbox does not answer CoE; process data from the PDO description in its EEPROM", d.position, d.name);
    }
    let _ = writeln!(s, "{} devices, working counter {} expected per cycle", bus.devices().len(), bus.expected_working_counter());
    if bus.devices().iter().any(|d| d.sync0) {
        let _ = writeln!(s, "distributed clocks: SYNC0 every {} ms on the devices marked SYNC0", config.period * 1e3);
    }
    if let Some(m) = base.fault() {
        let _ = writeln!(s, "fault: {m}");
    }
    s.push_str(&robot_file_lines(base));
    s
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "nothing".into()
    } else {
        names.join(", ")
    }
}

/// What a robot file says of this line (`morc.robot { … }`, docs/robots.md): a joint per drive
/// at its slave, and the F/T sensor and safety PLC found, for the user to paste and name.
fn robot_file_lines(base: &BusBase) -> String {
    let positions = |kind: &str| base.bus().devices().iter().map(|d| d.position).filter(|p| base.class_of(*p) == Some(kind)).collect::<Vec<_>>();
    let drives = positions("drive");
    let mut s = String::from("as a robot file (morc.robot { … }) has this line:\n");
    if !drives.is_empty() {
        let joints: Vec<String> = drives.iter().enumerate().map(|(i, p)| format!("{{ \"J{}\", drive = {{ slave = {p}, mode = \"csp\" }} }}", i + 1)).collect();
        s.push_str(&format!("  joints = {{ {} }},\n", joints.join(", ")));
        // The line does not say how a drive's counts map to its joint: the robot file must.
        s.push_str("  -- and each drive's gear and counts (its encoder's counts per motor turn, from the data sheet): drive = { slave = …, gear = …, counts = … }\n");
    }
    let found: Vec<(&str, &str, usize)> = [("ft", "ati_axia"), ("safety", "safety_plc")].into_iter().filter_map(|(kind, class)| positions(kind).first().map(|&p| (kind, class, p))).collect();
    if !found.is_empty() {
        let by_slave: Vec<String> = found.iter().map(|(kind, class, p)| format!("{kind} = {{ slave = {p}, class = \"{class}\" }}")).collect();
        s.push_str(&format!("  bus = {{ {} }},\n", by_slave.join(", ")));
        // The same devices by identity, found wherever the wiring puts them (unique on this line only).
        let info = |p: usize| base.bus().devices().iter().find(|d| d.position == p);
        let unique = |p: usize| info(p).is_some_and(|d| base.bus().devices().iter().filter(|o| (o.vendor_id, o.product_code) == (d.vendor_id, d.product_code)).count() == 1);
        if found.iter().all(|&(_, _, p)| unique(p)) {
            let by_identity: Vec<String> = found
                .iter()
                .filter_map(|&(kind, class, p)| info(p).map(|d| format!("{kind} = {{ vendor = 0x{:X}, product = 0x{:X}, class = \"{class}\" }}", d.vendor_id, d.product_code)))
                .collect();
            s.push_str(&format!("  -- or by identity: bus = {{ {} }},\n", by_identity.join(", ")));
        }
    }
    s
}

/// `morc bench bus`: the bus round trip per cycle for the simulated cell — a coupler, 6 drives
/// (DC-synchronous), digital and analog I/O terminals, a safety PLC and a force/torque sensor
/// — in-process and over a veth pair (root), and the cycle rates the veth link sustains
/// without missed frames.
pub(crate) fn bench(seconds: f64, config: &EngineConfig) -> i32 {
    use morc_kernel::rt;
    rt::apply_to_current_thread(config.rt, "bus benchmark");
    let sim = SimSegmentConfig::cell(morc_ecat::virtual_bus::DEFAULT_DRIVES);
    println!(
        "bus round trip per cycle: coupler + {} drives + DO{} + DI{} + AI{} + AO{} + safety PLC + F/T sensor + {} gripper ({} devices)",
        sim.drives,
        sim.digital_outputs,
        sim.digital_inputs,
        sim.analog_inputs,
        sim.analog_outputs,
        sim.grippers,
        sim.device_count()
    );
    match bench_in_process(seconds, &sim, config) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("morc bench bus: in-process: {e}");
            return super::exit::FAULT;
        }
    }
    match bench_veth(seconds, &sim, config) {
        Ok(text) => print!("{text}"),
        Err(e) => println!("  veth: not measured: {e}"),
    }
    super::exit::OK
}

fn cycle_histogram(base: &mut BusBase, cycles: u64, period: Option<u64>) -> (morc_kernel::Histogram, u64) {
    use morc_kernel::Base;
    use morc_kernel::Value;
    use morc_kernel::{monotonic_ns, sleep_until};
    let mut outputs: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let inputs: Vec<Value> = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
    let mut h = morc_kernel::Histogram::new();
    let mut late = 0;
    let mut deadline = monotonic_ns() + period.unwrap_or(0);
    for tick in 0..cycles {
        if period.is_some() {
            sleep_until(deadline);
        }
        let start = monotonic_ns();
        let _ = base.sense(tick, &mut outputs);
        let _ = base.actuate(tick, Some(morc_kernel::Commands::all(&inputs)));
        let end = monotonic_ns();
        h.record(end - start);
        if let Some(p) = period {
            deadline += p;
            if end > deadline {
                late += 1;
            }
        }
    }
    (h, late)
}

fn bench_in_process(seconds: f64, sim: &SimSegmentConfig, config: &EngineConfig) -> Result<String, String> {
    let link = Link::Simulated(shared_sim_segment(sim)?);
    let mut base = BusBase::open(link, BusConfig { period: config.period, max_bad_cycles: u32::MAX, ..Default::default() })?;
    cycle_histogram(&mut base, 1000, None);
    let start = std::time::Instant::now();
    let (h, _) = cycle_histogram(&mut base, 1000, None);
    let per = start.elapsed().as_secs_f64() / 1000.0;
    let n = ((seconds / per) as u64).clamp(1000, 10_000_000);
    let (h2, _) = cycle_histogram(&mut base, n, None);
    let _ = h;
    let s = h2.summary();
    Ok(format!(
        "  in-process  {n} cycles back to back: {s}\n              ≈ {:.0} cycles/s sustained (one core, simulated devices included), lost frames {}",
        1e9 / s.mean,
        base.bus().counters().lost_frames
    ))
}

/// Runs `ip …`, with the reason when it fails.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("ip").args(args).output().map_err(|e| format!("cannot run `ip` ({e}): install iproute2"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`ip {}`: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn bench_veth(seconds: f64, sim: &SimSegmentConfig, config: &EngineConfig) -> Result<String, String> {
    use std::os::fd::AsRawFd;
    // SAFETY: geteuid takes no arguments, touches no memory of ours and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root (a network namespace with a veth pair, raw sockets)".into());
    }
    let ns = format!("morc-bench-{}", std::process::id());
    ip(&["netns", "add", &ns])?;
    // The namespace (and the veth pair in it) goes when this returns, whatever happens.
    struct Cleanup(String);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = ip(&["netns", "del", &self.0]);
        }
    }
    let _cleanup = Cleanup(ns.clone());
    ip(&["-n", &ns, "link", "add", "ecat-m", "type", "veth", "peer", "name", "ecat-s"])?;
    ip(&["-n", &ns, "link", "set", "ecat-m", "up"])?;
    ip(&["-n", &ns, "link", "set", "ecat-s", "up"])?;
    let sim = sim.clone();
    let config = config.clone();
    std::thread::spawn(move || -> Result<String, String> {
        use std::fmt::Write;
        let f = std::fs::File::open(format!("/var/run/netns/{ns}")).map_err(|e| e.to_string())?;
        // SAFETY: valid namespace fd; changes this thread's network namespace only.
        if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(format!("setns: {}", std::io::Error::last_os_error()));
        }
        morc_kernel::rt::apply_to_current_thread(config.rt, "bus benchmark");
        let server = morc_ecat::raw_socket::SegmentServer::start_with("ecat-s", shared_sim_segment(&sim)?, Some(config.rt.below(1))).map_err(|e| e.to_string())?;
        let master = MasterConfig { receive_timeout: std::time::Duration::from_millis(20), ..Default::default() };
        let mut base = BusBase::open(Link::Interface("ecat-m".into()), BusConfig { period: 0.001, max_bad_cycles: u32::MAX, master, ..Default::default() })?;
        let mut s = String::new();
        cycle_histogram(&mut base, 200, None);
        let n = ((seconds * 2000.0) as u64).max(1000);
        let (h, _) = cycle_histogram(&mut base, n, None);
        let rt = h.summary();
        let _ = writeln!(s, "  veth        {n} cycles back to back: {rt}\n              ≈ {:.0} cycles/s (kernel veth + the segment server's thread)", 1e9 / rt.mean);
        let _ = writeln!(s, "  veth at fixed rates ({seconds} s each, receive timeout 90 % of the cycle):");
        for hz in [1000u64, 2000, 4000, 8000] {
            let period = 1_000_000_000 / hz;
            base.bus_mut().set_receive_timeout(std::time::Duration::from_nanos(period * 9 / 10));
            let lost0 = base.bus().counters().lost_frames;
            let cycles = (seconds * hz as f64) as u64;
            let (h, late) = cycle_histogram(&mut base, cycles, Some(period));
            let lost = base.bus().counters().lost_frames - lost0;
            let verdict = if lost == 0 && late == 0 { "sustained" } else { "NOT sustained" };
            let _ = writeln!(
                s,
                "    {hz:>5} Hz  {cycles:>6} cycles  lost frames {lost:>5}  late cycles {late:>5}  round trip p99 {}  max {}  {verdict}",
                morc_kernel::human_ns(h.quantile(0.99) as f64),
                morc_kernel::human_ns(h.max() as f64)
            );
        }
        drop(base);
        let _ = server.stop();
        Ok(s)
    })
    .join()
    .map_err(|_| "the veth benchmark thread panicked".to_string())?
}

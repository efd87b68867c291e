//! `morc bus …`: the EtherCAT bus from the command line.
//!
//! - `scan [--sim | --iface IF]`: brings the segment up and lists each device the way IgH's
//!   `ethercat slaves` does (position, state, name, identity), with its process-data sizes,
//!   distributed-clock support and the class morc drives it with.
//! - `serve --iface IF`: serves the simulated segment on a network interface (raw EtherCAT
//!   frames), for other masters (SOEM, TwinCAT, ethercrab) to drive.

use clap::Subcommand;

use crate::bus::base::{BusBase, BusConfig};
use crate::bus::master::{state_name, Link, MasterConfig};
use crate::bus::sim::{shared_sim_segment, SimSegmentConfig};
use crate::kernel::engine::EngineConfig;

#[derive(Subcommand, Debug)]
pub enum BusCommand {
    /// List the devices on the bus (brings them to OP).
    Scan {
        /// Scan the simulated segment instead of hardware.
        #[arg(long, conflicts_with = "iface")]
        sim: bool,
        /// Network interface the EtherCAT line is on (needs root or CAP_NET_RAW).
        #[arg(long)]
        iface: Option<String>,
        /// Drives in the simulated segment.
        #[arg(long, default_value_t = 6)]
        drives: usize,
    },
    /// Serve the simulated segment on a network interface until interrupted.
    Serve {
        #[arg(long)]
        iface: String,
        #[arg(long, default_value_t = 6)]
        drives: usize,
    },
}

/// Where `--bus` (morc run) or `--sim` / `--iface` points.
pub fn link_for(spec: &str, drives: usize) -> Result<Link, String> {
    match spec {
        "sim" => Ok(Link::Simulated(shared_sim_segment(&SimSegmentConfig { drives, ..Default::default() })?)),
        iface if !iface.is_empty() => Ok(Link::Interface(iface.to_string())),
        _ => Err("--bus needs 'sim' or a network interface name".into()),
    }
}

pub fn main(command: &BusCommand, config: &EngineConfig) -> i32 {
    match command {
        BusCommand::Scan { sim, iface, drives } => {
            let spec = match (sim, iface) {
                (true, _) => "sim".to_string(),
                (false, Some(i)) => i.clone(),
                (false, None) => {
                    eprintln!("morc bus scan: say where the bus is: --sim, or --iface IF (e.g. --iface eth1)");
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
        BusCommand::Serve { iface, drives } => match crate::bus::raw_socket::serve_forever(iface, &SimSegmentConfig { drives: *drives, ..Default::default() }) {
            Ok(()) => super::exit::OK,
            Err(e) => {
                eprintln!("morc bus serve: {e}");
                super::exit::FAULT
            }
        },
    }
}

/// Brings the bus up (drives left switched off) and lists it.
pub fn scan(spec: &str, drives: usize, config: &EngineConfig) -> Result<String, String> {
    use std::fmt::Write;
    let link = link_for(spec, drives)?;
    let base = BusBase::open(link, BusConfig { period: config.period, enable_drives: false, master: MasterConfig::default(), ..Default::default() })?;
    let bus = base.bus();
    let mut s = String::new();
    let _ = writeln!(s, "{:>3}  {:<6} {:<10} {:<10} {:<10} {:>6} {:>6}  {:<7} {:<8} name", "pos", "state", "vendor", "product", "revision", "in B", "out B", "DC", "class");
    for (d, state) in bus.devices().iter().zip(bus.states()) {
        let class = match base.class_of(d.position) {
            Some(c) => c,
            None => "-",
        };
        let _ = writeln!(
            s,
            "{:>3}  {:<6} 0x{:08x} 0x{:08x} 0x{:08x} {:>6} {:>6}  {:<7} {:<8} {}",
            d.position,
            state_name(*state),
            d.vendor_id,
            d.product_code,
            d.revision,
            d.input_bytes,
            d.output_bytes,
            d.dc,
            class,
            d.name
        );
    }
    let _ = writeln!(s, "{} devices, working counter {} expected per cycle", bus.devices().len(), bus.expected_working_counter());
    Ok(s)
}

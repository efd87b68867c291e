//! The `morc` command line.

pub mod bench;
pub mod bus;
pub mod fmu;
pub mod lib;
pub mod rec;
pub mod test;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::components::sim_axes::SimAxes;
use crate::kernel::clock::ClockKind;
use crate::kernel::engine::{Engine, EngineConfig};
use crate::kernel::rt::RtPolicy;

#[derive(Parser, Debug)]
#[command(name = "morc", version, about = "morc — a modular robot controller you program in Lua")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Clock: "virtual" (as fast as possible; the default in simulation) or "wall".
    #[arg(long, global = true, default_value = "virtual")]
    pub clock: String,
    /// Base period (bus cycle) in milliseconds.
    #[arg(long, global = true, default_value_t = 1.0)]
    pub period_ms: f64,
    /// Do not ask for real-time scheduling (SCHED_FIFO).
    #[arg(long, global = true)]
    pub no_rt: bool,
    /// More log output (-v, -vv).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Only errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a Lua robot program.
    Run {
        /// Run on the EtherCAT bus instead of the simulated axes: `sim` (the simulated
        /// segment through the real master) or a network interface.
        #[arg(long)]
        bus: Option<String>,
        file: PathBuf,
        /// Arguments for the program (in the global table `arg`).
        args: Vec<String>,
    },
    /// The EtherCAT bus: `scan` lists its devices, `serve` simulates a segment on an interface.
    Bus {
        #[command(subcommand)]
        command: bus::BusCommand,
    },
    /// Measure: `engine` (latency and hand-off cost), `lua` (Lua component jitter).
    Bench {
        what: String,
        /// Seconds per configuration.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
    },
    /// Work with recordings (HDF5): `morc rec info FILE`.
    Rec {
        #[command(subcommand)]
        cmd: rec::RecCommand,
    },
    /// FMUs: `export` morc's blocks, `info` and `sim` on any FMU.
    Fmu {
        #[command(subcommand)]
        command: fmu::FmuCommand,
    },
    /// Libraries shared between labs: `list`, `info NAME`, `new NAME`, `install PATH|URL`.
    Lib {
        #[command(subcommand)]
        command: lib::LibCommand,
    },
    /// Run Lua tests on the virtual clock: a library's DIR/tests/*.lua, or the *.lua of a plain folder.
    Test {
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
}

/// Exit codes: what a calling script can rely on.
pub mod exit {
    pub const OK: i32 = 0;
    pub const SCRIPT_ERROR: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const FAULT: i32 = 3;
}

pub fn engine_config(cli: &Cli) -> Result<EngineConfig, String> {
    let clock: ClockKind = cli.clock.parse()?;
    let rt = RtPolicy { enabled: !cli.no_rt, ..RtPolicy::default() };
    Ok(EngineConfig { period: cli.period_ms * 1e-3, clock, rt })
}

/// The engine a program runs on: the simulated base until robots exist.
pub fn start_engine(config: EngineConfig) -> Result<Engine, String> {
    let base = SimAxes::new(&[0.0; 6], config.period, 3.0);
    Engine::start(config, Box::new(base))
}

/// The engine on the EtherCAT bus (`--bus sim` or `--bus IF`), six drives in the simulation.
pub fn start_bus_engine(config: EngineConfig, bus: &str) -> Result<Engine, String> {
    let link = bus::link_for(bus, 6)?;
    let base = crate::bus::base::BusBase::open(link, crate::bus::base::BusConfig { period: config.period, ..Default::default() })?;
    Engine::start(config, Box::new(base))
}

pub fn main() -> i32 {
    let cli = Cli::parse();
    let level = match (cli.quiet, cli.verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        _ => "debug",
    };
    // ethercrab logs every late reply as an error; the bus counts them (stale replies).
    let level = format!("{level},ethercrab::pdu_loop::frame_element=off");
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level)).format_timestamp(None).init();
    let config = match engine_config(&cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("morc: {e}");
            return exit::USAGE;
        }
    };
    match &cli.command {
        Some(Command::Run { bus, file, args }) => run_program(config, bus.as_deref(), file, args),
        Some(Command::Bus { command }) => bus::main(command, &config),
        Some(Command::Bench { what, seconds }) => bench::main(what, *seconds, &config),
        Some(Command::Rec { cmd }) => rec::main(cmd),
        Some(Command::Fmu { command }) => fmu::main(command),
        Some(Command::Lib { command }) => lib::main(command),
        Some(Command::Test { dir }) => test::main(dir),
        None => {
            eprintln!("morc: the REPL is not built yet; run a program: morc run examples/first_assembly.lua");
            exit::USAGE
        }
    }
}

fn run_program(config: EngineConfig, bus: Option<&str>, file: &PathBuf, args: &[String]) -> i32 {
    let engine = match bus {
        Some(b) => start_bus_engine(config, b),
        None => start_engine(config),
    };
    let engine = match engine {
        Ok(e) => e,
        Err(e) => {
            eprintln!("morc: {e}");
            return exit::FAULT;
        }
    };
    let result = (|| -> mlua::Result<()> {
        let lua = crate::lua::new_state()?;
        crate::lua::install(&lua, engine)?;
        let arg = lua.create_sequence_from(args.iter().cloned())?;
        arg.set(0, file.display().to_string())?;
        lua.globals().set("arg", arg)?;
        let code = std::fs::read_to_string(file).map_err(|e| mlua::Error::runtime(format!("cannot read {}: {e}", file.display())))?;
        lua.load(code).set_name(format!("@{}", file.display())).exec()
    })();
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("morc: {}", crate::components::lua_component::lua_error_text(&e));
            exit::SCRIPT_ERROR
        }
    }
}

//! The `morc` command line.

mod bench;
mod bench_plant;
mod bench_ros;
mod bench_teach;
mod bench_topp;
pub mod bus;
mod check;
mod doc;
mod fmu;
mod fmu_sim;
mod interrupt;
mod jog;
pub mod library;
mod live;
mod rec;
mod repl;
mod ros;
mod run;
mod test;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use morc_kernel::rt::RtPolicy;
use morc_kernel::ClockKind;
use morc_kernel::EngineConfig;
use morc_lua::base::BaseRequest;

#[derive(Parser, Debug)]
#[command(name = "morc", version, about = "morc — a modular robot controller you program in Lua")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options for running programs, given before the subcommand (`morc --bus sim run x.lua`)
    /// or for the REPL (`morc --clock wall`).
    #[command(flatten)]
    pub run: RunOpts,
}

/// The options that only mean something where a program runs: the REPL (`morc …`), `morc run`,
/// and, given before the subcommand, `morc bench` and `morc bus scan`. Not global, so the
/// other subcommands' `--help` does not list them.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct RunOpts {
    /// Clock: "virtual" (as fast as possible; the default in simulation) or "wall" (the default with --live, and the only one on a real --bus IFACE).
    #[arg(long, value_name = "virtual|wall")]
    pub clock: Option<String>,
    /// Base period (bus cycle) in milliseconds [default: 1].
    #[arg(long, value_name = "MS")]
    pub period_ms: Option<f64>,
    /// Do not ask for real-time scheduling (SCHED_FIFO).
    #[arg(long)]
    pub no_rt: bool,
    /// More log output (-v, -vv).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Only errors.
    #[arg(short, long)]
    pub quiet: bool,
    /// Run on the simulated robot (the default).
    #[arg(long, conflicts_with = "bus")]
    pub sim: bool,
    /// Run on the EtherCAT bus instead of the simulated axes: `sim` (the simulated
    /// segment through the real master) or a network interface.
    #[arg(long, value_name = "IFACE|sim")]
    pub bus: Option<String>,
    /// Folder for recordings (sets morc.record_dir; default "runs").
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// File format of recordings: hdf5 (default) or mcap (Foxglove, PlotJuggler); sets morc.record_format.
    #[arg(long, value_name = "hdf5|mcap", value_parser = ["hdf5", "mcap"])]
    pub record_format: Option<String>,
    /// Serve the live view (Foxglove WebSocket protocol) while programs run [default address: 127.0.0.1:8765; another: --live=ADDR].
    // The address needs `=`: a value that may be left out would otherwise take the next word
    // (`--live run prog.lua` read `run` as the address).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = morc_live::DEFAULT_ADDRESS)]
    pub live: Option<String>,
    /// The secret the operator page's commands need (16+ letters, digits, '-', '_'); default: a new random one each run, printed in the page's URL.
    #[arg(long, value_name = "TOKEN")]
    pub live_token: Option<String>,
    /// Join ROS 2 (no ROS install needed) as the node /morc in the domain ROS_DOMAIN_ID names: the robot on /joint_states, /tf, /tf_static and /robot_description while programs run.
    #[arg(long)]
    pub ros: bool,
}

impl RunOpts {
    /// These options after the subcommand (`morc run --bus sim x.lua`) over those before it.
    pub fn over(&self, before: &RunOpts) -> Result<RunOpts, String> {
        let merged = RunOpts {
            clock: self.clock.clone().or_else(|| before.clock.clone()),
            period_ms: self.period_ms.or(before.period_ms),
            no_rt: self.no_rt || before.no_rt,
            verbose: self.verbose + before.verbose,
            quiet: self.quiet || before.quiet,
            sim: self.sim || before.sim,
            bus: self.bus.clone().or_else(|| before.bus.clone()),
            record: self.record.clone().or_else(|| before.record.clone()),
            record_format: self.record_format.clone().or_else(|| before.record_format.clone()),
            live: self.live.clone().or_else(|| before.live.clone()),
            live_token: self.live_token.clone().or_else(|| before.live_token.clone()),
            ros: self.ros || before.ros,
        };
        if merged.live_token.is_some() && merged.live.is_none() {
            return Err("--live-token is the token of the live view and the operator page: give --live too (morc --live --live-token TOKEN run prog.lua)".into());
        }
        if merged.sim && merged.bus.is_some() {
            return Err("--sim and --bus exclude each other: --sim runs the simulated robot, --bus the EtherCAT bus".into());
        }
        Ok(merged)
    }
}

/// What every Lua state of the command line is set up with.
#[derive(Clone, Debug, Default)]
pub(crate) struct LuaSetup {
    /// The command line's live view (`--live`): the Lua states it makes show their runs there.
    pub live: morc_live::Live,
    pub bus: Option<String>,
    pub record_dir: Option<PathBuf>,
    pub record_format: Option<String>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run a Lua robot program.
    Run {
        file: PathBuf,
        /// Arguments for the program (in the global table `arg`).
        args: Vec<String>,
        #[command(flatten)]
        opts: RunOpts,
    },
    /// Run each program on the simulation (nothing real moves; recordings are not
    /// kept): OK only if it runs cleanly — no Lua error, no fault, no skill failure left unhandled.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the documentation of a function (`morc.assembly`) or a component kind (`sine`);
    /// with --luals DIR, write LuaLS annotation stubs of the whole Lua API into DIR instead.
    #[command(override_usage = "morc doc NAME\n       morc doc --luals DIR")]
    Doc {
        #[arg(required_unless_present = "luals")]
        name: Option<String>,
        /// Write LuaLS annotation stubs (for completion and type checks in VS Code and Neovim) into DIR.
        #[arg(long, value_name = "DIR", conflicts_with = "name")]
        luals: Option<PathBuf>,
    },
    /// The EtherCAT bus: `scan` lists its devices, `serve` simulates a segment on an interface.
    Bus {
        #[command(subcommand)]
        command: bus::BusCommand,
    },
    /// Measure: `engine` (latency and hand-off cost), `lua` (Lua component cost and jitter), `lua-gc` (worst collector step; run it with --seconds 600), `lua-calls` (one call from Lua into morc), `teach` (the hand-guiding law in Lua on the simulated stacker), `bus`, `live` (the live view's cost on the real-time path).
    Bench {
        what: String,
        /// Seconds per configuration.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
    },
    /// Work with recordings (HDF5 or MCAP): `morc rec info FILE`, `morc rec convert A.h5 B.mcap`.
    Rec {
        #[command(subcommand)]
        cmd: rec::RecCommand,
    },
    /// Plot a recording: the same as `morc rec plot`.
    Plot(rec::PlotArgs),
    /// FMUs: `export` morc's blocks, `info` and `sim` on any FMU.
    Fmu {
        #[command(subcommand)]
        command: fmu::FmuCommand,
    },
    /// ROS 2 tools: `fmu MODEL.fmu` runs an FMU as a ROS 2 node (as fmi_adapter does).
    Ros {
        #[command(subcommand)]
        command: ros::RosCommand,
    },
    /// Libraries shared between labs: `list`, `info NAME`, `new NAME`, `install PATH|URL`.
    Lib {
        #[command(subcommand)]
        command: library::LibCommand,
    },
    /// Run Lua tests on the virtual clock: a library's DIR/tests/*.lua, an installed library's by its NAME, or the *.lua of a plain folder.
    Test {
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
}

/// Exit codes: what a calling script can rely on.
pub(crate) mod exit {
    pub const OK: i32 = 0;
    pub const SCRIPT_ERROR: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const FAULT: i32 = 3;
    /// A skill failed and the program never looked at its result (`r.ok`), as `morc check` judges.
    pub const UNHANDLED_FAILURE: i32 = 4;
    /// Ctrl-C ended the program (128 + SIGINT, as shells report it).
    pub const INTERRUPTED: i32 = 130;
}

/// The engine configuration the options ask for; a bad value is a usage error (exit 2).
pub(crate) fn engine_config(opts: &RunOpts) -> Result<EngineConfig, String> {
    // Watching a run live means watching it at the robot's pace: --live and --ros default to the wall clock.
    let default = if opts.live.is_some() || opts.ros { ClockKind::Wall } else { ClockKind::Virtual };
    let asked = opts.clock.as_deref().map(str::parse::<ClockKind>).transpose()?;
    // A real bus runs on the wall clock whatever the default; `--clock virtual` there is refused.
    let clock = match opts.bus.as_deref() {
        Some(bus) => morc_ecat::virtual_bus::clock_for(bus, asked, default).map_err(|e| format!("--bus {bus}: {e}"))?,
        None => asked.unwrap_or(default),
    };
    let rt = RtPolicy { enabled: !opts.no_rt, ..RtPolicy::default() };
    let period_ms = opts.period_ms.unwrap_or(1.0);
    // The engine's own bounds (1 µs … 1 s), checked here so a bad value is a usage error, not a fault.
    if !(period_ms.is_finite() && (1e-3..=1000.0).contains(&period_ms)) {
        return Err(format!("--period-ms {period_ms}: the base period must be between 0.001 ms (1 µs) and 1000 ms (1 s), e.g. --period-ms 1"));
    }
    Ok(EngineConfig { period: period_ms * 1e-3, clock, rt })
}

pub(crate) use morc_lua::start_engine;

/// Runs the `morc` command line on this process's arguments and returns its exit code: 0 ok,
/// 1 script error, 2 usage error, 3 fault, 4 a failed skill result not looked at, 130 interrupted.
pub fn main() -> i32 {
    quiet_broken_pipe(run_cli)
}

/// Runs `f`; when a print hit a closed pipe (`morc lib info x | head -2`), ends quietly with
/// exit 0 instead of a panic message: the reader stopped reading, nothing went wrong. Other
/// panics keep their message and exit code (101). Unwinding drops engines, so a robot holds.
pub(crate) fn quiet_broken_pipe(f: impl FnOnce() -> i32 + std::panic::UnwindSafe) -> i32 {
    fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
        let text = payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied()).unwrap_or("");
        // std's print!/println!/eprintln! panic with "failed printing to stdout: Broken pipe (os error 32)".
        text.starts_with("failed printing to std") && text.contains("os error 32")
    }
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            default_hook(info);
        }
    }));
    match std::panic::catch_unwind(f) {
        Ok(code) => code,
        Err(payload) if is_broken_pipe(payload.as_ref()) => exit::OK,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

fn run_cli() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout (a closed pipe is quiet, as everywhere).
            let code = if e.use_stderr() { exit::USAGE } else { exit::OK };
            let _ = e.print();
            return code;
        }
    };
    let opts = match &cli.command {
        Some(Command::Run { opts, .. }) => opts.over(&cli.run),
        _ => Ok(cli.run.clone()),
    };
    let opts = match opts {
        Ok(o) => o,
        Err(e) => {
            eprintln!("morc: {e}");
            return exit::USAGE;
        }
    };
    let level = match (opts.quiet, opts.verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        _ => "debug",
    };
    // ethercrab logs every late reply as an error; the bus counts them (stale replies). The DDS
    // stack warns of what is no user's concern (ROS_DISTRO unset, datagrams over 1500 bytes on
    // loopback); its errors still show, and -v shows the rest.
    let dds = if opts.verbose > 0 { level } else { "error" };
    let level = format!("{level},ethercrab::pdu_loop::frame_element=off,rustdds={dds},ros2_client={dds}");
    // The command line's live view: served with --live, and every log line goes to it.
    let live_view = morc_live::Live::new();
    live::install_logger(env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level)).format_timestamp(None).build(), live_view.clone());
    let config = match engine_config(&opts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("morc: {e}");
            return exit::USAGE;
        }
    };
    if let Some(address) = &opts.live {
        if let Err(e) = live::start(&live_view, address, opts.live_token.clone()) {
            eprintln!("morc: {e}");
            return exit::USAGE;
        }
        if let Some(Command::Run { file, .. }) = &cli.command {
            live_view.page().set_program(&file.display().to_string());
        }
    }
    if opts.ros {
        match morc_lua::ros::start(None, None, None, None) {
            Ok(said) if !opts.quiet => eprintln!("morc: {said}"),
            Ok(_) => {}
            Err(e) => {
                eprintln!("morc: --ros: {e}");
                return exit::USAGE;
            }
        }
    }
    let setup = LuaSetup { live: live_view.clone(), bus: opts.bus.clone(), record_dir: opts.record.clone(), record_format: opts.record_format.clone() };
    let code = match &cli.command {
        Some(Command::Run { file, args, .. }) => run::main(config, &setup, file, args),
        Some(Command::Check { files }) => check::main(files),
        Some(Command::Doc { luals: Some(dir), .. }) => doc::luals(dir),
        Some(Command::Doc { name, .. }) => doc::main(name.as_deref().unwrap_or_default()),
        Some(Command::Bus { command }) => bus::main(command, &config, opts.bus.as_deref()),
        Some(Command::Bench { what, seconds }) => bench::main(what, *seconds, &config),
        Some(Command::Rec { cmd }) => rec::main(cmd),
        Some(Command::Fmu { command }) => fmu::main(command),
        Some(Command::Ros { command }) => ros::main(command, opts.clock.as_deref(), opts.quiet),
        Some(Command::Plot(args)) => rec::plot(args),
        Some(Command::Lib { command }) => library::main(command),
        Some(Command::Test { dir }) => test::main(dir),
        None => repl::main(config, &setup),
    };
    // Clients get what was sent before the process ends.
    live_view.stop();
    morc_ros::stop();
    code
}

/// A Lua state with `morc` installed on a started engine (the bus one when asked for),
/// and `morc.record_dir` set from `--record`.
pub(crate) fn lua_with_engine(config: EngineConfig, setup: &LuaSetup) -> Result<mlua::Lua, String> {
    // `--bus sim` or `--bus IF`: six drives on the bus (in the simulation), else the default.
    let engine = morc_lua::base::start_engine_on(&BaseRequest { bus: setup.bus.clone(), ..BaseRequest::default() }, config)?;
    let lua = morc_lua::new_state().map_err(|e| e.to_string())?;
    morc_lua::install(&lua, engine).map_err(|e| e.to_string())?;
    morc_lua::live::share(&lua, setup.live.clone());
    if let Some(bus) = &setup.bus {
        // Programs that put a robot on the engine (morc.use_robot) then drive its joints on this bus.
        let morc: mlua::Table = lua.globals().get("morc").map_err(|e| e.to_string())?;
        morc.set("bus", bus.as_str()).map_err(|e| e.to_string())?;
    }
    if let Some(dir) = &setup.record_dir {
        let morc: mlua::Table = lua.globals().get("morc").map_err(|e| e.to_string())?;
        morc.set("record_dir", dir.display().to_string()).map_err(|e| e.to_string())?;
    }
    if let Some(format) = &setup.record_format {
        let morc: mlua::Table = lua.globals().get("morc").map_err(|e| e.to_string())?;
        morc.set("record_format", format.as_str()).map_err(|e| e.to_string())?;
    }
    Ok(lua)
}

/// The exit code after a program or REPL session: a fault in the last run wins.
pub(crate) fn exit_code(lua: &mlua::Lua, failed: bool) -> i32 {
    let fault = lua.app_data_ref::<morc_lua::LastOutcome>().is_some_and(|o| o.is_fault());
    match (fault, failed) {
        (true, _) => exit::FAULT,
        (false, true) => exit::SCRIPT_ERROR,
        (false, false) => exit::OK,
    }
}

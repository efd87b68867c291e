//! `morc fmu …`: export morc's blocks as FMUs, inspect and simulate FMUs.

use std::path::PathBuf;

use clap::Subcommand;

use super::exit;
use morc_fmi::description::FmiVersion;
use morc_fmi::export;

#[derive(Subcommand, Debug)]
pub enum FmuCommand {
    /// Package morc's blocks as FMUs, FMI 2.0 (<model>.fmu) and 3.0
    /// (<model>-fmi3.fmu); co-simulation, and model exchange for ODE blocks
    /// (the `morc-fmu` library, which `cargo run` and `cargo build` build beside `morc`).
    Export {
        /// Only this FMI version (2 or 3; default: both).
        #[arg(long)]
        fmi: Option<u8>,
        /// Folder to write <model>.fmu into.
        #[arg(short, long, default_value = "target/fmus")]
        out: PathBuf,
        /// The morc-fmu shared library (default: found beside this executable).
        #[arg(long)]
        library: Option<PathBuf>,
        /// Model identifiers to export (default: all).
        models: Vec<String>,
    },
    /// Variables (causality, type, unit, start), default experiment and interfaces of an FMU.
    Info { file: PathBuf },
    /// Simulate an FMU alone (like `fmpy simulate`) and write its outputs as CSV in FMPy's layout.
    Sim {
        file: PathBuf,
        /// Start time in s (default: the FMU's default experiment, else 0).
        #[arg(long)]
        start: Option<f64>,
        /// Stop time in s (default: the FMU's default experiment, else start + 1 s).
        #[arg(long)]
        stop: Option<f64>,
        /// Step (the FMU's sample time) in s (default: FMPy's: the default experiment's step, doubled until at most 1000 steps; else 500 to 1000 steps).
        #[arg(long)]
        step: Option<f64>,
        /// Parameter, or start value of a state or other variable with one: --param name=value (repeatable); also interface=me, me_solver=rk4, me_substeps=n, me_events=locate (or step_end: state events at step ends, as FMPy's Euler).
        #[arg(long = "param")]
        params: Vec<String>,
        /// Input CSV in FMPy's format: a "time" column, then one column per input.
        #[arg(long)]
        input: Option<PathBuf>,
        /// Output CSV (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

pub fn main(command: &FmuCommand) -> i32 {
    match command {
        FmuCommand::Export { out, library, models, fmi } => export_main(out, library.as_ref(), models, *fmi),
        FmuCommand::Info { file } => info_main(file),
        FmuCommand::Sim { file, start, stop, step, params, input, output } => {
            let options = super::fmu_sim::SimOptions { file, start: *start, stop: *stop, step: *step, params, input: input.as_deref() };
            sim_main(&options, output.as_deref())
        }
    }
}

/// `morc fmu sim`: rows go to the file (or standard output) as they are computed.
fn sim_main(options: &super::fmu_sim::SimOptions, output: Option<&std::path::Path>) -> i32 {
    use super::fmu_sim::SimError;
    if let Err(e) = super::interrupt::install_stop_flag() {
        eprintln!("morc fmu sim: {e}");
    }
    let stdout = std::io::stdout();
    let mut out: Box<dyn std::io::Write> = match output {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(e) => {
                eprintln!("morc fmu sim: cannot write {}: {e}", path.display());
                return exit::USAGE;
            }
        },
        None => Box::new(std::io::BufWriter::new(stdout.lock())),
    };
    match super::fmu_sim::simulate(options, &mut out) {
        Ok(_) => exit::OK,
        Err(SimError::Usage(e)) => {
            drop(out);
            if let Some(path) = output {
                // Nothing was simulated: leave no empty file behind.
                let _ = std::fs::remove_file(path);
            }
            eprintln!("morc fmu sim: {e}");
            exit::USAGE
        }
        Err(SimError::Fault(e)) => {
            eprintln!("morc fmu sim: {e}");
            exit::FAULT
        }
        Err(SimError::Interrupted(signal, e)) => {
            eprintln!("morc fmu sim: {e}");
            128 + signal
        }
    }
}

fn export_main(out: &std::path::Path, library: Option<&PathBuf>, models: &[String], fmi: Option<u8>) -> i32 {
    let versions: &[FmiVersion] = match fmi {
        None => &[FmiVersion::V2, FmiVersion::V3],
        Some(2) => &[FmiVersion::V2],
        Some(3) => &[FmiVersion::V3],
        Some(v) => {
            eprintln!("morc fmu export: --fmi must be 2 or 3, got {v}");
            return exit::USAGE;
        }
    };
    let library = match library.cloned().or_else(|| std::env::current_exe().ok().and_then(|e| export::find_library(&e))) {
        Some(l) => l,
        None => {
            eprintln!("morc fmu export: no morc-fmu library beside this executable; run morc through `cargo run` or `cargo build` (they build crates/morc-fmu beside it) or pass --library");
            return exit::USAGE;
        }
    };
    for block in export::EXPORTED {
        if !models.is_empty() && !models.iter().any(|m| m == block.model_identifier) {
            continue;
        }
        for &version in versions {
            match export::package(block, version, &library, out) {
                Ok(path) => println!("{}", path.display()),
                Err(e) => {
                    eprintln!("morc fmu export: {e}");
                    return exit::FAULT;
                }
            }
        }
    }
    exit::OK
}

fn info_main(file: &std::path::Path) -> i32 {
    let fmu = match morc_fmi::Fmu::open(file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("morc fmu info: {e}");
            return exit::FAULT;
        }
    };
    let md = &fmu.description;
    println!("{}  (FMI {}, {})", md.model_name, md.fmi_version, md.generation_tool);
    if !md.description.is_empty() {
        println!("  {}", md.description);
    }
    let interfaces: Vec<String> = [("co-simulation", &md.co_simulation), ("model exchange", &md.model_exchange), ("scheduled execution (not run by morc)", &md.scheduled_execution)]
        .iter()
        .filter_map(|(what, id)| id.as_ref().map(|id| format!("{what} ({id})")))
        .collect();
    println!("interfaces: {}", interfaces.join(", "));
    let de = &md.default_experiment;
    let show = |x: Option<f64>| x.map_or("-".to_string(), |x| x.to_string());
    println!("default experiment: start {} s, stop {} s, step {} s, tolerance {}", show(de.start_time), show(de.stop_time), show(de.step_size), show(de.tolerance));
    println!("{:<24} {:<12} {:<10} {:<10} {:<12} start", "variable", "causality", "type", "unit", "variability");
    for v in &md.variables {
        let causality = format!("{:?}", v.causality).to_lowercase();
        // The element as written (Enumeration, Binary …), with its declared type.
        let ty = if v.declared_type.is_empty() { v.type_name.clone() } else { format!("{}({})", v.type_name, v.declared_type) };
        let dims = if v.dimensions.is_empty() { String::new() } else { format!("{:?}", v.dimensions) };
        println!("{:<24} {:<12} {:<10} {:<10} {:<12} {}", v.name, causality, format!("{ty}{dims}"), v.unit, v.variability, v.start.as_deref().unwrap_or(""));
    }
    exit::OK
}

//! `morc fmu …`: export morc's blocks as FMUs, inspect and simulate FMUs.

use std::path::PathBuf;

use clap::Subcommand;

use super::exit;
use crate::fmi::export;

#[derive(Subcommand, Debug)]
pub enum FmuCommand {
    /// Package morc's blocks as FMI 2.0 co-simulation FMUs (needs the built
    /// `morc-fmus` library: `cargo build` builds it beside `morc`).
    Export {
        /// Folder to write <model>.fmu into.
        #[arg(short, long, default_value = "target/fmus")]
        out: PathBuf,
        /// The morc-fmus shared library (default: found beside this executable).
        #[arg(long)]
        library: Option<PathBuf>,
        /// Model identifiers to export (default: all).
        models: Vec<String>,
    },
}

pub fn main(command: &FmuCommand) -> i32 {
    match command {
        FmuCommand::Export { out, library, models } => export_main(out, library.as_ref(), models),
    }
}

fn export_main(out: &PathBuf, library: Option<&PathBuf>, models: &[String]) -> i32 {
    let library = match library.cloned().or_else(|| std::env::current_exe().ok().and_then(|e| export::find_library(&e))) {
        Some(l) => l,
        None => {
            eprintln!("morc fmu export: no morc-fmus library beside this executable; run `cargo build` (it builds the workspace member fmus/) or pass --library");
            return exit::USAGE;
        }
    };
    for block in export::EXPORTED {
        if !models.is_empty() && !models.iter().any(|m| m == block.model_identifier) {
            continue;
        }
        match export::package(block, &library, out) {
            Ok(path) => println!("{}", path.display()),
            Err(e) => {
                eprintln!("morc fmu export: {e}");
                return exit::FAULT;
            }
        }
    }
    exit::OK
}

//! `morc rec …`: working with recordings.

use std::path::PathBuf;

use clap::Subcommand;

use super::exit;

#[derive(Subcommand, Debug)]
pub enum RecCommand {
    /// Describe a recording: attributes, datasets (shape, type, unit), the assembly and its timing.
    Info {
        /// The HDF5 file, e.g. runs/2026-05-01/ptp-003.h5
        file: PathBuf,
    },
    /// Measure what a recorder sustains in real time: N f64 signals at a rate, zero loss?
    Bench {
        #[arg(long, default_value_t = 200)]
        signals: usize,
        /// Samples per second.
        #[arg(long, default_value_t = 4000.0)]
        rate: f64,
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Where to write the (temporary) file: the disk you will record to.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
    },
}

pub fn main(cmd: &RecCommand) -> i32 {
    match cmd {
        RecCommand::Info { file } => match crate::record::read::info(file) {
            Ok(text) => {
                print!("{text}");
                exit::OK
            }
            Err(e) => {
                eprintln!("morc rec info: {e}");
                exit::USAGE
            }
        },
        RecCommand::Bench { signals, rate, seconds, dir } => match crate::record::bench::sustained(dir, *signals, *rate, *seconds) {
            Ok(report) => {
                println!("{report}");
                if report.dropped == 0 { exit::OK } else { exit::FAULT }
            }
            Err(e) => {
                eprintln!("morc rec bench: {e}");
                exit::USAGE
            }
        },
    }
}

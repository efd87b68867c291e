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
    }
}

//! `morc rec …`: working with recordings.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::exit;

#[derive(Subcommand, Debug)]
pub enum RecCommand {
    /// Describe a recording: attributes, datasets (shape, type, unit), the assembly and its timing.
    Info {
        /// The recording, HDF5 or MCAP, e.g. runs/2026-05-01/ptp-003.h5
        file: PathBuf,
    },
    /// Mend a recording a crash cut short, or one an older morc left broken, so that any reader
    /// reads it (h5py, Foxglove's mcap); the file as it was is kept as FILE.broken.
    Repair {
        /// The recording, HDF5 or MCAP.
        file: PathBuf,
    },
    /// Convert a recording between HDF5 and MCAP (by the files' extensions: .mcap, else HDF5),
    /// e.g. `morc rec convert runs/ptp-003.h5 ptp-003.mcap`; never replaces a file.
    Convert {
        /// The recording to read.
        from: PathBuf,
        /// The file to write (must not exist).
        to: PathBuf,
    },
    /// Plot signals over time to PNG or SVG: one panel per signal, units on the axes.
    Plot(PlotArgs),
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

/// `morc rec plot` (also `morc plot`).
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// The HDF5 recording.
    pub file: PathBuf,
    /// Signals by name or glob (`robot.q`, `robot.*`, `*.y`); none: every signal.
    pub signals: Vec<String>,
    /// The picture, .png or .svg (default: FILE with .png).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Signals with the same unit share a panel.
    #[arg(long)]
    pub share_units: bool,
    /// Width in pixels.
    #[arg(long, default_value_t = 1200)]
    pub width: u32,
    /// Height of each panel in pixels.
    #[arg(long, default_value_t = 260)]
    pub panel_height: u32,
}

pub fn plot(args: &PlotArgs) -> i32 {
    use morc_record::plot;
    let output = args.output.clone().unwrap_or_else(|| plot::default_output(&args.file));
    let options = plot::PlotOptions { width: args.width, panel_height: args.panel_height, share_units: args.share_units };
    let patterns: Vec<&str> = args.signals.iter().map(String::as_str).collect();
    let draw = || match plot::plot(&args.file, &patterns, &output, &options) {
        Ok(summary) => {
            let panels: Vec<&str> = summary.panels.iter().map(|p| p.0.as_str()).collect();
            println!("{} ({}×{}): {}", summary.output.display(), summary.width, summary.height, panels.join(", "));
            exit::OK
        }
        Err(e) => {
            eprintln!("morc rec plot: {e}");
            exit::USAGE
        }
    };
    isolated(&args.file, "morc rec plot", draw)
}

/// Reads a file from anywhere in a reader process: a damaged file that
/// crashes or hangs the HDF5 library is an error naming it, not a crash.
fn isolated(file: &std::path::Path, command: &str, read: impl FnOnce() -> i32) -> i32 {
    match morc_record::read::isolated(file, morc_record::read::READ_TIMEOUT, read) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{command}: {e}");
            exit::USAGE
        }
    }
}

pub fn main(cmd: &RecCommand) -> i32 {
    match cmd {
        RecCommand::Info { file } => isolated(file, "morc rec info", || match morc_record::read::info(file) {
            Ok(text) => {
                print!("{text}");
                exit::OK
            }
            Err(e) => {
                eprintln!("morc rec info: {e}");
                exit::USAGE
            }
        }),
        RecCommand::Convert { from, to } => isolated(from, "morc rec convert", || match morc_record::convert::convert(from, to) {
            Ok(samples) => {
                println!("{} → {} ({samples} samples)", from.display(), to.display());
                exit::OK
            }
            Err(e) => {
                eprintln!("morc rec convert: {e}");
                exit::USAGE
            }
        }),
        RecCommand::Repair { file } => isolated(file, "morc rec repair", || match morc_record::repair::repair(file) {
            Ok(morc_record::repair::Repair::Whole { samples }) => {
                println!("{} is whole ({samples} samples): nothing to mend", file.display());
                exit::OK
            }
            Ok(morc_record::repair::Repair::Mended { samples, kept }) => {
                println!("{} mended: {samples} samples; the file as it was is {}", file.display(), kept.display());
                exit::OK
            }
            Err(e) => {
                eprintln!("morc rec repair: {e}");
                exit::USAGE
            }
        }),
        RecCommand::Plot(args) => plot(args),
        RecCommand::Bench { signals, rate, seconds, dir } => match morc_record::bench::sustained(dir, *signals, *rate, *seconds) {
            Ok(report) => {
                println!("{report}");
                if report.dropped == 0 {
                    exit::OK
                } else {
                    exit::FAULT
                }
            }
            Err(e) => {
                eprintln!("morc rec bench: {e}");
                exit::USAGE
            }
        },
    }
}

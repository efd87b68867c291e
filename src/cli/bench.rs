//! `morc bench …`: measurements printed beside their floors.

use crate::kernel::engine::EngineConfig;

pub fn main(what: &str, _seconds: f64, _config: &EngineConfig) -> i32 {
    eprintln!("morc bench: unknown benchmark '{what}'");
    super::exit::USAGE
}

//! `morc --live [ADDR]`: the live view (Foxglove WebSocket protocol) served
//! while the program or REPL runs, and log lines sent to it.

/// Starts the live view on `address` and says where; the error is the command line's.
pub fn start(address: &str) -> Result<(), String> {
    let served = morc_live::start(address)?;
    eprintln!("live view on ws://{served} (Foxglove: Open connection → Foxglove WebSocket)");
    if let Some(page) = morc_live::page_address() {
        eprintln!("operator page: http://{page}/");
    }
    Ok(())
}

/// The command line's logger (`env_logger`) that also sends each line it writes to the live view.
pub fn install_logger(inner: env_logger::Logger) {
    let max = inner.filter();
    if log::set_boxed_logger(Box::new(Tee(inner))).is_ok() {
        log::set_max_level(max);
    }
}

struct Tee(env_logger::Logger);

impl log::Log for Tee {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        self.0.enabled(metadata)
    }
    fn log(&self, record: &log::Record) {
        if self.0.matches(record) {
            self.0.log(record);
            morc_live::log_line(record.level(), record.target(), &record.args().to_string());
        }
    }
    fn flush(&self) {
        self.0.flush();
    }
}

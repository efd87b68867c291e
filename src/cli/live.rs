//! `morc --live [ADDR]`: the live view (Foxglove WebSocket protocol) served
//! while the program or REPL runs, and log lines sent to it.

/// Starts the live view on `address` and says where (the page's URL with its token, as Jupyter
/// prints its own) and, off loopback, who can reach both; the error is the command line's.
pub fn start(live: &morc_live::Live, address: &str, token: Option<String>) -> Result<(), String> {
    let served = live.start(address, token)?;
    let Some(access) = live.access() else { return Ok(()) };
    if access.loopback_only() {
        eprintln!("live view on ws://{served} (Foxglove: Open connection → Foxglove WebSocket)");
    } else {
        // Beyond this machine: the URL with the token, without which a client is refused.
        eprintln!("live view on {} (Foxglove: Open connection → Foxglove WebSocket, this URL with its token)", access.live_url());
        eprintln!("morc: warning: {}", morc_live::exposure(&served));
    }
    if let Some(page) = live.page_address() {
        eprintln!("operator page: {}", access.page_url());
        if !access.loopback_only() {
            eprintln!("morc: warning: {}", exposure(&page));
        }
    }
    Ok(())
}

/// Who can reach the page served on `page` ("host:port", not loopback).
fn exposure(page: &str) -> String {
    let host = page.rsplit_once(':').map_or(page, |(h, _)| h).trim_matches(['[', ']']);
    let who = match host.parse::<std::net::IpAddr>() {
        Ok(ip) if ip.is_unspecified() => "from every network this machine is on".to_string(),
        _ => format!("from the network of {host}"),
    };
    format!("the operator page on {page} is reachable {who} over plain HTTP: anyone with the token can move the robot (serve on a trusted lab network only, or on 127.0.0.1 behind an SSH tunnel)")
}

/// The command line's logger (`env_logger`) that also sends each line it writes to the live view `live`.
pub fn install_logger(inner: env_logger::Logger, live: morc_live::Live) {
    let max = inner.filter();
    if log::set_boxed_logger(Box::new(Tee(inner, live))).is_ok() {
        log::set_max_level(max);
    }
}

struct Tee(env_logger::Logger, morc_live::Live);

impl log::Log for Tee {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        self.0.enabled(metadata)
    }
    fn log(&self, record: &log::Record) {
        if self.0.matches(record) {
            self.0.log(record);
            self.1.log_line(record.level(), record.target(), &record.args().to_string());
        }
    }
    fn flush(&self) {
        self.0.flush();
    }
}

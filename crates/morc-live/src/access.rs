//! Who may use the live view and the operator page: one policy for both servers.
//!
//! - **The token.** A secret per process (or the one given with `--live-token`), as Jupyter's: it
//!   is printed in the page's URL (`http://127.0.0.1:8766/?token=…`), every command needs it (the
//!   `X-Morc-Token` header, or the same-site cookie the page sets when opened with it), and off
//!   loopback reading the state needs it too.
//! - **The Host header** must name the address served (a loopback name, an IP literal, or this
//!   machine's host name): a page on `evil.example` whose name a DNS rebinding points at
//!   127.0.0.1 sends `Host: evil.example` and is refused.
//! - **The Origin header**, which browsers send with every command and WebSocket: commands only
//!   from the page's own origin; the live view's WebSocket also from Foxglove's app. A client with
//!   no Origin is not a browser page (a script, Foxglove's desktop app): it needs the token only
//!   where the token is needed anyway.

use std::fmt;
use std::net::IpAddr;

/// The header that carries the token with a command.
pub const TOKEN_HEADER: &str = "X-Morc-Token";
/// The cookie the page sets when it is opened with `?token=…`.
pub const TOKEN_COOKIE: &str = "morc_token";
/// The query parameter that carries the token in a URL (the page's, or the live view's
/// `ws://…/?token=…` for a client that cannot send a header).
pub const TOKEN_QUERY: &str = "token";

/// Foxglove's web app: the origins its WebSocket connections come from.
pub const FOXGLOVE_ORIGINS: &[&str] = &["https://app.foxglove.dev", "https://studio.foxglove.dev"];

/// Why a request is refused (answered 403, nothing done).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The Host header names another address (DNS rebinding), or there is none.
    Host(String),
    /// The request comes from a page of another origin.
    Origin(String),
    /// No token, or a wrong one.
    Token,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Host(h) => write!(f, "the Host header '{h}' does not name this server: open the page by its address (a loopback name or an IP address)"),
            Refusal::Origin(o) => write!(f, "a page from '{o}' may not command the robot: commands come from the operator page itself"),
            Refusal::Token => write!(f, "no token or a wrong one: open the page with the URL morc printed (…/?token=…), or send the token in the {TOKEN_HEADER} header"),
        }
    }
}

/// The access policy of one `morc --live`: its token and the address it serves.
#[derive(Clone, Debug)]
pub struct Access {
    token: String,
    /// The host served on, as given ("127.0.0.1", "0.0.0.0", "::1", a name).
    host: String,
    /// The page's port (commands' Origin must be the page's own).
    page_port: u16,
    /// The live view's port.
    live_port: u16,
}

impl Access {
    /// The policy for serving on `host`, the page on `page_port` and the live view on
    /// `live_port`, with `token` or a new random one.
    pub fn new(host: &str, live_port: u16, page_port: u16, token: Option<String>) -> Result<Access, String> {
        let token = match token {
            Some(t) => {
                check_token(&t)?;
                t
            }
            None => random_token().map_err(|e| format!("live token: cannot read /dev/urandom for a secret: {e}"))?,
        };
        Ok(Access { token, host: host.trim_matches(['[', ']']).to_string(), page_port, live_port })
    }

    /// The secret.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether the address served is reachable only from this machine.
    pub fn loopback_only(&self) -> bool {
        is_loopback_name(&self.host)
    }

    /// The page's URL with the token, as printed for the operator.
    pub fn page_url(&self) -> String {
        format!("http://{}/?{TOKEN_QUERY}={}", authority(&self.display_host(), self.page_port), self.token)
    }

    /// The live view's URL with the token (for clients off loopback).
    pub fn live_url(&self) -> String {
        format!("ws://{}/?{TOKEN_QUERY}={}", authority(&self.display_host(), self.live_port), self.token)
    }

    /// The host a URL names: the one served, or this machine's name when serving on every interface.
    fn display_host(&self) -> String {
        match self.host.parse::<IpAddr>() {
            Ok(ip) if ip.is_unspecified() => hostname().unwrap_or_else(|| "localhost".into()),
            _ => self.host.clone(),
        }
    }

    /// Whether `given` is the token (compared in constant time).
    pub fn token_matches(&self, given: &str) -> bool {
        let (a, b) = (self.token.as_bytes(), given.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }

    /// Checks the Host header of a request to the server on `port`.
    pub fn check_host(&self, host_header: Option<&str>, port: u16) -> Result<(), Refusal> {
        let Some(h) = host_header else { return Err(Refusal::Host(String::new())) };
        let (name, given_port) = split_authority(h).ok_or_else(|| Refusal::Host(h.to_string()))?;
        // A browser leaves the port out for port 80 only.
        let port_ok = given_port.map_or(port == 80, |p| p == port);
        let name_ok = is_loopback_name(name) || name.parse::<IpAddr>().is_ok() || name.eq_ignore_ascii_case(&self.host) || hostname().is_some_and(|n| n.eq_ignore_ascii_case(name));
        if port_ok && name_ok {
            Ok(())
        } else {
            Err(Refusal::Host(h.to_string()))
        }
    }

    /// Whether a request with this Origin may command the robot: none (not a browser page) or the page's own.
    pub fn check_command_origin(&self, origin: Option<&str>, host_header: Option<&str>) -> Result<(), Refusal> {
        match origin {
            None => Ok(()),
            Some(o) if self.is_page_origin(o, host_header) => Ok(()),
            Some(o) => Err(Refusal::Origin(o.to_string())),
        }
    }

    /// Whether a WebSocket with this Origin may connect to the live view: none, the page's or Foxglove's app.
    pub fn check_live_origin(&self, origin: Option<&str>, host_header: Option<&str>) -> Result<(), Refusal> {
        match origin {
            None => Ok(()),
            Some(o) if FOXGLOVE_ORIGINS.contains(&o.trim_end_matches('/')) || self.is_page_origin(o, host_header) => Ok(()),
            Some(o) => Err(Refusal::Origin(o.to_string())),
        }
    }

    /// The page's own origin is `http://` the name the request was sent to (its Host, already
    /// checked) on the page's port.
    fn is_page_origin(&self, origin: &str, host_header: Option<&str>) -> bool {
        let Some(rest) = origin.strip_prefix("http://") else { return false };
        let Some((name, Some(port))) = split_authority(rest) else { return false };
        let same_name = host_header.and_then(split_authority).is_some_and(|(h, _)| h.eq_ignore_ascii_case(name));
        port == self.page_port && same_name
    }

    /// Whether a request may read the state: on loopback anyone may (as any local program could),
    /// elsewhere only with the token.
    pub fn may_read(&self, token: Option<&str>) -> bool {
        self.loopback_only() || token.is_some_and(|t| self.token_matches(t))
    }

    /// Whether a command may act: always with the token.
    pub fn may_command(&self, token: Option<&str>) -> Result<(), Refusal> {
        if token.is_some_and(|t| self.token_matches(t)) {
            Ok(())
        } else {
            Err(Refusal::Token)
        }
    }
}

/// Whether `t` will do as a token given by the operator (`--live-token`): long enough to be a
/// secret, and only characters that go into URLs and cookies as they are.
pub fn check_token(t: &str) -> Result<(), String> {
    if t.len() < 16 {
        return Err(format!("live token: {} characters is too short to be a secret: give 16 or more (or none, for a random one)", t.len()));
    }
    if !t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return Err("live token: use letters, digits, '-' and '_' only (it goes into URLs and cookies)".into());
    }
    Ok(())
}

/// "host:port" for a URL (IPv6 in brackets).
fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A Host header's name and port ("[::1]:8766" → ("::1", Some(8766))).
fn split_authority(h: &str) -> Option<(&str, Option<u16>)> {
    let h = h.trim();
    if let Some(rest) = h.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(p) => Some((name, Some(p.parse().ok()?))),
            None if after.is_empty() => Some((name, None)),
            None => None,
        };
    }
    match h.rsplit_once(':') {
        Some((name, p)) => Some((name, Some(p.parse().ok()?))),
        None => Some((h, None)),
    }
}

fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// This machine's host name.
fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// 32 random bytes from the kernel, as 64 hex digits.
fn random_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> Access {
        Access::new("127.0.0.1", 8765, 8766, None).unwrap()
    }

    #[test]
    fn each_process_has_its_own_secret_and_a_given_one_must_be_one() {
        let (a, b) = (local(), local());
        assert_eq!(a.token().len(), 64);
        assert_ne!(a.token(), b.token());
        assert!(a.token_matches(a.token()) && !a.token_matches(b.token()) && !a.token_matches(""));
        assert!(Access::new("127.0.0.1", 1, 2, Some("short".into())).is_err());
        assert!(Access::new("127.0.0.1", 1, 2, Some("a secret with spaces".into())).is_err());
        assert_eq!(Access::new("127.0.0.1", 1, 2, Some("0123456789abcdef".into())).unwrap().token(), "0123456789abcdef");
        assert!(local().page_url().starts_with("http://127.0.0.1:8766/?token="));
    }

    #[test]
    fn a_rebound_name_is_refused_and_the_served_address_is_not() {
        let a = local();
        for ok in ["127.0.0.1:8766", "localhost:8766", "[::1]:8766"] {
            assert_eq!(a.check_host(Some(ok), 8766), Ok(()), "{ok}");
        }
        for bad in ["evil.example:8766", "127.0.0.1:8765", "evil.example", ""] {
            assert!(a.check_host(Some(bad), 8766).is_err(), "{bad}");
        }
        assert!(a.check_host(None, 8766).is_err());
    }

    #[test]
    fn commands_come_from_the_page_itself_and_the_live_view_also_from_foxglove() {
        let a = local();
        let host = Some("127.0.0.1:8766");
        assert_eq!(a.check_command_origin(Some("http://127.0.0.1:8766"), host), Ok(()));
        assert_eq!(a.check_command_origin(None, host), Ok(()));
        assert!(a.check_command_origin(Some("http://evil.example"), host).is_err());
        assert!(a.check_command_origin(Some("http://localhost:8766"), host).is_err(), "another name is another origin");
        assert!(a.check_command_origin(Some("null"), host).is_err());
        assert_eq!(a.check_live_origin(Some("https://app.foxglove.dev"), Some("127.0.0.1:8765")), Ok(()));
        assert!(a.check_command_origin(Some("https://app.foxglove.dev"), host).is_err());
        assert!(a.check_live_origin(Some("http://evil.example"), Some("127.0.0.1:8765")).is_err());
    }

    #[test]
    fn off_loopback_even_reading_needs_the_token() {
        let local = local();
        assert!(local.loopback_only() && local.may_read(None));
        let lan = Access::new("0.0.0.0", 8765, 8766, None).unwrap();
        assert!(!lan.loopback_only() && !lan.may_read(None) && !lan.may_read(Some("wrong")));
        assert!(lan.may_read(Some(lan.token())));
        assert_eq!(lan.may_command(None), Err(Refusal::Token));
        assert_eq!(local.may_command(Some("wrong")), Err(Refusal::Token));
        assert_eq!(local.may_command(Some(local.token())), Ok(()));
    }
}

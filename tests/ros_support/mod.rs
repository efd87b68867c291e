//! What the ROS 2 tests share: a network of their own, the peers' Python, and their reports.
//!
//! Every ROS 2 test runs morc and its peers in a fresh network namespace holding only the
//! loopback interface, up and multicast-capable (Linux's `lo` is not by default): discovery
//! (SPDP multicast to 239.255.0.1) and data stay on loopback, reach nothing on the lab network,
//! and no other test or ROS 2 node on the machine can be matched. Needs root (`ip netns`), as
//! CI's .ci/run has; where it is missing the test panics saying so, never passes silently.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value as Json;

/// A network namespace with only `lo`, deleted on drop, and the ROS 2 domain its commands use.
pub struct RosNet {
    pub name: String,
    /// ROS_DOMAIN_ID of every command run in it.
    pub domain: u16,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("cannot run `ip` ({e}): install iproute2 (apt-get install iproute2)"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`ip {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

impl RosNet {
    pub fn new(domain: u16) -> RosNet {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        // SAFETY: geteuid takes no arguments, touches no memory of ours and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            panic!("MISSING PRIVILEGE: the ROS 2 tests run on a loopback of their own (a network namespace) and need root, as CI's .ci/run has");
        }
        let name = format!("morc-ros-{}-{}", std::process::id(), COUNT.fetch_add(1, Ordering::Relaxed));
        ip(&["netns", "add", &name]).unwrap_or_else(|e| panic!("MISSING NETWORK NAMESPACES: {e}"));
        let net = RosNet { name, domain };
        let n = net.name.as_str();
        ip(&["-n", n, "link", "set", "lo", "multicast", "on"])
            .and_then(|_| ip(&["-n", n, "link", "set", "lo", "up"]))
            .and_then(|_| ip(&["-n", n, "route", "add", "224.0.0.0/4", "dev", "lo"]))
            .unwrap_or_else(|e| panic!("cannot make loopback multicast-capable in {n}: {e}"));
        net
    }

    /// `program` to be run inside the namespace.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]).env("ROS_DOMAIN_ID", self.domain.to_string());
        c
    }

    /// The morc binary under test, inside the namespace.
    pub fn morc(&self) -> Command {
        self.command(env!("CARGO_BIN_EXE_morc"))
    }

    /// A Python peer from tests/python, inside the namespace; returns once it printed "ready".
    pub fn peer(&self, script: &str, args: &[&str]) -> Child {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python").join(script);
        let mut child = self
            .command(&python())
            .arg(&script)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 with rclpy and cyclonedds (scripts/setup --test)");
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut first).unwrap();
        assert_eq!(first.trim(), "ready", "the peer {script:?} did not start: {}", stderr_of(&mut child));
        child
    }
}

impl Drop for RosNet {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// A scratch folder for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-ros-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn python() -> String {
    std::env::var("MORC_PYTHON").unwrap_or_else(|_| "python3".into())
}

pub fn stderr_of(child: &mut Child) -> String {
    let mut s = String::new();
    if let Some(e) = child.stderr.as_mut() {
        let _ = std::io::Read::read_to_string(e, &mut s);
    }
    s
}

/// The JSON a peer prints as its last line when it ends.
pub fn report(child: Child) -> Json {
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("peer printed {text:?} ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)))
}

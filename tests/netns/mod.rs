//! A fresh network namespace holding a veth pair, for tests that put EtherCAT frames on a
//! (virtual) wire. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_NET_RAW) and `ip` from
//! iproute2; where either is missing, `Netns::create` panics saying so: these tests never
//! pass silently. Everything is created inside the namespace and removed on drop.

use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Netns {
    pub name: String,
    /// The master's end and the segment's end of the veth pair.
    pub master_if: String,
    pub segment_if: String,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("cannot run `ip` ({e}): install iproute2 (apt-get install iproute2)"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`ip {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

impl Netns {
    pub fn create() -> Netns {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        // SAFETY: geteuid takes no arguments, touches no memory of ours and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            panic!("MISSING PRIVILEGE: this network test needs root (network namespaces, veth, raw sockets); run it as root, as CI's .ci/run does");
        }
        let name = format!("morc-ecat-{}-{}", std::process::id(), COUNT.fetch_add(1, Ordering::Relaxed));
        if let Err(e) = ip(&["netns", "add", &name]) {
            panic!("MISSING NETWORK NAMESPACES: cannot create one: {e}");
        }
        let ns = Netns { name, master_if: "ecat-master".into(), segment_if: "ecat-segment".into() };
        let n = ns.name.as_str();
        let setup = ip(&["-n", n, "link", "add", &ns.master_if, "type", "veth", "peer", "name", &ns.segment_if])
            .and_then(|_| ip(&["-n", n, "link", "set", &ns.master_if, "up"]))
            .and_then(|_| ip(&["-n", n, "link", "set", &ns.segment_if, "up"]));
        if let Err(e) = setup {
            panic!("MISSING VETH SUPPORT: {e}");
        }
        // `ip link set up` returns before the pair's carrier is on (the kernel reports it later,
        // later still on a loaded machine); frames sent before are dropped. Wait for both ends.
        for interface in [&ns.master_if, &ns.segment_if] {
            ns.wait_for_carrier(interface);
        }
        ns
    }

    /// Waits until `interface` is up with its carrier on (`LOWER_UP`); panics after 30 s.
    pub fn wait_for_carrier(&self, interface: &str) {
        let start = std::time::Instant::now();
        loop {
            let out = Command::new("ip").args(["-n", &self.name, "-o", "link", "show", interface]).output().expect("run ip");
            let flags = String::from_utf8_lossy(&out.stdout).into_owned();
            if flags.contains("LOWER_UP") && flags.contains("state UP") {
                return;
            }
            assert!(start.elapsed() < std::time::Duration::from_secs(30), "{interface} in {}: no carrier 30 s after `ip link set up`: {flags}", self.name);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Moves the calling thread into the namespace (threads it starts afterwards follow).
    pub fn enter(&self) {
        let f = std::fs::File::open(format!("/var/run/netns/{}", self.name)).unwrap_or_else(|e| panic!("open netns {}: {e}", self.name));
        // SAFETY: a valid namespace fd; only this thread's network namespace changes.
        let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns into {}: {}", self.name, std::io::Error::last_os_error());
    }

    /// Sets `interface` up or down (`ip link set … up|down` in the namespace).
    #[allow(dead_code)]
    pub fn set_link(&self, interface: &str, up: bool) {
        if let Err(e) = ip(&["-n", &self.name, "link", "set", interface, if up { "up" } else { "down" }]) {
            panic!("{e}");
        }
    }

    /// `cmd args…` run inside the namespace.
    pub fn command(&self, cmd: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, cmd]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting the namespace removes the veth pair with it.
        let _ = ip(&["netns", "del", &self.name]);
    }
}

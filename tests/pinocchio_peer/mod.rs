//! Pinocchio (`pip install pin`, which `scripts/setup --test` installs) as a peer at test time:
//! runs a Python script that imports it and returns what the script printed.

use std::process::Command;

/// The output of `script` run by python3, or None (said on stdout) when there is no python3 or
/// Pinocchio is not importable; a script that fails otherwise fails the test.
pub fn run(script: &str) -> Option<Vec<u8>> {
    match Command::new("python3").arg("-c").arg(script).output() {
        Ok(o) if o.status.success() => Some(o.stdout),
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr);
            if why.contains("No module named") {
                println!("Pinocchio is not importable (python3 -c 'import pinocchio'); install it with scripts/setup --test to cross-check");
                return None;
            }
            panic!("the Pinocchio script failed: {why}");
        }
        Err(e) => {
            println!("no python3 ({e}): Pinocchio cross-check skipped");
            None
        }
    }
}

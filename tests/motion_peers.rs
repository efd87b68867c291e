//! morc's time-optimal planning against the planners labs use, as `morc bench topp` runs it:
//! TOPP-RA against `toppra` (PyPI, the method's reference implementation) on random UR5 spline
//! paths, with velocity and acceleration limits and with torque limits (toppra gets Pinocchio's
//! RNEA of the same URDF); the jerk-limited PTP against `ruckig`. Durations must agree: TOPP
//! within 0.5 % (the bound; they agree far closer), the PTP exactly where ruckig keeps the
//! straight line. Compute times are printed by the bench, not checked here.

use std::process::Command;

#[test]
fn time_optimal_paths_and_ptp_profiles_agree_with_toppra_and_ruckig() {
    let out = Command::new(env!("CARGO_BIN_EXE_morc")).args(["bench", "topp"]).output().expect("run morc");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "morc bench topp failed (the peers toppra, ruckig and pin come with scripts/setup --test):\n{text}");
    println!("{text}");

    // Both TOPP configurations: "durations within X %".
    let within: Vec<f64> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("topp vs toppra"))
        .map(|l| {
            let x = l.split("durations within ").nth(1).and_then(|r| r.split(' ').next()).unwrap_or_else(|| panic!("no duration figure in: {l}"));
            x.parse().unwrap_or_else(|_| panic!("not a number '{x}' in: {l}"))
        })
        .collect();
    assert_eq!(within.len(), 3, "two configurations and the summary line:\n{text}");
    for x in &within {
        assert!(*x <= 0.5, "a duration differs from toppra's by {x} % (at most 0.5 %):\n{text}");
    }
    // Every case of 10 per configuration was compared.
    let rows = text.lines().filter(|l| l.split_whitespace().next().is_some_and(|w| w.parse::<usize>().is_ok()) && l.contains(" ms")).count();
    assert_eq!(rows, 20, "20 TOPP cases:\n{text}");

    // The PTP: the same duration as ruckig's straight line, or ruckig left the line.
    let ptp = text.lines().find(|l| l.contains("phase synchronisation")).expect("the PTP line");
    assert!(ptp.ends_with("; 0 other"), "every PTP case explained: {ptp}");
    let same: usize = ptp.split("(to 1e-9) in ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()).expect("count");
    assert!(same >= 50, "ruckig's straight line should take morc's time in most cases: {ptp}");
    // Time synchronisation may be faster than the line, never slower.
    let ratio = text.lines().find(|l| l.contains("time synchronisation (each joint")).expect("the ratio line");
    let mean: f64 = ratio.split("ratio mean ").nth(1).and_then(|r| r.split(',').next()).and_then(|n| n.parse().ok()).expect("mean");
    assert!((1.0..1.2).contains(&mean), "morc's straight line against ruckig's free shapes: {ratio}");
    assert!(text.trim_end().lines().last().unwrap().starts_with("topp vs toppra ("), "the summary is the last line:\n{text}");
}

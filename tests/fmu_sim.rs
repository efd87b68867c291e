//! `morc fmu sim` against `fmpy simulate` on the same FMU, inputs and
//! parameters: the same CSV layout (header, columns, rows, number format)
//! and the same values (to 1e-12: FMPy's time is a running sum).

mod fmu_support;

use std::path::Path;

use fmu_support::*;

/// Same header; same number of rows; each cell equal as text or within 1e-12.
fn assert_same_csv(morc: &Path, fmpy: &Path) {
    let (m, f) = (std::fs::read_to_string(morc).unwrap(), std::fs::read_to_string(fmpy).unwrap());
    let (m, f): (Vec<&str>, Vec<&str>) = (m.lines().collect(), f.lines().collect());
    assert_eq!(m[0], f[0], "headers differ");
    assert_eq!(m.len(), f.len(), "row counts differ");
    let mut exact = 0;
    for (k, (a, b)) in m.iter().zip(&f).enumerate().skip(1) {
        for (x, y) in a.split(',').zip(b.split(',')) {
            if x == y {
                exact += 1;
                continue;
            }
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!((x - y).abs() <= 1e-12 * (1.0 + y.abs()), "row {k}: morc {a} vs FMPy {b}");
        }
    }
    // Most cells are the same text: the number format is FMPy's.
    assert!(exact * 2 > (m.len() - 1) * m[0].split(',').count(), "only {exact} cells equal as text");
}

#[test]
fn morc_fmu_sim_writes_what_fmpy_simulate_writes() {
    let dir = scratch().join("sim");
    std::fs::create_dir_all(&dir).unwrap();
    // A continuous input given at a few points: both interpolate linearly between them.
    let input = dir.join("in.csv");
    std::fs::write(&input, "\"time\",\"u\"\n0,0\n0.1,1\n0.25,-0.5\n0.4,0.5\n").unwrap();
    for fmu in [fmu_path("morc_bessel"), fmu3_path("morc_bessel")] {
        let (m, f) = (dir.join("morc.csv"), dir.join("fmpy.csv"));
        morc_ok(&fmu, &["--stop", "0.5", "--step", "0.001", "--param", "fc=20", "--input", input.to_str().unwrap()], &m);
        fmpy_sim(&fmu, &["--stop-time", "0.5", "--output-interval", "0.001", "--start-values", "fc", "20", "--input-file", input.to_str().unwrap()], &f);
        assert_same_csv(&m, &f);
    }
    // No inputs, booleans and integers absent: the trajectory with its default experiment (2 s, 1 ms).
    let traj = fmu_path("morc_trajectory");
    let (m, f) = (dir.join("morc-traj.csv"), dir.join("fmpy-traj.csv"));
    morc_ok(&traj, &["--param", "q1=0.7"], &m);
    fmpy_sim(&traj, &["--start-values", "q1", "0.7"], &f);
    assert_same_csv(&m, &f);
}

//! Cost per step (set inputs, step, get outputs) of an FMU: through morc's
//! FMU component (stepped on the caller's thread, as a task steps it),
//! through a plain loop calling the FMU's C functions (the floor), and
//! through FMPy's low-level API.
//! Run: cargo test --release --test fmu_bench -- --ignored --nocapture

mod fmu_support;

use std::time::Instant;

use fmu_support::*;
use morc_fmi::fmi2;
use morc_fmi::instance::{Instance as _, Interface};
use morc_kernel::AssemblyData;
use morc_kernel::Value;
use morc_kernel::{InitContext, StepContext};

const STEPS: usize = 200_000;
const ROUNDS: usize = 5;

#[test]
#[ignore = "benchmark: prints numbers"]
fn cost_per_step() {
    let path = fmu_path("morc_bessel");
    // morc's FMU component, stepped directly (what a task does each tick).
    let mut c = morc_fmi::factory(&path).unwrap()().unwrap();
    c.configure().unwrap();
    let mut outputs = vec![Value::Real(0.0)];
    let data = AssemblyData::new();
    c.initialize(&InitContext { name: "bench", period: 1e-3, base_period: 1e-3, data: &data, thread: &Default::default(), base_latency: 0 }, &mut outputs)
        .unwrap();
    // The floor: the same FMU's C functions called straight through their pointers, on this thread.
    let fmu = morc_fmi::Fmu::open(&path).unwrap();
    let binary = fmu.binary("morc_bessel").unwrap();
    let mut i = fmi2::Instance::new(&fmu, &binary, Interface::CoSimulation, "floor", false).unwrap();
    i.enter_initialization_mode(0.0).unwrap();
    i.exit_initialization_mode().unwrap();
    let (api, handle) = (i.api(), i.handle());
    let (set, step, get) = (api.set_real.unwrap(), api.do_step.unwrap(), api.get_real.unwrap());
    let (u, y) = ([0u32], [1u32]);
    let mut out = [0.0];
    // The block checks that doStep's time is its own: count its steps.
    let mut floor_steps = 0u64;

    // Alternate rounds of both loops and keep each one's best: the first
    // loop to run would otherwise pay for cold caches and a CPU still
    // raising its clock, and a loaded machine adds noise to any one round.
    let mut inputs = vec![Value::Real(0.0)];
    let (mut component_ns, mut floor_ns) = (f64::INFINITY, f64::INFINITY);
    let mut k = 0usize;
    for _round in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..STEPS {
            inputs[0] = Value::Real((k as f64 * 1e-3).sin());
            c.step(&StepContext { step: k as u64, time: k as f64 * 1e-3, period: 1e-3 }, &inputs, &mut outputs);
            k += 1;
        }
        component_ns = component_ns.min(start.elapsed().as_nanos() as f64 / STEPS as f64);
        let start = Instant::now();
        for j in 0..STEPS {
            let x = (j as f64 * 1e-3).sin();
            // SAFETY: a live instance; one value behind each pointer.
            let s = unsafe { set(handle, u.as_ptr(), 1, &x) | step(handle, floor_steps as f64 * 1e-3, 1e-3, 1) | get(handle, y.as_ptr(), 1, out.as_mut_ptr()) };
            floor_steps += 1;
            assert_eq!(s, 0);
        }
        floor_ns = floor_ns.min(start.elapsed().as_nanos() as f64 / STEPS as f64);
    }

    // FMPy's low-level API on the same FMU.
    let script = r#"
import sys, time, math
from fmpy import read_model_description, extract
from fmpy.fmi2 import FMU2Slave
path, steps = sys.argv[1], int(sys.argv[2])
md = read_model_description(path)
d = extract(path)
f = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier, instanceName='b')
f.instantiate(); f.setupExperiment(startTime=0.0); f.enterInitializationMode(); f.exitInitializationMode()
t0 = time.perf_counter()
for k in range(steps):
    f.setReal([0], [math.sin(k * 1e-3)]); f.doStep(k * 1e-3, 1e-3); f.getReal([1])
print((time.perf_counter() - t0) / steps * 1e9)
"#;
    let fmpy_steps = STEPS / 10;
    let out = std::process::Command::new("python3").args(["-c", script, path.to_str().unwrap(), &fmpy_steps.to_string()]).output();
    let fmpy_ns = out.ok().and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse::<f64>().ok());
    println!("cost per step of morc_bessel.fmu (set input, doStep, get output), {STEPS} steps:");
    println!("  plain loop over the C functions (floor): {floor_ns:8.0} ns");
    println!("  morc FMU component:                      {component_ns:8.0} ns");
    match fmpy_ns {
        Some(ns) => println!("  FMPy low-level API:                      {ns:8.0} ns"),
        None => println!("  FMPy low-level API: not measured (python3 -m pip install fmpy)"),
    }
}

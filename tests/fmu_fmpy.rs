//! FMPy, the reference Python importer, validates every FMU morc exports and
//! simulates it with the same results as the native block in morc.
//! Needs python3 with FMPy: `python3 -m pip install fmpy`. Without it these
//! tests fail and say so: they never pass silently.

mod fmu_support;

use std::path::Path;
use std::process::Command;

use fmu_support::*;
use morc_kernel::AssemblyData;
use morc_kernel::Value;
use morc_kernel::{Component, InitContext, StepContext};

const INSTALL: &str = "install FMPy for these tests: python3 -m pip install fmpy";

fn python(args: &[&str]) -> String {
    let out = Command::new("python3").args(args).output().unwrap_or_else(|e| panic!("cannot run python3 ({e}); install Python 3 and then: {INSTALL}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'fmpy'") || stderr.contains("No module named fmpy") {
        panic!("FMPy is missing; {INSTALL}");
    }
    assert!(out.status.success(), "python3 {:?} failed:\n{stderr}", &args[..args.len().min(2)]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn fmpy_validates_every_exported_fmu() {
    for block in morc_fmi::export::EXPORTED {
        for path in [fmu_path(block.model_identifier), fmu3_path(block.model_identifier)] {
            let out = python(&["-m", "fmpy", "validate", path.to_str().unwrap()]);
            assert!(out.contains("No problems found"), "{}: fmpy validate says:\n{out}", path.display());
        }
    }
}

/// FMPy simulates with `h` steps (inputs given per step); returns each
/// output's values at t = 0, h, 2h, … as they were bit for bit.
const SIMULATE: &str = r#"
import sys, json
import numpy as np
from fmpy import simulate_fmu
cfg = json.loads(sys.argv[1])
h, n = cfg['h'], cfg['n']
inputs = None
if cfg['inputs']:
    names = list(cfg['inputs'])
    dtype = [('time', np.float64)] + [(k, np.float64) for k in names]
    rows = [tuple([k * h] + [cfg['inputs'][m][min(k, n - 1)] for m in names]) for k in range(n + 1)]
    inputs = np.array(rows, dtype=dtype)
result = simulate_fmu(cfg['fmu'], stop_time=n * h, step_size=h, output_interval=h,
                      start_values=cfg['params'], input=inputs, output=cfg['outputs'],
                      fmi_type=cfg.get('fmi_type'), solver=cfg.get('solver', 'CVode'))
bits = {o: np.ascontiguousarray(result[o], dtype=np.float64).view(np.uint64).tolist() for o in cfg['outputs']}
print(json.dumps(bits))
"#;

/// One comparison: native block vs FMPy on the exported FMU.
fn compare(kind: &str, model: &str, params: &[(&str, Value)], inputs: &[(&str, Vec<f64>)], exact: bool) {
    let block = morc_kernel::registry::create(kind).unwrap();
    compare_with(block, &fmu_path(model), params, inputs, &serde_json::json!({}), exact);
}

/// Steps `component` (with `params`) n times directly and FMPy simulates
/// `fmu` with the same parameters and inputs (`fmpy` adds simulate_fmu
/// options: fmi_type, solver); their outputs must agree, to the bit if `exact`.
fn compare_with(mut block: Box<dyn Component>, fmu: &Path, params: &[(&str, Value)], inputs: &[(&str, Vec<f64>)], fmpy: &serde_json::Value, exact: bool) {
    let h = 1e-3;
    let n = inputs.first().map_or(1500, |(_, v)| v.len());
    let model = fmu.file_name().unwrap().to_string_lossy().into_owned();
    for (p, v) in params {
        block.set_parameter(p, v).unwrap();
    }
    block.configure().unwrap();
    let info = block.info().clone();
    let mut outputs: Vec<Value> = info.outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let data = AssemblyData::new();
    block
        .initialize(&InitContext { name: "native", period: h, base_period: h, data: &data, thread: &Default::default(), base_latency: 0 }, &mut outputs)
        .unwrap();
    let mut native: Vec<Vec<f64>> = vec![outputs.iter().map(Value::real).collect()];
    let mut input_values: Vec<Value> = info.inputs.iter().map(|p| Value::zero(p.ty)).collect();
    for k in 0..n {
        for (name, values) in inputs {
            input_values[info.input_index(name).unwrap()] = Value::Real(values[k]);
        }
        block.step(&StepContext { step: k as u64, time: k as f64 * h, period: h }, &input_values, &mut outputs);
        native.push(outputs.iter().map(Value::real).collect());
    }
    // FMPy.
    let to_json = |v: &Value| match v {
        Value::Real(x) => serde_json::json!(x),
        Value::Integer(i) => serde_json::json!(i),
        Value::Boolean(b) => serde_json::json!(b),
        Value::String(s) => serde_json::json!(s),
        Value::Vector(v) => serde_json::json!(v),
        Value::List(_) | Value::Record(_) => unreachable!("the exported blocks have no list or record parameters"),
    };
    let output_names: Vec<&str> = info.outputs.iter().map(|p| p.name.as_str()).collect();
    // Only the FMU's own variables go to FMPy (not morc's import options such as "interface").
    let fmu_params: serde_json::Map<_, _> = params.iter().filter(|(p, _)| !["interface", "me_solver", "me_substeps"].contains(p)).map(|(p, v)| (p.to_string(), to_json(v))).collect();
    let mut cfg = serde_json::json!({
        "fmu": fmu.to_str().unwrap(),
        "h": h,
        "n": n,
        "params": fmu_params,
        "inputs": inputs.iter().map(|(p, v)| (p.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
        "outputs": output_names,
    });
    for (k, v) in fmpy.as_object().unwrap() {
        cfg[k] = v.clone();
    }
    let out = python(&["-c", SIMULATE, &cfg.to_string()]);
    // FMPy may print warnings first (an unconnected input): the JSON is the last line.
    let last = out.lines().last().unwrap_or_default();
    let fmpy: serde_json::Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {}", &out[..out.len().min(500)]));
    for (j, name) in output_names.iter().enumerate() {
        let column: Vec<f64> = fmpy[name].as_array().unwrap().iter().map(|b| f64::from_bits(b.as_u64().unwrap())).collect();
        assert_eq!(column.len(), n + 1, "{model}.{name}: FMPy rows");
        // FMPy's row at t_k holds the outputs after doStep(t_(k−1)): morc's step k − 1.
        for (k, (fmpy_value, native_row)) in column.iter().zip(&native).enumerate() {
            let native_value = native_row[j];
            if exact {
                assert_eq!(fmpy_value.to_bits(), native_value.to_bits(), "{model}.{name} at row {k}: FMPy {fmpy_value} vs morc {native_value}");
            } else {
                let tolerance = 1e-12 * (1.0 + native_value.abs());
                assert!((fmpy_value - native_value).abs() <= tolerance, "{model}.{name} at row {k}: FMPy {fmpy_value} vs morc {native_value}");
            }
        }
    }
}

fn sine(n: usize, amplitude: f64, hz: f64) -> Vec<f64> {
    (0..n).map(|k| amplitude * (std::f64::consts::TAU * hz * k as f64 * 1e-3).sin()).collect()
}

#[test]
fn fmpy_simulates_the_trajectory_and_the_arm_exactly_like_morc() {
    let r = Value::Real;
    // No inputs, or constant ones: the arithmetic is the same code, so the results are the same bits.
    compare("trajectory", "morc_trajectory", &[("q0", r(-0.5)), ("q1", r(1.0)), ("start", r(0.2)), ("duration", r(0.9))], &[], true);
    compare("arm", "morc_arm", &[("q0", r(0.3)), ("friction", r(0.05)), ("substeps", Value::Integer(3))], &[("tau", vec![0.7; 1500])], true);
}

#[test]
fn fmpy_simulates_the_filter_and_controllers_like_morc() {
    let r = Value::Real;
    // FMPy interpolates inputs at its own (summed) times: equal to about 1e-12.
    let n = 800;
    compare("bessel", "morc_bessel", &[("fc", r(15.0)), ("order", Value::Integer(5))], &[("u", sine(n, 1.0, 7.0))], false);
    compare(
        "pid",
        "morc_pid",
        &[("kp", r(2.0)), ("ki", r(5.0)), ("kd", r(0.01)), ("tf", r(0.01)), ("umax", r(1.0)), ("antiwindup", Value::String("clamp".into()))],
        &[("r", sine(n, 1.0, 2.0)), ("y", sine(n, 0.5, 3.0))],
        false,
    );
    compare(
        "ppi",
        "morc_ppi",
        &[("kp", r(10.0)), ("kv", r(1.5)), ("ki", r(8.0)), ("umin", r(-2.0)), ("umax", r(2.0))],
        &[("q_ref", sine(n, 1.0, 1.0)), ("qd_ref", sine(n, 0.3, 1.0)), ("q", sine(n, 0.9, 1.1)), ("qd", sine(n, 0.2, 0.7))],
        false,
    );
}

#[test]
fn fmpy_simulates_the_fmi3_exports_like_morc() {
    let r = Value::Real;
    let native = |kind: &str| morc_kernel::registry::create(kind).unwrap();
    let none = serde_json::json!({});
    compare_with(native("trajectory"), &fmu3_path("morc_trajectory"), &[("q0", r(-0.5)), ("q1", r(1.0)), ("start", r(0.2)), ("duration", r(0.9))], &[], &none, true);
    compare_with(native("arm"), &fmu3_path("morc_arm"), &[("q0", r(0.3)), ("friction", r(0.05)), ("substeps", Value::Integer(3))], &[("tau", vec![0.7; 1500])], &none, true);
    compare_with(native("bessel"), &fmu3_path("morc_bessel"), &[("fc", r(15.0)), ("order", Value::Integer(5))], &[("u", sine(800, 1.0, 7.0))], &none, false);
}

/// Model exchange: morc's explicit Euler on the arm's ODE against FMPy's
/// Euler on the same FMU (FMI 2 and 3), with a constant torque. FMPy's step
/// is its time difference (a running sum): equal to about 1e-12.
#[test]
fn fmpy_euler_on_the_arm_model_exchange_agrees_with_morc() {
    let r = Value::Real;
    let params = [("interface", Value::String("me".into())), ("me_solver", Value::String("euler".into())), ("q0", r(0.5)), ("friction", r(0.3))];
    for path in [fmu_path("morc_arm"), fmu3_path("morc_arm")] {
        let morc = morc_fmi::factory(&path).unwrap()().unwrap();
        let fmpy = serde_json::json!({ "fmi_type": "ModelExchange", "solver": "Euler" });
        compare_with(morc, &path, &params, &[("tau", vec![0.4; 1000])], &fmpy, false);
    }
}

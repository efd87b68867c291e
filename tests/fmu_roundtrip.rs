//! Export → import round trip: each morc block exported as an FMU and run
//! back in morc as an FMU component gives exactly what the native block
//! gives in the same assembly, at several rates and on both clocks.

mod fmu_support;

use fmu_support::*;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::Outcome;
use morc_kernel::Value;

fn r(x: f64) -> Value {
    Value::Real(x)
}

/// Which blocks of the loop are FMUs.
#[derive(Clone, Copy, PartialEq)]
enum Blocks {
    Native,
    Fmi2,
    Fmi3,
    /// Native blocks but the arm: its FMI 2 export in model exchange, RK4 in morc.
    ArmModelExchange,
}

/// A position loop on the arm: trajectory (every 5) → ppi → arm (delayed
/// back), the measured q through a Bessel filter and a PID on the filtered
/// error.
fn position_loop(blocks: Blocks) -> AssemblySpec {
    let fmu = blocks == Blocks::Fmi2 || blocks == Blocks::Fmi3;
    let mut a = AssemblySpec::new(if fmu { "fmu loop" } else { "native loop" });
    a.duration = Some(1.5);
    let add = |a: &mut AssemblySpec, name: &str, kind: &str, model: &str, every: u32, params: &[(&str, Value)]| {
        let mut params = params.to_vec();
        match blocks {
            Blocks::ArmModelExchange if kind == "arm" => {
                // The arm's own `substeps` is its co-simulation RK4; morc's solver takes me_substeps.
                params.retain(|(p, _)| *p != "substeps");
                params.extend([("interface", Value::String("me".into())), ("me_solver", Value::String("rk4".into())), ("me_substeps", Value::Integer(2))]);
                add_fmu(a, name, &fmu_path(model), every, &params);
            }
            Blocks::Fmi2 | Blocks::Fmi3 => {
                params.push(("sample_period", r(f64::from(every) * T)));
                let path = if blocks == Blocks::Fmi2 { fmu_path(model) } else { fmu3_path(model) };
                add_fmu(a, name, &path, every, &params);
            }
            _ => {
                a.add_native(name, kind, every, &params);
            }
        }
    };
    add(&mut a, "traj", "trajectory", "morc_trajectory", 5, &[("q0", r(0.0)), ("q1", r(1.2)), ("start", r(0.1)), ("duration", r(0.8))]);
    add(&mut a, "ctrl", "ppi", "morc_ppi", 1, &[("kp", r(30.0)), ("kv", r(2.0)), ("ki", r(20.0)), ("umin", r(-15.0)), ("umax", r(15.0))]);
    add(&mut a, "arm", "arm", "morc_arm", 1, &[("friction", r(0.2)), ("substeps", Value::Integer(2))]);
    add(&mut a, "filter", "bessel", "morc_bessel", 1, &[("fc", r(20.0)), ("order", Value::Integer(4))]);
    add(&mut a, "pid", "pid", "morc_pid", 2, &[("kp", r(2.0)), ("ki", r(5.0)), ("kd", r(0.01)), ("tf", r(0.01)), ("umax", r(1.0)), ("antiwindup", Value::String("clamp".into()))]);
    a.connect("traj.q", "ctrl.q_ref")
        .connect("traj.qd", "ctrl.qd_ref")
        .connect_delayed("arm.q", "ctrl.q")
        .connect_delayed("arm.qd", "ctrl.qd")
        .connect("ctrl.tau", "arm.tau")
        .connect("arm.q", "filter.u")
        .connect("traj.q", "pid.r")
        .connect("filter.y", "pid.y");
    for (p, from) in [("p_q", "arm.q"), ("p_qd", "arm.qd"), ("p_tau", "ctrl.tau"), ("p_ref", "traj.q"), ("p_f", "filter.y"), ("p_u", "pid.u")] {
        probe(&mut a, p, from);
    }
    a
}

const PROBES: [&str; 6] = ["p_q", "p_qd", "p_tau", "p_ref", "p_f", "p_u"];

#[test]
fn every_exported_block_equals_the_native_block_bit_for_bit() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for blocks in [Blocks::Fmi2, Blocks::Fmi3, Blocks::ArmModelExchange] {
        same_as_native(blocks);
    }
}

/// The loop with `blocks` as FMUs gives the native loop's bits.
fn same_as_native(blocks: Blocks) {
    let native = run(&position_loop(Blocks::Native), ClockKind::Virtual);
    let fmu = run(&position_loop(blocks), ClockKind::Virtual);
    assert_eq!(native.outcome, Outcome::Finished("duration".into()), "{}", native.report());
    assert_eq!(fmu.outcome, Outcome::Finished("duration".into()), "{}", fmu.report());
    for p in PROBES {
        let (x, y) = (samples(&native, p), samples(&fmu, p));
        assert_eq!(x.len(), 1500, "{p}");
        assert_eq!(bits(&x), bits(&y), "{p}: FMU and native differ ({})", fmu.report());
    }
    // The loop did something: the arm followed the move to 1.2 rad.
    let q = samples(&fmu, "p_q");
    assert!((q[1499] - 1.2).abs() < 0.05, "arm ends at {}", q[1499]);
    assert!(samples(&fmu, "p_u").iter().any(|u| *u != 0.0));
}

/// The wall-clock run must not compete for the 2 cores of a CI machine with the other tests of
/// this binary, which run in parallel: they take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn fmus_at_mixed_rates_give_identical_results_on_virtual_and_wall_clocks() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // A 4 ms base period (both runs): a debug build's FMU steps on a shared VM stay well
    // inside it, so a clean wall-clock run is the rule rather than luck.
    const PERIOD: f64 = 0.004;
    let virtual_run = run_at(&position_loop(Blocks::Fmi2), ClockKind::Virtual, PERIOD);
    // Bit-identity is promised for runs without overruns; a shared VM can
    // stall a thread past a deadline now and then, so take the first of five
    // wall-clock runs that had none.
    let wall_run = (0..5)
        .map(|_| run_at(&position_loop(Blocks::Fmi2), ClockKind::Wall, PERIOD))
        .find(|r| r.components.iter().all(|c| c.overruns == 0))
        .expect("every one of five wall-clock runs overran: the machine is too loaded to compare");
    assert!(wall_run.outcome.is_ok(), "{}", wall_run.report());
    for p in PROBES {
        assert_eq!(bits(&samples(&virtual_run, p)), bits(&samples(&wall_run, p)), "{p}: virtual and wall clock differ");
    }
}

#[test]
fn fmu_component_describes_itself_from_the_model_description() {
    let factory = morc_fmi::factory(&fmu_path("morc_pid")).unwrap();
    let c = factory().unwrap();
    let info = c.info();
    assert_eq!(info.kind, "morc_pid");
    let inputs: Vec<&str> = info.inputs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(inputs, ["r", "y", "ff"]);
    assert_eq!(info.outputs[0].name, "u");
    assert_eq!(info.param_value("antiwindup"), Some(&Value::String("backcalc".into())));
    assert_eq!(info.param_value("umin"), Some(&Value::Real(f64::NEG_INFINITY)));
    assert_eq!(info.param_value("sample_period"), Some(&Value::Real(0.001)));
    let arm = morc_fmi::factory(&fmu_path("morc_arm")).unwrap()().unwrap();
    let tau = &arm.info().inputs[0];
    assert_eq!((tau.name.as_str(), tau.unit.as_str()), ("tau", "N.m"));
}

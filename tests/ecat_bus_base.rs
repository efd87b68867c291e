//! The bus as the engine's base, over the in-process transport and the simulated segment:
//! bring-up to Op, drives switched on, commands moving the simulated drives through
//! ethercrab, hold, digital I/O, and the virtual clock making it all deterministic.

use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::master::Link;
use morc_ecat::transport::lock;
use morc_ecat::virtual_bus::{shared_sim_segment, SimSegmentConfig};
use morc_ecat_sim::{Cia402Drive, DigitalInputs, DigitalOutputs};
use morc_kernel::Base;
use morc_kernel::Step;
use morc_kernel::Value;

fn open(drives: usize) -> (BusBase, morc_ecat::transport::SharedSegment) {
    let seg = shared_sim_segment(&SimSegmentConfig { drives, ..Default::default() }).unwrap();
    let base = BusBase::open(Link::Simulated(seg.clone()), BusConfig::default()).expect("bus base");
    (base, seg)
}

fn zero_outputs(base: &BusBase) -> Vec<Value> {
    base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect()
}
fn zero_inputs(base: &BusBase) -> Vec<Value> {
    base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect()
}

#[test]
fn ports_follow_the_devices_found() {
    let (base, _seg) = open(6);
    let outs: Vec<(String, String)> = base.info().outputs.iter().map(|p| (p.name.clone(), p.ty.to_string())).collect();
    let ins: Vec<(String, String)> = base.info().inputs.iter().map(|p| (p.name.clone(), p.ty.to_string())).collect();
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(outs, [s("q", "vector[6]"), s("qd", "vector[6]"), s("tau", "vector[6]"), s("enabled", "boolean"), s("din8", "integer")]);
    assert_eq!(ins, [s("q_cmd", "vector[6]"), s("dout7", "integer"), s("tau_ff", "vector[6]")]);
    let names: Vec<&str> = base.bus().devices().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names[0], "SIM-COUPLER");
    assert_eq!(names[7..], ["SIM-DO8", "SIM-DI8"]);
    assert_eq!(base.bus().expected_working_counter(), 6 * 3 + 2 + 1);
    assert_eq!(base.name(), "robot");
}

#[test]
fn commands_move_the_simulated_drives_and_hold_keeps_them() {
    let (mut base, seg) = open(2);
    let mut outputs = zero_outputs(&base);
    let mut inputs = zero_inputs(&base);
    assert_eq!(base.sense(0, &mut outputs), Step::Continue);
    assert_eq!(outputs[3], Value::Boolean(true), "drives switched on at open");
    // Ramp joint 0 to 0.5 rad and joint 1 to -0.2 rad at 1 rad/s, digital outputs 0b101.
    let mut tick = 1;
    for k in 0..1000 {
        let t = (k as f64 * 0.001).min(0.5);
        inputs[0] = Value::Vector(vec![t, -t.min(0.2)]);
        inputs[1] = Value::Integer(0b101);
        assert_eq!(base.actuate(tick, Some(morc_kernel::Commands::all(&inputs))), Step::Continue);
        tick += 1;
        assert_eq!(base.sense(tick, &mut outputs), Step::Continue, "{:?}", base.fault());
    }
    let q = outputs[0].as_slice().to_vec();
    assert!((q[0] - 0.5).abs() < 1e-5 && (q[1] + 0.2).abs() < 1e-5, "{q:?}");
    {
        let s = lock(&seg);
        assert_eq!(s.device(3).unwrap().app_as::<DigitalOutputs>().unwrap().outputs(), 0b101);
        let counts = s.device(1).unwrap().app_as::<Cia402Drive>().unwrap().plant().actual().position;
        assert_eq!(counts, base.drive(0).unwrap().config().counts_from_position(0.5) as f64);
    }
    // Inputs from the simulated terminal.
    lock(&seg).device_mut(4).unwrap().app_as_mut::<DigitalInputs>().unwrap().set_inputs(0b1100_0011);
    // Command a fast move, then hold half way: the drive stops where it is then.
    inputs[0] = Value::Vector(vec![1.5, -0.2]);
    for _ in 0..100 {
        base.actuate(tick, Some(morc_kernel::Commands::all(&inputs)));
        tick += 1;
        base.sense(tick, &mut outputs);
    }
    let moving = outputs[0].as_slice()[0];
    assert!(moving > 0.5 && moving < 1.5, "{moving}");
    for _ in 0..200 {
        assert_eq!(base.actuate(tick, None), Step::Continue);
        tick += 1;
        base.sense(tick, &mut outputs);
    }
    let held = outputs[0].as_slice()[0];
    assert!((held - moving).abs() < 0.01, "held at {held}, was at {moving} when commands stopped");
    assert_eq!(outputs[1].as_slice()[0], 0.0, "at standstill");
    assert_eq!(outputs[4], Value::Integer(0b1100_0011));
    assert_eq!(lock(&seg).device(3).unwrap().app_as::<DigitalOutputs>().unwrap().outputs(), 0b101, "outputs held");
}

#[test]
fn same_commands_give_bit_identical_measurements() {
    let run = || {
        let (mut base, _seg) = open(3);
        let mut outputs = zero_outputs(&base);
        let mut inputs = zero_inputs(&base);
        let mut trace = Vec::new();
        for k in 0..300u64 {
            base.sense(k, &mut outputs);
            trace.extend(outputs[0].as_slice().iter().map(|x| x.to_bits()));
            let t = k as f64 * 1e-3;
            inputs[0] = Value::Vector(vec![(3.0 * t).sin(), 0.1 * t, -t]);
            base.actuate(k, Some(morc_kernel::Commands::all(&inputs)));
        }
        trace
    };
    assert_eq!(run(), run());
}

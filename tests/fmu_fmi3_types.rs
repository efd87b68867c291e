//! FMI 3.0 import of an FMU morc did not make: a small C FMU (built here
//! with the system C compiler) with every scalar type, a string and a
//! Float64 array. Each type goes in and out through its own fmi3Get/Set
//! call; parameters by name; the instantiation token is checked.

mod fmu_support;

use std::path::PathBuf;

use fmu_support::*;
use morc_kernel::AssemblyData;
use morc_kernel::{InitContext, Step, StepContext};
use morc_kernel::{Value, ValueType};

/// Builds the C FMU; `token` replaces the one in the model description.
fn build(token: &str, name: &str) -> PathBuf {
    build_c_fmu("feedthrough3", token, name)
}

#[test]
fn every_fmi3_type_goes_through() {
    let path = build("{morc-feedthrough3-token}", "feedthrough3.fmu");
    let mut c = morc_fmi::factory(&path).unwrap()().unwrap();
    let info = c.info().clone();
    let ty = |name: &str| info.inputs[info.input_index(name).unwrap()].ty;
    assert_eq!(ty("f32_in"), ValueType::Real);
    assert_eq!(ty("u64_in"), ValueType::Integer);
    assert_eq!(ty("b_in"), ValueType::Boolean);
    assert_eq!(ty("s_in"), ValueType::String);
    assert_eq!(ty("arr_in"), ValueType::Vector(3));
    assert_eq!(info.inputs[info.input_index("f32_in").unwrap()].unit, "m");
    c.set_parameter("gain", &Value::Real(2.0)).unwrap();
    c.set_parameter("offset", &Value::Integer(5)).unwrap();
    c.configure().unwrap();
    let mut outputs: Vec<Value> = info.outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let data = AssemblyData::new();
    c.initialize(&InitContext { name: "ft", period: 0.01, base_period: 0.01, data: &data, thread: &Default::default(), base_latency: 0 }, &mut outputs)
        .unwrap();
    let mut inputs: Vec<Value> = info.inputs.iter().map(|p| Value::zero(p.ty)).collect();
    let mut set = |name: &str, v: Value| inputs[info.input_index(name).unwrap()] = v;
    set("f32_in", Value::Real(0.5));
    set("i8_in", Value::Integer(-100));
    set("u8_in", Value::Integer(300)); // clamped to 255
    set("i16_in", Value::Integer(-30000));
    set("u16_in", Value::Integer(65535));
    set("i32_in", Value::Integer(-2_000_000_000));
    set("u32_in", Value::Integer(4_000_000_000));
    set("i64_in", Value::Integer(i64::MIN));
    set("u64_in", Value::Integer(i64::MAX));
    // FMI 3 Enumerations go through fmi3SetInt64/GetInt64 (FMI 2 ones through fmi2SetInteger).
    set("enum_in", Value::Integer(3));
    set("b_in", Value::Boolean(false));
    set("s_in", Value::String("hello".into()));
    set("arr_in", Value::Vector(vec![1.0, -2.0, 3.5]));
    assert_eq!(c.step(&StepContext { step: 0, time: 0.0, period: 0.01 }, &inputs, &mut outputs), Step::Continue);
    let out = |name: &str| outputs[info.output_index(name).unwrap()].clone();
    assert_eq!(out("f32_out"), Value::Real(0.5));
    assert_eq!(out("i8_out"), Value::Integer(-100));
    assert_eq!(out("u8_out"), Value::Integer(255));
    assert_eq!(out("i16_out"), Value::Integer(-29995), "offset parameter");
    assert_eq!(out("u16_out"), Value::Integer(65535));
    assert_eq!(out("i32_out"), Value::Integer(-2_000_000_000));
    assert_eq!(out("u32_out"), Value::Integer(4_000_000_000));
    assert_eq!(out("i64_out"), Value::Integer(i64::MIN));
    assert_eq!(out("u64_out"), Value::Integer(i64::MAX));
    assert_eq!(out("enum_out"), Value::Integer(3), "an FMI 3 Enumeration is an Int64");
    assert_eq!(out("b_out"), Value::Boolean(true));
    assert_eq!(out("s_out"), Value::String("hello!".into()));
    assert_eq!(out("arr_out"), Value::Vector(vec![2.0, -4.0, 7.0]), "gain parameter on the array");
}

#[test]
fn a_wrong_instantiation_token_names_the_call_and_quotes_the_fmu() {
    let path = build("{another-token}", "wrong-token.fmu");
    let mut c = morc_fmi::factory(&path).unwrap()().unwrap();
    c.configure().unwrap();
    let data = AssemblyData::new();
    let mut outputs: Vec<Value> = c.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let e = c
        .initialize(&InitContext { name: "ft", period: 0.01, base_period: 0.01, data: &data, thread: &Default::default(), base_latency: 0 }, &mut outputs)
        .unwrap_err();
    assert!(e.contains("wrong-token.fmu") && e.contains("fmi3InstantiateCoSimulation") && e.contains("wrong instantiation token"), "{e}");
}

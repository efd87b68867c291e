//! The bus base's cyclic path allocates nothing in steady state: ethercrab's exchange driven
//! synchronously over the in-process transport, the simulated segment stepped, the device
//! classes decoding and encoding, measurements and commands on ports — 2000 ticks counted by
//! a global allocator that watches this test's thread.

use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::master::Link;
use morc_ecat::virtual_bus::{shared_sim_segment, SimSegmentConfig};
use morc_kernel::Base;
use morc_kernel::Step;
use morc_kernel::Value;
use morc_test_support::alloc::{allocates_nothing, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn bus_base_cycles_without_allocating() {
    let seg = shared_sim_segment(&SimSegmentConfig::default()).unwrap();
    let mut base = BusBase::open(Link::Simulated(seg), BusConfig::default()).unwrap();
    let mut outputs: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let mut inputs: Vec<Value> = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
    let mut step = |tick: u64, outputs: &mut Vec<Value>, inputs: &mut Vec<Value>, hold: bool| {
        assert_eq!(base.sense(tick, outputs), Step::Continue);
        let t = tick as f64 * 1e-3;
        for (i, q) in inputs[0].as_mut_slice().iter_mut().enumerate() {
            *q = 0.2 * (t + i as f64).sin();
        }
        inputs[1] = Value::Integer((tick % 256) as i64);
        let commands = if hold { None } else { Some(morc_kernel::Commands::all(&inputs[..])) };
        assert_eq!(base.actuate(tick, commands), Step::Continue);
    };
    for tick in 0..10 {
        step(tick, &mut outputs, &mut inputs, false);
    }
    allocates_nothing("2000 bus cycles, commanded and holding", || {
        for tick in 10..2010 {
            // Commands, then a stretch of hold (the switch latches targets), then commands again.
            step(tick, &mut outputs, &mut inputs, (1000..1200).contains(&tick));
        }
    });
    assert!(outputs[0].as_slice().iter().any(|q| *q != 0.0), "the drives moved");
}

#[test]
fn a_robot_cell_cycles_without_allocating_healthy_and_idle_faulted() {
    // Drives, digital and analog terminals, safety PLC (heartbeat) and F/T sensor.
    let seg = shared_sim_segment(&SimSegmentConfig::cell(6)).unwrap();
    let mut base = BusBase::open(Link::Simulated(seg), BusConfig::default()).unwrap();
    let handle = base.handle();
    let mut outputs: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let mut inputs: Vec<Value> = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
    let aout = base.info().inputs.iter().position(|p| p.name.starts_with("aout")).expect("analog outputs");
    let mut tick = 0u64;
    let mut healthy = |base: &mut BusBase, outputs: &mut Vec<Value>, inputs: &mut Vec<Value>, n: u64| {
        for _ in 0..n {
            assert_eq!(base.sense(tick, outputs), Step::Continue, "{:?}", base.fault());
            for (c, v) in inputs[aout].as_mut_slice().iter_mut().enumerate() {
                *v = ((tick as f64 * 1e-3) + c as f64).sin();
            }
            assert_eq!(base.actuate(tick, Some(morc_kernel::Commands::all(&inputs[..]))), Step::Continue);
            tick += 1;
        }
    };
    healthy(&mut base, &mut outputs, &mut inputs, 10);
    allocates_nothing("2000 healthy cycles of the cell", || healthy(&mut base, &mut outputs, &mut inputs, 2000));
    // E-stop: the fault is latched (its message made once), then the engine idles: hold.
    handle.sim_safety_plc(|plc| plc.set_estop(true)).unwrap();
    let mut faulted = false;
    for t in 0..10 {
        faulted |= matches!(base.sense(2010 + t, &mut outputs), Step::Fault(_));
        let _ = base.actuate(2010 + t, None);
    }
    assert!(faulted && handle.faulted());
    allocates_nothing("2000 idle faulted cycles", || {
        for t in 0..2000 {
            assert_eq!(base.sense(3000 + t, &mut outputs), Step::Continue, "an idle faulted base reports nothing new");
            assert_eq!(base.actuate(3000 + t, None), Step::Continue);
        }
    });
}

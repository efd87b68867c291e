//! The bus base's cyclic path allocates nothing in steady state: ethercrab's exchange driven
//! synchronously over the in-process transport, the simulated segment stepped, the device
//! classes decoding and encoding, measurements and commands on ports — 2000 ticks counted by
//! a global allocator that watches this test's thread.

use morc::bus::base::{BusBase, BusConfig};
use morc::bus::master::Link;
use morc::bus::sim::{shared_sim_segment, SimSegmentConfig};
use morc::kernel::base::Base;
use morc::kernel::component::Step;
use morc::kernel::value::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static WATCHED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if WATCHED.with(|w| w.get()) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
        let commands = if hold { None } else { Some(morc::kernel::base::Commands::all(&inputs[..])) };
        assert_eq!(base.actuate(tick, commands), Step::Continue);
    };
    for tick in 0..10 {
        step(tick, &mut outputs, &mut inputs, false);
    }
    WATCHED.with(|w| w.set(true));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for tick in 10..2010 {
        // Commands, then a stretch of hold (the switch latches targets), then commands again.
        step(tick, &mut outputs, &mut inputs, (1000..1200).contains(&tick));
    }
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    WATCHED.with(|w| w.set(false));
    assert_eq!(after - before, 0, "allocations in 2000 bus cycles");
    assert!(outputs[0].as_slice().iter().any(|q| *q != 0.0), "the drives moved");
}

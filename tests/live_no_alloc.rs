//! The live view's tap allocates nothing on the real-time path: with the
//! server on, `LiveTap::step` of 50 signals copies each row into the
//! preallocated ring; a counting global allocator armed only on the stepping
//! thread (the drain thread encodes and sends as it likes) sees no allocation
//! in 20 000 steps, and every row reaches the sending side.
//! One test in this binary, so no other test allocates concurrently.

use morc_test_support::alloc::{assert_allocated_nothing, control_allocation, watch_this_thread, watched_allocations, CountingAllocator};

use morc_kernel::*;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn live_tap_step_allocates_nothing() {
    const STEPS: u64 = 20_000;
    const SIGNALS: usize = 50;
    let period = 0.001;
    let live = morc_live::Live::new();
    live.start("127.0.0.1:0", None).unwrap();
    // 50 signals as a program publishes them: 49 reals and a 6-vector.
    let mut signals: Vec<SignalInfo> = (0..SIGNALS - 1)
        .map(|i| SignalInfo { name: format!("c{i}.y"), ty: ValueType::Real, unit: String::new(), element_units: Vec::new(), element_names: Vec::new(), doc: String::new() })
        .collect();
    signals.push(SignalInfo {
        name: "robot.q".into(),
        ty: ValueType::Vector(6),
        unit: "rad".into(),
        element_units: Vec::new(),
        element_names: Vec::new(),
        doc: String::new(),
    });
    let view = AssemblyView { name: "noalloc", base_name: "robot", base_description: "", base_period: period, signals, components: Vec::new() };
    // rate = 1/T: a row every tick, the most the tap can be asked for.
    let request = morc_live::LiveRequest { patterns: vec!["*".into()], robot: None, rate: 1.0 / period };
    let attachment = live.attachment(request)(&view).unwrap();
    assert_eq!(attachment.every, 1);
    assert_eq!(attachment.inputs.len(), SIGNALS);
    let mut tap = attachment.component;
    tap.configure().unwrap();
    let data = AssemblyData::new();
    let ctx = InitContext { name: "live", period, base_period: period, data: &data, thread: &Default::default(), base_latency: 0 };
    tap.initialize(&ctx, &mut []).unwrap();
    let mut inputs: Vec<Value> = (0..SIGNALS - 1).map(|_| Value::Real(0.0)).collect();
    inputs.push(Value::zero(ValueType::Vector(6)));

    let mut stepping = std::time::Duration::ZERO;
    let mut pushed = 0;
    watch_this_thread(true);
    control_allocation();
    for step in 0..STEPS {
        let t = step as f64 * period;
        for (i, v) in inputs.iter_mut().take(SIGNALS - 1).enumerate() {
            v.set_real(t * i as f64);
        }
        inputs[SIGNALS - 1].as_mut_slice().iter_mut().for_each(|x| *x = t);
        let t0 = std::time::Instant::now();
        let s = tap.step(&StepContext { step, time: t, period }, &inputs, &mut []);
        stepping += t0.elapsed();
        assert!(s == Step::Continue);
        pushed += 1;
        // Give the drain thread time (the ring holds 2 s of rows); rows it cannot take are dropped and counted.
        if step % 1000 == 999 {
            watch_this_thread(false);
            std::thread::sleep(std::time::Duration::from_millis(20));
            watch_this_thread(true);
        }
    }
    watch_this_thread(false);
    let per_step = stepping.as_nanos() as f64 / STEPS as f64;
    assert_allocated_nothing(&format!("{STEPS} live tap steps"), watched_allocations());
    drop(tap); // stops the drain thread after it sent what the ring held
    assert_eq!(live.sent() + live.dropped(), pushed, "every row is sent or counted as dropped");
    assert!(live.sent() >= 2000, "rows reached the sending side: {}", live.sent());
    println!("LiveTap::step with {SIGNALS} signals: {per_step:.0} ns per step (test profile); {} rows sent, {} dropped", live.sent(), live.dropped());
    live.stop();
}

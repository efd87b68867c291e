//! The execution contract: same-rate data flows in the same tick, across
//! rates by logical execution time, and the results are bit-identical
//! between runs and between the virtual and the wall clock.

use morc_test_support::doubles as common;

use common::func;
use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::IdealAxes;
use morc_kernel::Step;
use morc_kernel::Value;
use morc_kernel::{monotonic_ns, ClockKind};
use morc_kernel::{Engine, EngineConfig, Outcome, RunResult};

const T: f64 = 0.001;

fn probe(spec: &mut AssemblySpec, name: &str, from: &str) {
    spec.add_native(name, "probe", 1, &[]);
    spec.connect(from, &format!("{name}.u"));
}

/// 1 kHz, 250 Hz and 50 Hz parts; feed-through chains; a delayed loop; a
/// 50 Hz component that computes for 3 ms (three base periods).
fn multirate_assembly() -> AssemblySpec {
    let mut a = AssemblySpec::new("multirate");
    a.duration = Some(1.0);
    // Counters that make the timing of every hand-off visible.
    a.add(
        "ticker",
        "test",
        1,
        func(&[], &["y"], || {
            Box::new(|ctx, _, out| {
                out[0].set_real(ctx.step as f64);
                Step::Continue
            })
        }),
    );
    a.add(
        "echo",
        "test",
        1,
        func(&["u"], &["y"], || {
            Box::new(|_, i, o| {
                o[0].copy_from(&i[0]);
                Step::Continue
            })
        }),
    );
    a.add(
        "late",
        "test",
        1,
        func(&["u"], &["y"], || {
            Box::new(|_, i, o| {
                o[0].copy_from(&i[0]);
                Step::Continue
            })
        }),
    );
    a.add(
        "count",
        "test",
        20,
        func(&[], &["y"], || {
            Box::new(|ctx, _, out| {
                out[0].set_real((ctx.step + 1) as f64);
                Step::Continue
            })
        }),
    );
    a.add(
        "sampler",
        "test",
        20,
        func(&["u"], &["y"], || {
            Box::new(|_, i, o| {
                o[0].copy_from(&i[0]);
                Step::Continue
            })
        }),
    );
    a.connect("ticker.y", "echo.u").connect_delayed("ticker.y", "late.u").connect("ticker.y", "sampler.u");

    // A control loop with parts at three rates.
    a.add(
        "src",
        "test",
        1,
        func(&["slow"], &["y"], || {
            Box::new(|ctx, i, o| {
                o[0].set_real((2.0 * std::f64::consts::PI * 3.0 * ctx.time).sin() + 0.1 * i[0].real());
                Step::Continue
            })
        }),
    );
    a.add(
        "mid",
        "test",
        4,
        func(&["q", "y"], &["m"], || {
            let mut state = 0.0;
            Box::new(move |ctx, i, o| {
                o[0].set_real(state);
                state += ctx.period * (i[0].real() + i[1].real());
                Step::Continue
            })
        }),
    );
    a.add(
        "slow",
        "test",
        20,
        func(&["m", "y"], &["s"], || {
            Box::new(|_, i, o| {
                let start = monotonic_ns();
                let mut x = i[0].real() + i[1].real();
                for _ in 0..20_000 {
                    x = x * 0.999_999 + (x * 1.1).sin() * 1e-6;
                }
                // Take 3 ms whatever the machine, so the work spans base periods.
                while monotonic_ns() - start < 3_000_000 {
                    std::hint::spin_loop();
                }
                o[0].set_real(x);
                Step::Continue
            })
        }),
    );
    a.add(
        "fb",
        "test",
        1,
        func(&["y", "q", "m", "s", "acc"], &["u"], || {
            Box::new(|_, i, o| {
                let (y, q, m, s, acc) = (i[0].real(), i[1].real(), i[2].real(), i[3].real(), i[4].real());
                o[0].set_real(q + 0.5 * (y - q) + 0.01 * m + 0.01 * s - 0.001 * acc);
                Step::Continue
            })
        }),
    );
    a.add(
        "acc",
        "test",
        1,
        func(&["u"], &["y"], || {
            let mut sum = 0.0;
            Box::new(move |_, i, o| {
                sum += i[0].real();
                o[0].set_real(sum);
                Step::Continue
            })
        }),
    );
    a.connect("slow.s", "src.slow")
        .connect("robot.q", "mid.q")
        .connect("src.y", "mid.y")
        .connect("mid.m", "slow.m")
        .connect("src.y", "slow.y")
        .connect("src.y", "fb.y")
        .connect("robot.q", "fb.q")
        .connect("mid.m", "fb.m")
        .connect("slow.s", "fb.s")
        .connect("fb.u", "acc.u")
        .connect_delayed("acc.y", "fb.acc") // the loop fb → acc → fb needs its delay
        .connect("fb.u", "robot.q_cmd");
    for (name, from) in [("p_echo", "echo.y"), ("p_late", "late.y"), ("p_count", "count.y"), ("p_sampler", "sampler.y"), ("p_u", "fb.u"), ("p_m", "mid.m"), ("p_s", "slow.s"), ("p_q", "robot.q")] {
        probe(&mut a, name, from);
    }
    a
}

fn run(clock: ClockKind) -> RunResult {
    run_with(clock, false)
}

/// `keep_updaters`: every slower task on its Updater, none moved inline on the Coordinator.
fn run_with(clock: ClockKind, keep_updaters: bool) -> RunResult {
    let config = EngineConfig { period: T, clock, rt: RtPolicy::default() };
    let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0], T, 10.0))).unwrap();
    let mut spec = multirate_assembly();
    spec.keep_updaters = keep_updaters;
    let r = engine.run(&spec, &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{}", r.report());
    assert_eq!(r.ticks, 1000);
    r
}

fn samples(r: &RunResult, probe: &str) -> Vec<f64> {
    match r.data.get(&format!("{probe}.u")) {
        Some(Value::Vector(v)) => v.clone(),
        other => panic!("no samples for {probe}: {other:?}"),
    }
}

/// The tests of this binary take turns: a virtual-clock run computes flat out on both cores
/// of a CI machine and would make a concurrent wall-clock run overrun.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn data_moves_in_the_same_tick_and_by_logical_execution_time() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let r = run(ClockKind::Virtual);
    let (echo, late, count, sampler) = (samples(&r, "p_echo"), samples(&r, "p_late"), samples(&r, "p_count"), samples(&r, "p_sampler"));
    assert_eq!(echo.len(), 1000);
    for n in 0..1000usize {
        // Same rate, direct feed-through: seen in the same tick.
        assert_eq!(echo[n], n as f64, "echo at tick {n}");
        // Delayed edge: the value of the previous step (initial value 0 first).
        assert_eq!(late[n], n.saturating_sub(1) as f64, "delayed at tick {n}");
        // A 20-tick component released at m publishes at m + 20.
        assert_eq!(count[n], (n / 20) as f64, "slow output at tick {n}");
        // …and it read its input as it was at its release m (fast outputs of tick m included).
        let expected = if n < 20 { 0.0 } else { (20 * (n / 20) - 20) as f64 };
        assert_eq!(sampler[n], expected, "slow sample at tick {n}");
    }
    let slow = r.components.iter().find(|c| c.name == "slow").unwrap();
    assert_eq!(slow.steps, 50);
    assert!(slow.exec.mean > 3e6, "the slow component takes longer than a base period");
}

#[test]
fn bit_identical_between_runs_and_clocks() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let a = run(ClockKind::Virtual);
    let b = run(ClockKind::Virtual);
    // Bit-identity is promised for runs without overruns; a shared VM can
    // stall a thread past a deadline now and then, so take the first of five
    // wall-clock runs that had none.
    // Cheap slower tasks move inline on the Coordinator after their first runs; kept on their
    // Updaters, the results are the same to the bit (logical execution time either way).
    let kept = run_with(ClockKind::Virtual, true);
    let w = (0..5)
        .map(|_| run(ClockKind::Wall))
        .find(|r| r.components.iter().all(|c| c.overruns == 0))
        .expect("every one of five wall-clock runs overran: the machine is too loaded to compare");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for p in ["p_echo", "p_late", "p_count", "p_sampler", "p_u", "p_m", "p_s", "p_q"] {
        let (x, y, z) = (samples(&a, p), samples(&b, p), samples(&w, p));
        assert_eq!(bits(&x), bits(&samples(&kept, p)), "{p}: slower tasks inline and on their Updaters differ");
        assert_eq!(x.len(), 1000, "{p}");
        assert_eq!(bits(&x), bits(&y), "{p}: two virtual runs differ");
        assert_eq!(bits(&x), bits(&z), "{p}: virtual and wall clock differ");
    }
    // The loop did something (no trivially-zero signals).
    assert!(samples(&a, "p_s").iter().any(|&s| s != 0.0));
    assert!(samples(&a, "p_q").iter().any(|&q| q != 0.0));
}

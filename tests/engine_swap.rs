//! Two-tier engine: the base keeps cycling while assemblies are prepared
//! and swapped in at tick boundaries; no base tick is missed.

use morc_test_support::doubles as common;

use common::{func, RecordingBase};
use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::Step;
use morc_kernel::{Engine, EngineConfig, Outcome};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Every tenth assembly is slow to instantiate (as loading an FMU may): its
/// preparation lasts until the base has sensed this many more ticks. Were
/// preparation on the real-time path the base could not tick meanwhile, and
/// the preparation would give up after `PREPARATION_PATIENCE`. Counting ticks
/// rather than timing gaps keeps the test deterministic on a loaded machine.
const TICKS_DURING_PREPARATION: usize = 5;
const PREPARATION_PATIENCE: std::time::Duration = std::time::Duration::from_secs(20);

/// Waits until the base has sensed `TICKS_DURING_PREPARATION` more ticks (with
/// a wall clock) and says whether it did; with a virtual clock it returns at once.
fn slow_preparation(log: &Arc<Mutex<common::BaseLog>>, wall: bool) -> bool {
    if !wall {
        return true;
    }
    let start = log.lock().unwrap().ticks.len();
    let deadline = std::time::Instant::now() + PREPARATION_PATIENCE;
    while std::time::Instant::now() < deadline {
        if log.lock().unwrap().ticks.len() >= start + TICKS_DURING_PREPARATION {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    false
}

fn velocity_assembly(i: usize, ticks: u64, log: &Arc<Mutex<common::BaseLog>>, wall: bool, cycled: &Arc<AtomicUsize>) -> AssemblySpec {
    let mut a = AssemblySpec::new(&format!("swap-{i}"));
    let v = if i.is_multiple_of(2) { 1.0 } else { -1.0 };
    let slow = i % 10 == 5;
    let (log, cycled) = (log.clone(), cycled.clone());
    a.add(
        "v",
        "test",
        1,
        func(&[], &["y"], move || {
            if slow && slow_preparation(&log, wall) {
                cycled.fetch_add(1, Ordering::SeqCst);
            }
            Box::new(move |_, _, o| {
                o[0].set_real(v);
                Step::Continue
            })
        }),
    );
    a.add(
        "slow",
        "test",
        5,
        func(&["q"], &["y"], || {
            Box::new(|_, i, o| {
                o[0].copy_from(&i[0]);
                Step::Continue
            })
        }),
    );
    a.connect("v.y", "robot.v_cmd").connect("robot.q", "slow.q");
    a.duration = Some(ticks as f64 * 0.002);
    a
}

/// The two tests take turns: a virtual-clock run next to a wall-clock one
/// would compete for the two cores of a CI machine.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs 100 assemblies of 10 ticks back to back; returns the base's log, the
/// late ticks, and how many slow preparations saw the base cycle meanwhile.
fn swap_100(clock: ClockKind) -> (common::BaseLog, u64, usize) {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let period = 0.002;
    let (base, log) = RecordingBase::new(period);
    let wall = clock == ClockKind::Wall;
    let cycled = Arc::new(AtomicUsize::new(0));
    let mut engine = Engine::start(EngineConfig { period, clock, rt: RtPolicy::default() }, Box::new(base)).unwrap();
    let mut late = 0;
    for i in 0..100 {
        let r = engine.run(&velocity_assembly(i, 10, &log, wall, &cycled), &AssemblyData::new()).unwrap();
        assert_eq!(r.outcome, Outcome::Finished("duration".into()));
        assert_eq!(r.ticks, 10);
        late += r.engine.late_ticks;
    }
    drop(engine);
    let log = std::mem::take(&mut *log.lock().unwrap());
    (log, late, cycled.load(Ordering::SeqCst))
}

fn check_every_tick_seen(log: &common::BaseLog) {
    assert!(!log.ticks.is_empty());
    for (i, &t) in log.ticks.iter().enumerate() {
        assert_eq!(t, i as u64, "base tick {i} missing or repeated");
    }
    assert_eq!(log.ticks.len(), log.commands.len(), "every sensed tick was actuated");
    // Exactly 100 × 10 commanded ticks, in runs of 10 with alternating sign.
    let commanded: Vec<f64> = log.commands.iter().flatten().copied().collect();
    assert_eq!(commanded.len(), 1000);
    for (i, c) in commanded.iter().enumerate() {
        assert_eq!(*c, if (i / 10) % 2 == 0 { 1.0 } else { -1.0 }, "command {i}");
    }
}

#[test]
fn virtual_clock_swaps_without_gaps() {
    let (log, _, _) = swap_100(ClockKind::Virtual);
    check_every_tick_seen(&log);
    // Virtual time stands still while the program prepares the next one.
    assert_eq!(log.ticks.len(), 1000);
}

#[test]
fn wall_clock_keeps_cycling_while_swapping() {
    let (log, late, cycled) = swap_100(ClockKind::Wall);
    check_every_tick_seen(&log);
    // Between assemblies the base held (no command) and kept cycling.
    assert!(log.ticks.len() > 1000);
    // Each slow preparation overlapped with cycling: the base sensed ticks
    // while it was in progress, and held (no command) through them. The
    // worst gap is reported, not failed on: a loaded machine can stall any
    // thread for tens of milliseconds.
    let worst = log.times.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    eprintln!("swap: {} base ticks, {late} late, worst gap {worst} ns", log.ticks.len());
    assert_eq!(cycled, 10, "the base stopped cycling during a slow preparation");
    let mut holds = Vec::new();
    let mut run = 0;
    for c in &log.commands {
        match c {
            None => run += 1,
            Some(_) if run > 0 => {
                holds.push(run);
                run = 0;
            }
            Some(_) => {}
        }
    }
    let long_holds = holds.iter().filter(|&&h| h >= TICKS_DURING_PREPARATION).count();
    assert!(long_holds >= 10, "the base held through each slow preparation: {holds:?}");
}

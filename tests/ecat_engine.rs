//! A robot program's commands move the simulated drives through the real master: the engine
//! cycles the bus base every base period, assemblies are swapped while it keeps cycling (no
//! bus cycle missed), and a drive fault ends a run as a fault naming the device.

use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::master::Link;
use morc_ecat::transport::lock;
use morc_ecat::virtual_bus::{shared_sim_segment, SimSegmentConfig};
use morc_ecat_sim::Cia402Drive;
use morc_kernel::rt::RtPolicy;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::ClockKind;
use morc_kernel::Value;
use morc_kernel::{Engine, EngineConfig, Outcome};

fn sine(name: &str, amplitude: f64, seconds: f64) -> AssemblySpec {
    let mut a = AssemblySpec::new(name);
    a.add_native("ref", "sine", 1, &[("n", Value::Integer(6)), ("amplitude", Value::Real(amplitude)), ("frequency", Value::Real(0.5))]);
    a.connect("ref.y", "robot.q_cmd");
    a.duration = Some(seconds);
    a
}

#[test]
fn assemblies_move_the_drives_through_the_master_and_swaps_miss_no_cycle() {
    let period = 0.001;
    let seg = shared_sim_segment(&SimSegmentConfig::default()).unwrap();
    let base = BusBase::open(Link::Simulated(seg.clone()), BusConfig { period, ..Default::default() }).unwrap();
    let handle = base.handle();
    let cycles_at_open = handle.cycles();
    let mut engine = Engine::start(EngineConfig { period, clock: ClockKind::Virtual, rt: RtPolicy { enabled: false, ..Default::default() } }, Box::new(base)).unwrap();
    let mut positions = Vec::new();
    for i in 0..5 {
        let r = engine.run(&sine(&format!("sine-{i}"), 0.1 * (i + 1) as f64, 0.5), &AssemblyData::new()).unwrap();
        assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{}", r.report());
        let s = lock(&seg);
        positions.push(s.device(1).unwrap().app_as::<Cia402Drive>().unwrap().plant().actual().position);
    }
    // Every engine tick was one bus cycle: none missed across the swaps.
    assert_eq!(handle.cycles() - cycles_at_open, engine.tick());
    assert_eq!(handle.faults(), 0);
    // Its status as the live view reads it: every device in OP, no fault, the cycles counted.
    let status = handle.status();
    assert!(status.devices.len() >= 4 && status.devices.iter().all(|d| d.state == "OP"), "{status:?}");
    assert_eq!((status.faulted, status.fault.as_deref(), status.working_counter_errors, status.lost_frames), (false, None, 0, 0));
    assert_eq!(status.cycles, handle.cycles());
    assert!(positions.iter().all(|p| *p != 0.0), "the first drive moved: {positions:?}");
    // A drive fault ends the run as a fault naming the device; reset recovers.
    lock(&seg).device_mut(3).unwrap().app_as_mut::<Cia402Drive>().unwrap().inject_fault(0x7305);
    let r = engine.run(&sine("faulted", 0.1, 0.5), &AssemblyData::new()).unwrap();
    match &r.outcome {
        Outcome::Fault(f) => assert!(f.message.contains("robot: device 3 'MORC-402': drive fault, error code 0x7305 (sensor / encoder)"), "{}", f.message),
        o => panic!("{o:?}"),
    }
    assert!(r.ticks < 5, "detected within {} ticks", r.ticks);
    let status = handle.status();
    assert!(status.faulted && status.fault.as_deref().is_some_and(|f| f.contains("device 3 'MORC-402': drive fault")), "{status:?}");
    handle.reset_faults();
    // Give the drives time to switch on again while holding, then run normally.
    let mut hold = AssemblySpec::new("wait");
    hold.duration = Some(0.2);
    let r = engine.run(&hold, &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{}", r.report());
    let r = engine.run(&sine("after-reset", 0.1, 0.2), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{}", r.report());
    assert!(!handle.faulted());
}

//! The `netft` component against the simulated Net F/T on 127.0.0.1, in assemblies on the
//! virtual clock. The sensor streams in wall time, so nothing here is timed: a watching
//! component waits (sleeps a millisecond) whenever a step brought no record, and each run ends
//! when the watcher has seen what it waits for, so a busy machine only makes a run slower.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use morc_kernel::rt::RtPolicy;
use morc_kernel::{
    AssemblyData, AssemblyResults, AssemblySpec, ClockKind, Component, ComponentInfo, Engine, EngineConfig, IdealAxes, InitContext, Outcome, PortInfo, Step, StepContext, Value, ValueType,
};
use morc_netft::{rdt, NetFt, SimConfig, SimNetFt};
use morc_test_support::alloc::{allocations_during, assert_allocated_nothing, control_allocation, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// What the watcher sees of the `netft` outputs at one step.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    wrench: [f64; 6],
    fresh: bool,
    samples: i64,
    lost: i64,
    received: i64,
}

type Check = Box<dyn FnMut(&Seen) -> Step + Send>;

/// Reads the sensor's outputs; when a step brought no record, sleeps 1 ms so that records come.
struct Watch {
    info: ComponentInfo,
    check: Check,
}

impl Component for Watch {
    morc_kernel::component_info!(info);
    fn initialize(&mut self, _: &InitContext, _: &mut [Value]) -> Result<(), String> {
        Ok(())
    }
    fn step(&mut self, _: &StepContext, inputs: &[Value], _: &mut [Value]) -> Step {
        let seen = Seen {
            wrench: std::array::from_fn(|i| inputs[0].as_slice()[i]),
            fresh: inputs[1].boolean(),
            samples: inputs[2].integer(),
            lost: inputs[3].integer(),
            received: inputs[4].integer(),
        };
        if !seen.fresh {
            std::thread::sleep(Duration::from_millis(1));
        }
        (self.check)(&seen)
    }
}

/// `netft` with the step's allocations counted (from its 100th step on) into `allocations`,
/// with one control allocation in the first counted step.
struct Counted {
    inner: NetFt,
    steps: u64,
    allocations: Arc<AtomicU64>,
}

impl Component for Counted {
    fn info(&self) -> &ComponentInfo {
        self.inner.info()
    }
    fn info_mut(&mut self) -> &mut ComponentInfo {
        self.inner.info_mut()
    }
    fn set_parameter(&mut self, name: &str, value: &Value) -> Result<(), String> {
        self.inner.set_parameter(name, value)
    }
    fn configure(&mut self) -> Result<(), String> {
        self.inner.configure()
    }
    fn initialize(&mut self, ctx: &InitContext, outputs: &mut [Value]) -> Result<(), String> {
        self.inner.initialize(ctx, outputs)
    }
    fn step(&mut self, ctx: &StepContext, inputs: &[Value], outputs: &mut [Value]) -> Step {
        self.steps += 1;
        let mut result = Step::Continue;
        let control = self.steps == 101;
        let n = allocations_during(|| {
            if control {
                control_allocation();
            }
            result = self.inner.step(ctx, inputs, outputs);
        });
        if self.steps > 100 && (control || matches!(result, Step::Continue)) {
            self.allocations.fetch_add(n, Ordering::Relaxed);
        }
        result
    }
    fn terminate(&mut self, results: &mut AssemblyResults) {
        self.inner.terminate(results)
    }
}

/// An assembly of the sensor at `address` and a watcher running `check`; ends by the watcher,
/// or after 600 s of virtual time (at least 600 s of wall time too, as the watcher sleeps).
fn assembly(address: &str, timeout: f64, allocations: Arc<AtomicU64>, check: Check) -> AssemblySpec {
    let mut a = AssemblySpec::new("netft");
    a.add("ft", "netft", 1, Arc::new(move || Ok(Box::new(Counted { inner: NetFt::new(), steps: 0, allocations: allocations.clone() }) as Box<dyn Component>)));
    a.components.last_mut().unwrap().params = vec![("address".into(), Value::String(address.into())), ("timeout".into(), Value::Real(timeout))];
    let check = Arc::new(Mutex::new(Some(check)));
    a.add(
        "watch",
        "watch",
        1,
        Arc::new(move || {
            let info = ComponentInfo::new("watch", "waits for records")
                .input(PortInfo::new("wrench", ValueType::Vector(6)))
                .input(PortInfo::new("fresh", ValueType::Boolean))
                .input(PortInfo::new("samples", ValueType::Integer))
                .input(PortInfo::new("lost", ValueType::Integer))
                .input(PortInfo::new("received", ValueType::Integer));
            let check = check.lock().unwrap().take().ok_or("the watcher is made once")?;
            Ok(Box::new(Watch { info, check }) as Box<dyn Component>)
        }),
    );
    for port in ["wrench", "fresh", "samples", "lost", "received"] {
        a.connect(&format!("ft.{port}"), &format!("watch.{port}"));
    }
    a.duration = Some(600.0);
    a
}

fn engine() -> Engine {
    let period = 0.001;
    Engine::start(EngineConfig { period, clock: ClockKind::Virtual, rt: RtPolicy::default() }, Box::new(IdealAxes::new(&[0.0; 6], period, 1.0))).unwrap()
}

const LOAD: [f64; 6] = [5.0, -3.0, 12.0, 0.5, -0.2, 0.1];
const PUSH: [f64; 6] = [-10.0, 0.0, 2.5, 0.0, 1.0, 0.0];

#[test]
fn the_wrench_is_the_mean_of_the_records_and_follows_the_load() {
    let noise = 0.05;
    let sim = SimNetFt::start(SimConfig { noise, ..Default::default() }).unwrap();
    let load = sim.load();
    load.set(LOAD);
    let allocations = Arc::new(AtomicU64::new(0));
    let log = Arc::new(Mutex::new(Vec::<Seen>::with_capacity(1000)));
    let (l, handle) = (log.clone(), load.clone());
    let mut fresh = 0;
    let check: Check = Box::new(move |s: &Seen| {
        if s.fresh {
            fresh += 1;
            l.lock().unwrap().push(*s);
            // Half way, the operator pushes: set from this (real-time) thread.
            if fresh == 200 {
                handle.set(PUSH);
            }
        }
        if fresh == 400 {
            Step::Finish("seen 400 fresh steps".into())
        } else {
            Step::Continue
        }
    });
    let r = engine().run(&assembly(&sim.address().to_string(), 5.0, allocations.clone(), check), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("watch: seen 400 fresh steps".into()), "{:?}", r.outcome);
    let log = log.lock().unwrap();
    // Uniform noise of standard deviation σ is within ±σ√3, and so is any mean of it.
    let bound = noise * 3f64.sqrt() + 1e-5;
    let within = |s: &Seen, w: &[f64; 6]| (0..6).all(|i| (s.wrench[i] - w[i]).abs() <= bound);
    assert!(log[..200].iter().all(|s| within(s, &LOAD)), "before the push: {:?}", log[..200].iter().find(|s| !within(s, &LOAD)));
    // After the push the records in flight still carry the old load; from the first step whose
    // records are all new, the wrench is the push.
    let settled = log[200..].iter().position(|s| within(s, &PUSH)).expect("the push arrives");
    assert!(log[200 + settled..].iter().all(|s| within(s, &PUSH)), "after the push: {:?}", log[200 + settled..].iter().find(|s| !within(s, &PUSH)));
    // Means of several records are closer than single ones: over all steps, the error's RMS is σ/√n at most.
    let total: i64 = log[..200].iter().map(|s| s.samples).sum();
    let rms = (log[..200].iter().map(|s| (s.wrench[2] - LOAD[2]).powi(2)).sum::<f64>() / 200.0).sqrt();
    assert!(rms <= noise * 1.3, "rms {rms} over {total} records");
    assert!(total >= 200 && log.last().unwrap().received >= total, "records {total}");
    assert_eq!(r.data.get("ft.received").map(Value::integer), Some(log.last().unwrap().received));
    assert_allocated_nothing("the netft step, from its 100th on", allocations.load(Ordering::Relaxed));
}

#[test]
fn lost_records_are_counted() {
    let sim = SimNetFt::start(SimConfig { drop_every: 10, ..Default::default() }).unwrap();
    sim.load().set(LOAD);
    let last = Arc::new(Mutex::new(Seen::default()));
    let l = last.clone();
    let check: Check = Box::new(move |s: &Seen| {
        *l.lock().unwrap() = *s;
        if s.lost >= 20 {
            Step::Finish("lost 20".into())
        } else {
            Step::Continue
        }
    });
    let r = engine().run(&assembly(&sim.address().to_string(), 5.0, Arc::default(), check), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("watch: lost 20".into()), "{:?}", r.outcome);
    let s = *last.lock().unwrap();
    // Every tenth left out: one lost for nine received (more only if the loopback dropped some).
    assert!(s.lost * 9 >= s.received - 9, "{s:?}");
    assert_eq!(r.data.get("ft.lost").map(Value::integer), Some(s.lost));
}

#[test]
fn a_silent_sensor_faults_naming_its_address() {
    let sim = Arc::new(Mutex::new(SimNetFt::start(SimConfig::default()).unwrap()));
    let address = sim.lock().unwrap().address().to_string();
    let s = sim.clone();
    let mut fresh = 0;
    let check: Check = Box::new(move |seen: &Seen| {
        fresh += seen.fresh as i32;
        if fresh == 20 {
            s.lock().unwrap().stop();
        }
        Step::Continue
    });
    let r = engine().run(&assembly(&address, 0.2, Arc::default(), check), &AssemblyData::new()).unwrap();
    let fault = r.outcome.fault().unwrap_or_else(|| panic!("{:?}", r.outcome));
    assert!(fault.message.contains(&format!("Net F/T at {address} sent no record for")), "{}", fault.message);
    assert!(fault.message.contains("check that the sensor is powered"), "{}", fault.message);

    // Nothing answering from the start: the run does not start, and says why.
    let quiet = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = quiet.local_addr().unwrap().to_string();
    let e = engine()
        .run(&assembly(&address, 0.2, Arc::default(), Box::new(|_: &Seen| Step::Continue)), &AssemblyData::new())
        .err()
        .expect("the run does not start");
    assert!(e.to_string().contains(&format!("Net F/T at {address} sent no record for 0.200 s")), "{e}");
    // The start request it got is the documented one.
    let mut buf = [0u8; 16];
    let n = quiet.recv(&mut buf).unwrap();
    assert_eq!(rdt::Request::decode(&buf[..n]), Ok(rdt::Request { command: rdt::Command::Start, count: 0 }));
}

#[test]
fn a_status_error_faults() {
    let sim = SimNetFt::start(SimConfig::default()).unwrap();
    let load = sim.load();
    let mut fresh = 0;
    let check: Check = Box::new(move |s: &Seen| {
        fresh += s.fresh as i32;
        if fresh == 10 {
            load.set_status(rdt::STATUS_ERROR | 0x1);
        }
        Step::Continue
    });
    let address = sim.address().to_string();
    let r = engine().run(&assembly(&address, 5.0, Arc::default(), check), &AssemblyData::new()).unwrap();
    let fault = r.outcome.fault().unwrap_or_else(|| panic!("{:?}", r.outcome));
    assert!(fault.message.contains(&format!("Net F/T at {address} reports an error (status word 0x80000001)")), "{}", fault.message);
}

#[test]
fn a_bad_address_is_refused_before_the_run() {
    let e = engine().run(&assembly("", 0.2, Arc::default(), Box::new(|_: &Seen| Step::Continue)), &AssemblyData::new()).err().expect("the run does not start");
    assert!(e.to_string().contains("netft needs the sensor's address"), "{e}");
}

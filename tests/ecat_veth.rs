//! The virtual segment on a wire: served on one end of a veth pair in a network namespace the
//! test creates, driven from the other end by (a) morc's own master — ethercrab over its
//! raw-socket TX/RX — and (b) SOEM through pysoem, an independent master.
//!
//! Needs root (netns, veth, raw sockets), `ip` (iproute2) and, for (b), `python3` with pysoem
//! (`scripts/setup --test`). Missing any of them fails the test with the reason: never a
//! silent pass.

mod netns;

use morc_ecat::base::{BusBase, BusConfig};
use morc_ecat::master::{Link, MasterConfig};
use morc_ecat::raw_socket::SegmentServer;
use morc_ecat::transport::lock;
use morc_ecat::virtual_bus::{shared_sim_segment, SimSegmentConfig};
use morc_ecat_sim::{AlState, Cia402Drive, DigitalInputs, DigitalOutputs};
use morc_kernel::Base;
use morc_kernel::Step;
use morc_kernel::Value;
use netns::Netns;
use std::time::Duration;

/// The namespace tests run one at a time: they share two CPU cores with the build.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn morc_master_brings_the_segment_to_op_over_veth() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = Netns::create();
    let (master_if, segment_if) = (ns.master_if.clone(), ns.segment_if.clone());
    let ns_name = ns.name.clone();
    // In a thread of its own: entering the namespace changes only the calling thread.
    let result = std::thread::spawn(move || {
        let ns = Netns { name: ns_name, master_if, segment_if };
        ns.enter();
        let seg = shared_sim_segment(&SimSegmentConfig { drives: 2, ..Default::default() }).unwrap();
        let server = SegmentServer::start(&ns.segment_if, seg.clone()).expect("serve the segment on veth");
        // Generous waits: the segment server is an ordinary thread that a loaded machine
        // deschedules for milliseconds; this test is about bring-up and data, not timing.
        let master = MasterConfig { receive_timeout: Duration::from_millis(20), reply_timeout: Duration::from_millis(50), ..Default::default() };
        let config = BusConfig { master, ..Default::default() };
        let mut base = BusBase::open(Link::Interface(ns.master_if.clone()), config).unwrap_or_else(|e| panic!("bring-up over veth: {e}"));
        assert!(lock(&seg).devices().iter().all(|d| d.esc.al_state() == AlState::Op));
        let names: Vec<String> = base.bus().devices().iter().map(|d| d.name.clone()).collect();
        assert_eq!(names, ["SIM-COUPLER", "MORC-402", "MORC-402", "SIM-DO8", "SIM-DI8"]);
        lock(&seg).device_mut(4).unwrap().app_as_mut::<DigitalInputs>().unwrap().set_inputs(0x5A);
        let mut outputs: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let mut inputs: Vec<Value> = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
        inputs[0] = Value::Vector(vec![0.05, -0.05]);
        inputs[1] = Value::Integer(0x81);
        // Wall time drives the segment here: cycle at about 1 kHz, at least 500 cycles and until
        // the data has gone both ways (the drives at their targets, the terminals' bits read and
        // set), however long that takes on a loaded machine (a minute at most).
        let arrived = |outputs: &[Value]| {
            let q = outputs[0].as_slice();
            (q[0] - 0.05).abs() < 1e-4 && (q[1] + 0.05).abs() < 1e-4 && outputs[4] == Value::Integer(0x5A) && lock(&seg).device(3).unwrap().app_as::<DigitalOutputs>().unwrap().outputs() == 0x81
        };
        let started = std::time::Instant::now();
        let mut tick = 0;
        while tick < 500 || !arrived(&outputs) {
            assert!(started.elapsed() < Duration::from_secs(60), "after {tick} cycles the data has not gone both ways: q {:?}, DI {:?}", outputs[0], outputs[4]);
            assert_eq!(base.sense(tick, &mut outputs), Step::Continue, "{:?}", base.fault());
            assert_eq!(base.actuate(tick, Some(morc_kernel::Commands::all(&inputs))), Step::Continue);
            std::thread::sleep(Duration::from_millis(1));
            tick += 1;
        }
        let lost = base.bus().counters().lost_frames;
        drop(base);
        let frames = server.counters().frames.load(std::sync::atomic::Ordering::Relaxed);
        server.stop().expect("server ran without error");
        (lost, frames)
    })
    .join();
    drop(ns);
    let (lost, frames) = result.expect("veth test thread");
    assert!(frames > 500, "{frames} frames served");
    assert!(lost <= 2, "{lost} frames lost on an idle veth");
}

#[test]
fn soem_scans_maps_and_exchanges_process_data_over_veth() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    match std::process::Command::new("python3").args(["-c", "import pysoem"]).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!("MISSING PEER: pysoem is not installed for python3 (pip install pysoem, or scripts/setup --test): {}", String::from_utf8_lossy(&o.stderr).trim()),
        Err(e) => panic!("MISSING PEER: cannot run python3 ({e}); install python3 and pysoem (scripts/setup --test)"),
    }
    let ns = Netns::create();
    let (master_if, segment_if) = (ns.master_if.clone(), ns.segment_if.clone());
    let ns_name = ns.name.clone();
    let seg = shared_sim_segment(&SimSegmentConfig { drives: 2, ..Default::default() }).unwrap();
    lock(&seg).device_mut(4).unwrap().app_as_mut::<DigitalInputs>().unwrap().set_inputs(0xA5);
    let seg_for_server = seg.clone();
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let server_thread = std::thread::spawn(move || {
        let ns = Netns { name: ns_name, master_if, segment_if };
        ns.enter();
        let server = SegmentServer::start(&ns.segment_if, seg_for_server);
        let failed = server.as_ref().err().map(|e| e.to_string());
        started_tx.send(failed).unwrap();
        let _ = stop_rx.recv();
        std::mem::forget(ns); // the outer handle deletes the namespace
        server.map(|s| s.stop())
    });
    if let Some(e) = started_rx.recv().unwrap() {
        panic!("serving the segment on veth: {e}");
    }
    let script = format!("{}/tests/peers/soem_op.py", env!("CARGO_MANIFEST_DIR"));
    let out = ns.command("python3").args([&script, &ns.master_if, "5", "4", &0xA5.to_string(), "3", &0x3C.to_string()]).output().expect("run pysoem");
    let _ = stop_tx.send(());
    let _ = server_thread.join();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "SOEM over veth failed:\n{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or("")).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let names: Vec<&str> = report["devices"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["SIM-COUPLER", "MORC-402", "MORC-402", "SIM-DO8", "SIM-DI8"]);
    // 2 drives × 3 (LRW in + out) + DO 2 + DI 1.
    assert_eq!(report["expected_wkc"], 9);
    let s = lock(&seg);
    assert!(s.devices().iter().all(|d| d.esc.al_state() == AlState::Op), "SOEM left every device in OP");
    assert_eq!(s.device(3).unwrap().app_as::<DigitalOutputs>().unwrap().outputs(), 0x3C, "SOEM's outputs reached the terminal");
    assert!(s.device(1).unwrap().app_as::<Cia402Drive>().is_some());
}

/// Runs `f` on a thread of its own and fails the test if it has not finished within
/// `limit` (what used to happen here was a hang: the limit is far above the expected time).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(v)) => v,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("hung: not finished within {limit:?}"),
    }
}

/// The master's interface goes down mid-run (`ip link set … down`): the sends fail with
/// ENETDOWN; the base faults within a few cycles naming the interface and the OS error, and
/// the robot holds — no spinning on a frame that can never go out.
#[test]
fn the_master_interface_going_down_mid_run_faults_naming_the_os_error() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = Netns::create();
    let (ns_name, master_if, segment_if) = (ns.name.clone(), ns.master_if.clone(), ns.segment_if.clone());
    let (cycles, message, after) = within(Duration::from_secs(120), move || {
        let ns = Netns { name: ns_name, master_if, segment_if };
        ns.enter();
        let seg = shared_sim_segment(&SimSegmentConfig { drives: 2, ..Default::default() }).unwrap();
        let server = SegmentServer::start(&ns.segment_if, seg).expect("serve the segment on veth");
        // Generous waits: the segment server is an ordinary thread that a loaded machine
        // deschedules for milliseconds; this test is about bring-up and data, not timing.
        let master = MasterConfig { receive_timeout: Duration::from_millis(20), reply_timeout: Duration::from_millis(50), ..Default::default() };
        let config = BusConfig { master, ..Default::default() };
        let mut base = BusBase::open(Link::Interface(ns.master_if.clone()), config).unwrap_or_else(|e| panic!("bring-up over veth: {e}"));
        let mut outputs: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let mut inputs: Vec<Value> = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
        inputs[0] = Value::Vector(vec![0.02, -0.02]);
        for tick in 0..100 {
            assert_eq!(base.sense(tick, &mut outputs), Step::Continue, "{:?}", base.fault());
            assert_eq!(base.actuate(tick, Some(morc_kernel::Commands::all(&inputs))), Step::Continue);
            std::thread::sleep(Duration::from_millis(1));
        }
        ns.set_link(&ns.master_if, false);
        let mut found = None;
        for n in 1..=10u64 {
            if let Step::Fault(m) = base.sense(100 + n, &mut outputs) {
                found = Some((n, m));
                break;
            }
            let _ = base.actuate(100 + n, Some(morc_kernel::Commands::all(&inputs)));
        }
        let (cycles, message) = found.expect("no fault within 10 cycles of the link going down");
        // Faulted, the base refuses commands (the robot holds) and keeps cycling without hanging.
        let after = base.actuate(200, Some(morc_kernel::Commands::all(&inputs)));
        let still = base.sense(201, &mut outputs);
        drop(base);
        std::mem::forget(ns); // the outer handle deletes the namespace
        let _ = server.stop();
        (cycles, message, (after, still))
    });
    drop(ns);
    assert!(cycles <= 3, "fault after {cycles} cycles: {message}");
    assert!(message.contains("ecat-master: network is down (ENETDOWN)"), "{message}");
    assert!(message.contains("ip link set ecat-master up"), "{message}");
    assert!(matches!(after.1, Step::Fault(_)), "still faulted while commanded: {after:?}");
}

/// `morc bus scan` on an interface that is down: a clear error naming it, exit code 3, in
/// bounded time (it used to spin at 100 % CPU for ever).
#[test]
fn morc_bus_scan_on_a_down_interface_ends_with_a_clear_error() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = Netns::create();
    ns.set_link(&ns.master_if, false);
    let child = ns
        .command(env!("CARGO_BIN_EXE_morc"))
        .args(["bus", "scan", "--iface", &ns.master_if])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run morc");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.expect("wait for morc"),
        Err(_) => {
            // SAFETY: kill(2) on the pid of the child this test started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("morc bus scan on a down interface hung (killed after 60 s)");
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("ecat-master: network is down (ENETDOWN)") && stderr.contains("ip link set ecat-master up"), "{stderr}");
}

/// `morc bus serve` offers the same simulated cell as `morc bus scan --sim`: a master on the
/// other end of the wire finds the same 14 devices.
#[test]
fn morc_bus_serve_offers_the_cell_scan_sim_lists() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = Netns::create();
    let morc = env!("CARGO_BIN_EXE_morc");
    let mut serve = ns.command(morc).args(["bus", "serve", "--iface", &ns.segment_if]).stderr(std::process::Stdio::piped()).spawn().expect("run morc bus serve");
    // It says so once it serves.
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(serve.stderr.take().unwrap()), &mut line).unwrap();
    assert!(line.contains("serving"), "{line}");
    let scanned = ns.command(morc).args(["bus", "scan", "--iface", &ns.master_if]).output().expect("run morc bus scan");
    let _ = serve.kill();
    let _ = serve.wait();
    let local = std::process::Command::new(morc).args(["bus", "scan", "--sim"]).output().expect("run morc bus scan --sim");
    let names = |out: &std::process::Output| -> Vec<String> {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        text.lines()
            .skip(1)
            .take_while(|l| l.split_whitespace().next().is_some_and(|p| p.parse::<usize>().is_ok()))
            .map(|l| l.split_whitespace().last().unwrap_or("").to_string())
            .collect()
    };
    let (served, sim) = (names(&scanned), names(&local));
    assert_eq!(served.len(), 14, "{served:?}");
    assert_eq!(served, sim);
}

/// Runs the bus over veth against a segment served in the namespace: `scenario` gets the base
/// (cycling every 1 ms of wall time is up to it) and the server (for fault injection).
fn on_veth<T: Send + 'static>(config: BusConfig, scenario: impl FnOnce(&mut BusBase, &SegmentServer) -> T + Send + 'static) -> T {
    let ns = Netns::create();
    let (ns_name, master_if, segment_if) = (ns.name.clone(), ns.master_if.clone(), ns.segment_if.clone());
    let result = within(Duration::from_secs(120), move || {
        let ns = Netns { name: ns_name, master_if, segment_if };
        ns.enter();
        let seg = shared_sim_segment(&SimSegmentConfig { drives: 2, ..Default::default() }).unwrap();
        let server = SegmentServer::start(&ns.segment_if, seg).expect("serve the segment on veth");
        let mut base = BusBase::open(Link::Interface(ns.master_if.clone()), config).unwrap_or_else(|e| panic!("bring-up over veth: {e}"));
        let result = scenario(&mut base, &server);
        drop(base);
        std::mem::forget(ns); // the outer handle deletes the namespace
        let _ = server.stop();
        result
    });
    drop(ns);
    result
}

/// One cycle of the base with the drives commanded, then 1 ms of wall time: the fault if any.
fn tick(base: &mut BusBase, tick: u64, outputs: &mut [Value], inputs: &[Value]) -> Option<String> {
    let fault = match base.sense(tick, outputs) {
        Step::Fault(m) => Some(m),
        _ => None,
    };
    let _ = base.actuate(tick, Some(morc_kernel::Commands::all(inputs)));
    std::thread::sleep(Duration::from_millis(1));
    fault
}

/// A peer that is not real-time (an EtherCAT simulator being descheduled) answers in bursts
/// 2–4 ms late: every frame still gets its reply, well within the reply timeout (50 ms: far
/// above the stalls, so a test thread descheduled beside busy loops is not a loss either), so
/// the replies ride through as late ones — counted, reported, no frame lost, no fault. (It
/// used to fault with "3 frames in a row lost".) Each stall holds a frame at least 1.1 ms past
/// the master's receive window (0.9 ms), so each makes at least one late reply; the bound
/// asks for half of them, as the master's own thread may be descheduled past a stall.
#[test]
fn replies_late_in_bursts_ride_through_counted_as_late() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let config = BusConfig { master: MasterConfig { reply_timeout: Duration::from_millis(50), ..Default::default() }, ..Default::default() };
    let (faults, counters, status, stalls) = on_veth(config, |base, server| {
        let mut outputs: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let mut inputs: Vec<Value> = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
        inputs[0] = Value::Vector(vec![0.02, -0.02]);
        let mut faults = Vec::new();
        // About 3 s of wall time: a stall of 2, 3 or 4 ms every 50 cycles.
        for k in 0..1500u64 {
            if k % 50 == 25 {
                server.stall(Duration::from_millis(2 + (k / 50) % 3));
            }
            faults.extend(tick(base, k, &mut outputs, &inputs));
        }
        (faults, base.bus().counters(), base.handle().status(), server.counters().stalls.load(std::sync::atomic::Ordering::Relaxed))
    });
    assert!(faults.is_empty(), "late replies faulted the bus: {faults:?}");
    assert!(stalls >= 25, "{stalls} stalls");
    assert!(counters.late_replies >= stalls / 2, "late replies not counted after {stalls} stalls: {counters:?}");
    assert!(counters.lost_frames <= 2, "late replies taken for lost: {counters:?}");
    assert_eq!(status.late_replies, counters.late_replies, "the handle reports the late count");
}

/// A silent peer (the line cut behind the master's port: frames go out, nothing comes back)
/// faults once three frames in a row have had no reply within the reply timeout: within the
/// timeout's cycles + 3 (longer cycles on a loaded machine only make it fewer). The timeout is
/// 20 ms here, not the default 2 ms, so that the in-process segment server being descheduled
/// beside busy loops is not taken for silence before the peer falls silent.
#[test]
fn a_silent_peer_faults_with_frames_without_reply() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let config = BusConfig { master: MasterConfig { reply_timeout: Duration::from_millis(20), ..Default::default() }, ..Default::default() };
    let (cycles, message) = on_veth(config, |base, server| {
        let mut outputs: Vec<Value> = base.info().outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let inputs: Vec<Value> = base.info().inputs.iter().map(|p| Value::zero(p.ty)).collect();
        for k in 0..100 {
            if let Some(m) = tick(base, k, &mut outputs, &inputs) {
                panic!("fault before the peer fell silent: {m}");
            }
        }
        server.set_silent(true);
        for n in 1..=100u64 {
            if let Some(m) = tick(base, 100 + n, &mut outputs, &inputs) {
                return (n, m);
            }
        }
        panic!("no fault within 100 cycles of the peer falling silent");
    });
    let timeout_cycles = 20;
    assert!(cycles <= timeout_cycles + 3 + 1, "fault after {cycles} cycles: {message}");
    // Three in a row fault; on a loaded machine a frame may time out within the same check, so
    // the message may count one more.
    let in_a_row: u32 = message.split(" frames in a row without reply").next().and_then(|s| s.rsplit(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!((3..=5).contains(&in_a_row) && message.contains("within 20.0 ms") && message.contains("on ecat-master"), "{message}");
    // Whether a reply came late before the silence depends on scheduling; the message says which.
    assert!(message.contains("no reply came late either") || message.contains("came late in the last second"), "{message}");
    assert!(message.contains("reset faults"), "{message}");
}

/// On a real interface the clock is the wall clock: `morc --bus IF run` without `--clock`
/// cycles once per period (200 cycles at 1 ms take at least 0.2 s; on the virtual clock they
/// took a few ms, sending the drives' setpoints many times too fast), and `--clock virtual`
/// there — or `clock = "virtual"` with a real bus in morc.start_engine — is refused saying why.
#[test]
fn a_real_interface_runs_on_the_wall_clock_and_refuses_the_virtual_one() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = Netns::create();
    let morc = env!("CARGO_BIN_EXE_morc");
    let dir = std::env::temp_dir().join(format!("morc-veth-clock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("cycles.lua");
    std::fs::write(&prog, "local a = morc.assembly \"idle\"\nprint(\"start\")\nio.stdout:flush()\nlocal r = morc.engine:run(a, { duration = 0.2 })\nprint(\"done \" .. r.ticks)\n").unwrap();
    let prog = prog.to_str().unwrap().to_string();
    // Refused before anything is opened.
    let out = ns.command(morc).args(["--bus", &ns.master_if, "--clock", "virtual", "run", &prog]).output().expect("run morc");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--bus ecat-master") && stderr.contains("virtual clock cannot drive the EtherCAT bus on ecat-master") && stderr.contains("SYNC0"), "{stderr}");
    let lua = dir.join("start_engine.lua");
    std::fs::write(&lua, "local ok, err = pcall(morc.start_engine, { bus = \"ecat-master\", clock = \"virtual\" })\nprint(ok, err.kind, err.message)\n").unwrap();
    let out = ns.command(morc).args(["run", lua.to_str().unwrap()]).output().expect("run morc");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("false\tbus\t") && stdout.contains("virtual clock cannot drive the EtherCAT bus on ecat-master"), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // Without --clock: the wall clock. Two drives and I/O, no safety PLC (`morc bus serve`'s
    // cell has one, whose heartbeat watchdog, on wall time, trips while the bus comes up).
    let (ns_name, master_if, segment_if) = (ns.name.clone(), ns.master_if.clone(), ns.segment_if.clone());
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let server_thread = std::thread::spawn(move || {
        let ns = Netns { name: ns_name, master_if, segment_if };
        ns.enter();
        let seg = shared_sim_segment(&SimSegmentConfig { drives: 2, ..Default::default() }).unwrap();
        let server = SegmentServer::start(&ns.segment_if, seg);
        started_tx.send(server.as_ref().err().map(|e| e.to_string())).unwrap();
        let _ = stop_rx.recv();
        std::mem::forget(ns); // the outer handle deletes the namespace
        server.map(|s| s.stop())
    });
    if let Some(e) = started_rx.recv().unwrap() {
        panic!("serving the segment on veth: {e}");
    }
    let mut run = ns
        .command(morc)
        .args(["--bus", &ns.master_if, "run", &prog])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run morc");
    let mut lines = Vec::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(run.stdout.take().unwrap())) {
        lines.push((std::time::Instant::now(), line.unwrap()));
    }
    let status = run.wait().unwrap();
    let _ = stop_tx.send(());
    let _ = server_thread.join();
    let _ = std::fs::remove_dir_all(&dir);
    let mut stderr = String::new();
    let _ = std::io::Read::read_to_string(&mut run.stderr.take().unwrap(), &mut stderr);
    assert!(status.success(), "{lines:?}\n{stderr}");
    let texts: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(texts, ["start", "done 200"], "{stderr}");
    let took = lines[1].0 - lines[0].0;
    assert!(took >= Duration::from_millis(195), "200 cycles at 1 ms took {took:?}: not the wall clock");
}

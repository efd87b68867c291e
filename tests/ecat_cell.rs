//! A robot cell on the simulated segment, through the real master: analog terminals, the
//! safety PLC (e-stop, door, heartbeat) and a force/torque sensor, each with its device class
//! and ports on the bus base; drives run DC-synchronous (SYNC0 configured by ethercrab).
//! Line: 0 coupler, 1–2 drives, 3 DO8, 4 DI8, 5 AI4, 6 AO4, 7 safety PLC, 8 F/T sensor.

mod bus_rig;

use bus_rig::Rig;
use morc_ecat::devices::cia402::PowerState;
use morc_ecat::devices::safety_plc::reason;
use morc_ecat::transport::lock;
use morc_ecat::virtual_bus::SimSegmentConfig;
use morc_ecat_sim::{SimAnalogInputs, SimAnalogOutputs, SimForceSensor, SimSafetyPlc};
use morc_kernel::Base;
use morc_kernel::Step;
use morc_kernel::Value;

fn cell() -> Rig {
    let mut rig = Rig::new(&SimSegmentConfig::cell(2));
    *rig.input_mut("q_cmd") = Value::Vector(vec![0.1, -0.1]);
    rig
}

#[test]
fn cell_devices_get_their_classes_and_ports() {
    let rig = cell();
    let classes: Vec<Option<&str>> = (0..10).map(|p| rig.base.class_of(p)).collect();
    assert_eq!(classes, [None, Some("drive"), Some("drive"), Some("dout"), Some("din"), Some("ain"), Some("aout"), Some("safety"), Some("ft"), Some("generic")]);
    let outs: Vec<String> = rig.base.info().outputs.iter().map(|p| format!("{}:{}", p.name, p.ty)).collect();
    assert_eq!(
        outs,
        [
            "q:vector[2]",
            "qd:vector[2]",
            "tau:vector[2]",
            "enabled:boolean",
            "din4:integer",
            "ain5:vector[4]",
            "safety7:integer",
            "ft8:vector[6]",
            "dev9_ready:boolean",
            "dev9_holding:boolean",
            "dev9_fault:boolean",
            "dev9_actual_width:real",
            "dev9_motor_temperature:real"
        ]
    );
    let ins: Vec<String> = rig.base.info().inputs.iter().map(|p| format!("{}:{}", p.name, p.ty)).collect();
    assert_eq!(ins, ["q_cmd:vector[2]", "dout3:integer", "aout6:vector[4]", "dev9_enable:boolean", "dev9_acknowledge:boolean", "dev9_target_width:real", "dev9_grip_force:real", "tau_ff:vector[2]"]);
    assert_eq!(rig.base.force_sensor(0).unwrap().scaling().counts_per_newton, 1e6, "from the sensor's calibration object");
}

#[test]
fn analog_outputs_reach_the_terminal_and_inputs_scale_to_volts() {
    let mut rig = cell();
    *rig.input_mut("aout6") = Value::Vector(vec![1.5, -2.0, 0.0, 10.0]);
    rig.handle_sim::<SimAnalogInputs, _>(|ai| {
        ai.set_value(0, 2.5);
        ai.set_value(1, -7.25);
        ai.set_value(2, 12.0);
        ai.set_error(3, true);
    });
    rig.run(5, false);
    {
        let s = lock(&rig.seg);
        let ao = s.device(6).unwrap().app_as::<SimAnalogOutputs>().unwrap();
        let volts: Vec<f64> = (0..4).map(|c| ao.value(c)).collect();
        assert!(volts.iter().zip([1.5, -2.0, 0.0, 10.0]).all(|(a, b)| (a - b).abs() < 1e-3), "{volts:?}");
    }
    let ain = rig.output("ain5").as_slice().to_vec();
    assert!((ain[0] - 2.5).abs() < 1e-3 && (ain[1] + 7.25).abs() < 1e-3, "{ain:?}");
    assert!((ain[2] - 10.0).abs() < 1e-3, "clipped at the range's end: {ain:?}");
    assert!(ain[3].is_nan(), "a channel in error reads NaN");
    // A command outside ±10 V is refused, naming the terminal and the range.
    *rig.input_mut("aout6") = Value::Vector(vec![11.0, 0.0, 0.0, 0.0]);
    match rig.tick(false) {
        Step::Fault(m) => assert!(m.contains("device 6 'SIM-AO4': analog output 1 = 11 V is outside its range -10…10 V"), "{m}"),
        s => panic!("{s:?}"),
    }
}

#[test]
fn estop_holds_the_robot_and_names_the_reason_until_released_and_reset() {
    let mut rig = cell();
    rig.run(100, false);
    assert_eq!(rig.output("safety7").integer() & 8, 8, "motion permitted");
    rig.handle_sim::<SimSafetyPlc, _>(|plc| plc.set_estop(true));
    let (cycles, message) = rig.until_fault(5);
    assert!(cycles <= 2, "{cycles}");
    assert_eq!(message, "device 7 'SIM-SAFETY-PLC': safety PLC inhibits motion — e-stop pressed (reason code 1); release the e-stop, then reset faults");
    // Safe hold: the drives quick-stop and end disabled. (The tick after the fault still
    // reports it: that tick had commands, as a run's last one does.)
    assert!(matches!(rig.tick(true), Step::Fault(_)));
    rig.run(300, true);
    assert_eq!(rig.drive_states(), [PowerState::SwitchOnDisabled, PowerState::SwitchOnDisabled]);
    assert_eq!(rig.output("safety7").integer() & 9, 1, "e-stop pressed, motion not permitted");
    // A reset while it is still pressed says so.
    rig.base.reset_faults();
    match rig.tick(true) {
        Step::Fault(m) => assert!(m.starts_with("fault reset failed: device 7 'SIM-SAFETY-PLC': safety PLC inhibits motion — e-stop pressed"), "{m}"),
        s => panic!("{s:?}"),
    }
    // Released: the PLC waits for the acknowledge a reset sends, then the robot moves again.
    rig.handle_sim::<SimSafetyPlc, _>(|plc| plc.set_estop(false));
    rig.run(3, true);
    assert_eq!(rig.handle_sim::<SimSafetyPlc, _>(|plc| plc.reason()), reason::ACKNOWLEDGE_NEEDED);
    let cycles = rig.recover();
    assert!(cycles < 100, "{cycles}");
    rig.run(300, false);
    let q = rig.output("q").as_slice().to_vec();
    assert!((q[0] - 0.1).abs() < 1e-5 && (q[1] + 0.1).abs() < 1e-5, "moving again: {q:?}");
    // An open door inhibits too, unless the enabling switch is held.
    rig.handle_sim::<SimSafetyPlc, _>(|plc| {
        plc.set_enabling_switch(true);
        plc.set_door_closed(false);
    });
    rig.run(10, false);
    rig.handle_sim::<SimSafetyPlc, _>(|plc| plc.set_enabling_switch(false));
    let (_, message) = rig.until_fault(5);
    assert!(message.contains("cell door open"), "{message}");
}

#[test]
fn a_stalled_controller_trips_the_heartbeat_watchdog() {
    let mut rig = cell();
    rig.run(20, false);
    // The PLC keeps cycling while morc's heartbeat stands still (no exchanges).
    for _ in 0..20 {
        lock(&rig.seg).advance(1_000_000);
    }
    let (_, message) = rig.until_fault(5);
    assert!(message.contains("heartbeat from morc lost (reason code 3)"), "{message}");
    rig.recover();
    rig.run(50, false);
}

#[test]
fn force_sensor_reads_newtons_biases_and_reports_errors() {
    let mut rig = cell();
    rig.handle_sim::<SimForceSensor, _>(|ft| ft.set_load([10.0, -5.0, 20.0, 0.5, 0.0, -1.25]));
    rig.run(3, false);
    assert_eq!(rig.output("ft8").as_slice(), [10.0, -5.0, 20.0, 0.5, 0.0, -1.25]);
    // Tare: the present load becomes zero; what is added after shows.
    rig.base.handle().bias_force_sensors();
    rig.run(5, false);
    assert_eq!(rig.output("ft8").as_slice(), [0.0; 6]);
    rig.handle_sim::<SimForceSensor, _>(|ft| ft.set_load([10.0, -5.0, 23.0, 0.5, 0.0, -1.25]));
    rig.run(3, false);
    assert_eq!(rig.output("ft8").as_slice(), [0.0, 0.0, 3.0, 0.0, 0.0, 0.0]);
    assert_eq!(rig.handle_sim::<SimForceSensor, _>(|ft| ft.biases()), 1);
    rig.handle_sim::<SimForceSensor, _>(|ft| ft.set_error(true));
    let (_, message) = rig.until_fault(5);
    assert!(message.contains("device 8 'SIM-FT6': force/torque sensor reports an error (status 0x80000000)"), "{message}");
    rig.handle_sim::<SimForceSensor, _>(|ft| ft.set_error(false));
    rig.recover();
}

#[test]
fn drives_run_dc_synchronous_with_sync0_at_the_bus_cycle() {
    let mut rig = cell();
    rig.run(10, false);
    let devices = rig.base.bus().devices().to_vec();
    let s = lock(&rig.seg);
    let reference = s.device(0).unwrap().esc.system_time(s.time_ns());
    for d in &devices {
        let esc = &s.device(d.position).unwrap().esc;
        let drive = d.position == 1 || d.position == 2;
        assert_eq!(d.sync0, drive, "SYNC0 on the drives only: {d:?}");
        if drive {
            assert_eq!(esc.u8_at(0x0981), 0x03, "cyclic operation and SYNC0 activated");
            assert_eq!(esc.u32_at(0x09A0), 1_000_000, "SYNC0 cycle = the bus cycle (1 ms)");
            let start = esc.u64_at(0x0990);
            assert!(start > 0 && start.is_multiple_of(1_000_000), "first pulse on a cycle boundary: {start}");
            // Static drift compensation: the drives' system times agree with the reference.
            let t = esc.system_time(s.time_ns());
            assert!(t.abs_diff(reference) < 1_000, "system time {t} vs reference {reference}");
        } else {
            assert_eq!(esc.u8_at(0x0981), 0, "{}: no SYNC0", d.name);
        }
    }
}

//! The EtherCAT bus from Lua: `engine:reset_faults()`, and `engine.bus` — the running bus
//! base's diagnostics (faults, counts) and F/T bias and, on the simulated cell, its simulated
//! devices (e-stop, door, enabling switch, the load on the F/T sensor, analog inputs).

use std::sync::Arc;

use mlua::{Table, UserData, UserDataFields, UserDataMethods};

use crate::error::{raise, with_prefix, ErrorKind};
use morc_ecat::base::BusHandle;
use morc_ecat::BusError;
use morc_kernel::AssemblyData;
use morc_kernel::AssemblySpec;
use morc_kernel::{BusDiagnostics, Engine, Outcome};

/// How long `engine:reset_faults()` cycles the base after asking: recovery, the safety PLC
/// re-arming and the drives switching on take a few dozen cycles.
const RESET_SETTLE_S: f64 = 0.2;

/// The EtherCAT bus behind `bus`, for what only it has: the simulated segment's devices
/// (`bus:sim`, `bus:analog_out`) and the force/torque sensors' bias. The one place that reaches
/// the concrete bus: faults, counts, devices and the fault reset go through [`BusDiagnostics`].
fn ethercat(bus: &dyn BusDiagnostics) -> mlua::Result<&BusHandle> {
    bus.as_any()
        .downcast_ref::<BusHandle>()
        .ok_or_else(|| mlua::Error::runtime("engine.bus: this bus is not EtherCAT: it has no simulated devices nor force/torque sensors to bias"))
}

/// Which bus an engine runs on, for `tostring(engine)`: "EtherCAT bus on eth1", "EtherCAT bus
/// on the simulated segment (bus = \"sim\")", or "no bus" (the simulated robot or axes).
pub(crate) fn describe(bus: Option<&Arc<dyn BusDiagnostics>>) -> String {
    let Some(bus) = bus else { return "no bus: simulated".into() };
    match bus.as_any().downcast_ref::<BusHandle>() {
        Some(b) => match b.interface() {
            Some(iface) => format!("EtherCAT bus on {iface}"),
            None => "EtherCAT bus on the simulated segment (bus = \"sim\")".into(),
        },
        None => "a fieldbus".into(),
    }
}

/// `engine:reset_faults()`: `true` when nothing is latched any more, else `false` and why.
pub fn reset_faults(engine: &mut Engine) -> mlua::Result<(bool, Option<String>)> {
    let Some(handle) = engine.bus().cloned() else {
        // The simulated robot and axes latch no faults: a run's fault ends with the run.
        return Ok((true, None));
    };
    if engine.is_running() {
        return Err(raise(ErrorKind::Engine, "engine:reset_faults(): an assembly is running; wait for it or cancel it first"));
    }
    handle.reset_faults();
    // The base acts at its next tick; a short empty run cycles it (on either clock) while the
    // devices come back and the drives switch on.
    let mut settle = AssemblySpec::new("reset faults");
    settle.duration = Some(RESET_SETTLE_S);
    let r = engine.run(&settle, &AssemblyData::new()).map_err(crate::error::typed)?;
    match (handle.faulted(), r.outcome) {
        (false, _) => Ok((true, None)),
        (true, Outcome::Fault(f)) => Ok((false, Some(f.message))),
        (true, _) => Ok((false, Some("still faulted".into()))),
    }
}

/// `engine.bus`: the engine's bus, read through its diagnostics.
pub struct LuaBus(pub Arc<dyn BusDiagnostics>);

fn wrench(t: &Table) -> mlua::Result<[f64; 6]> {
    let mut w = [0.0; 6];
    for (i, x) in w.iter_mut().enumerate() {
        *x = t.get::<Option<f64>>(i + 1)?.ok_or_else(|| mlua::Error::runtime("bus:sim { load = { Fx, Fy, Fz, Tx, Ty, Tz } }: six numbers (N, N·m)"))?;
    }
    Ok(w)
}

/// `bus:sim { inject = { fault = …, after = s, … } }`: a fault the simulated segment raises by
/// itself `after` seconds of bus time from now.
fn schedule_fault(bus: &BusHandle, t: &Table) -> Result<(), BusError> {
    inject(bus, t).map_err(BusError::Sim)
}

fn inject(bus: &BusHandle, t: &Table) -> Result<(), String> {
    use morc_ecat_sim::ScheduledFault;
    let segment = bus.segment().ok_or("the bus is not simulated: faults can be injected on the simulated segment only")?;
    let after: f64 = t.get::<Option<f64>>("after").map_err(|e| e.to_string())?.unwrap_or(0.0);
    if !(after.is_finite() && after >= 0.0) {
        return Err(format!("inject: after must be a non-negative number of seconds, got {after}"));
    }
    let number = |key: &str| t.get::<Option<i64>>(key).map_err(|e| format!("inject: {key}: {e}"));
    let fault = match t.get::<Option<String>>("fault").map_err(|e| e.to_string())?.as_deref() {
        Some("lost_frames") => {
            let frames = number("frames")?.ok_or("inject: lost_frames needs frames = n (how many frames are lost)")?;
            ScheduledFault::LoseFrames(frames.clamp(0, u32::MAX as i64) as u32)
        }
        Some("drive") => {
            let position = number("position")?.ok_or("inject: a drive fault needs position = p (the drive's position, as morc bus scan shows)")?;
            let code = number("code")?.unwrap_or(0x8611); // following error
            ScheduledFault::DriveFault { position: position.max(0) as usize, error_code: code.clamp(0, 0xFFFF) as u16 }
        }
        Some("cut_line") => ScheduledFault::CutLine(number("position")?.ok_or("inject: cut_line needs position = p (the first device lost)")?.max(0) as usize),
        other => return Err(format!("inject: fault must be \"lost_frames\", \"drive\" or \"cut_line\", got {other:?}")),
    };
    morc_ecat::transport::lock(segment).schedule_fault((after * 1e9).round() as u64, fault)
}

/// `bus:sim { … }`: sets the simulated devices named by the keys given.
fn set_sim(bus: &BusHandle, t: Table) -> mlua::Result<()> {
    let fail = |e: BusError| with_prefix("bus:sim: ", e);
    for pair in t.pairs::<String, mlua::Value>() {
        let (key, value) = pair?;
        match (key.as_str(), value) {
            ("estop", mlua::Value::Boolean(b)) => bus.sim_safety_plc(|p| p.set_estop(b)).map_err(fail)?,
            ("door_closed", mlua::Value::Boolean(b)) => bus.sim_safety_plc(|p| p.set_door_closed(b)).map_err(fail)?,
            ("enabling_switch", mlua::Value::Boolean(b)) => bus.sim_safety_plc(|p| p.set_enabling_switch(b)).map_err(fail)?,
            ("load", mlua::Value::Table(w)) => {
                let w = wrench(&w)?;
                bus.sim_force_sensor(|f| f.set_load(w)).map_err(fail)?
            }
            ("analog_in", mlua::Value::Table(v)) => {
                let values: Vec<f64> = v.sequence_values::<f64>().collect::<mlua::Result<_>>()?;
                bus.sim_analog_inputs(|a| values.iter().enumerate().for_each(|(c, x)| a.set_value(c, *x))).map_err(fail)?
            }
            ("inject", mlua::Value::Table(i)) => schedule_fault(bus, &i).map_err(fail)?,
            (key, v) => {
                return Err(fail(BusError::Sim(format!(
                "unknown setting {key} = {} (a {}): use estop, door_closed, enabling_switch (booleans), load = {{ Fx, Fy, Fz, Tx, Ty, Tz }}, analog_in = {{ V, … }}, inject = {{ fault, after, … }}",
                v.to_string().unwrap_or_default(),
                v.type_name()
            ))))
            }
        }
    }
    Ok(())
}

impl UserData for LuaBus {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        // help(engine.bus) reads it: the userdata is made anew on each access.
        fields.add_field_method_get("__doc", |_, _| Ok(BUS_DOC));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("faulted", |_, this, ()| Ok(this.0.faulted()));
        methods.add_method("faults", |_, this, ()| Ok(this.0.faults()));
        methods.add_method("cycles", |_, this, ()| Ok(this.0.cycles()));
        methods.add_method("bias", |_, this, ()| {
            ethercat(this.0.as_ref())?.bias_force_sensors();
            Ok(())
        });
        methods.add_method("sim", |_, this, t: Table| set_sim(ethercat(this.0.as_ref())?, t));
        methods.add_method("analog_out", |_, this, channel: usize| {
            let bus = ethercat(this.0.as_ref())?;
            bus.sim_analog_outputs(|a| a.value(channel.saturating_sub(1))).map_err(|e| with_prefix("bus:analog_out: ", e))
        });
        methods.add_meta_method("__tostring", |_, this, ()| {
            Ok(format!(
                "EtherCAT bus ({} cycles, {}){}",
                this.0.cycles(),
                if this.0.faulted() { "FAULTED: engine:reset_faults()" } else { "ok" },
                if ethercat(this.0.as_ref()).is_ok_and(|b| b.segment().is_some()) { ", simulated" } else { "" }
            ))
        });
    }
}

/// The doc of `engine.bus` (shown by help(engine.bus)).
pub const BUS_DOC: &str = r#"engine.bus — the EtherCAT bus under the engine (nil on the simulated robot / axes); start one with morc.start_engine { bus = "sim" }.
  bus:faulted(), bus:faults(), bus:cycles()   latched fault?, faults since start, bus cycles
  bus:bias()                                  tares the force/torque sensors (their present load reads 0)
On the simulated cell (bus = "sim"):
  bus:sim { estop = true|false, door_closed = true|false, enabling_switch = true|false,
            load = { Fx, Fy, Fz, Tx, Ty, Tz },  analog_in = { V, … } }   sets the simulated devices
  bus:sim { inject = { fault = "lost_frames", frames = n | "drive", position = p [, code = 0x8611] | "cut_line", position = p,
                       after = s } }   the segment raises that fault by itself after s seconds of bus time (fault injection)
  bus:analog_out(channel)                     what the simulated analog output terminal puts out (V)
Faults (a drive fault, a device leaving OP, the safety PLC inhibiting motion, …) end the run that sees them with a message
naming the device and what to do; engine:reset_faults() clears them once the cause is gone.
  bus:faulted() → boolean   bus:faults() → integer   bus:cycles() → integer   bus:bias()   bus:sim(settings: table)
  bus:analog_out(channel: integer) → number"#;

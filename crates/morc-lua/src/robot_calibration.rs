//! Geometric calibration from Lua: `robot:calibrate { poses, measured }` estimates the
//! identifiable placement errors from measured tool positions (morc-model's
//! [`GeometricCalibration`]) and gives a calibrated robot, whose FK and IK (numerical once the
//! closed form no longer holds) use them; `robot:perturbed { … }` makes a robot whose geometry
//! differs from the nominal one, the hidden "true" robot of a simulated calibration.

use std::sync::Arc;

use mlua::{Lua, Table};
use nalgebra::Vector3;

use super::origin::caller;
use super::robot::LuaRobot;
use super::robot_params::{self, Units};
use crate::error::{raise, typed, ErrorKind};
use morc_model::{GeometricCalibration, Model};
use morc_robot::Robot;

/// `robot` with its models replaced by `geometry(model)` (nominal and loaded alike).
pub(crate) fn regeometried(robot: &Robot, geometry: impl Fn(&Model) -> Model, origin: &str) -> mlua::Result<Robot> {
    let mut r = Robot::new(&robot.name, geometry(&robot.unloaded), robot.joints.clone(), origin).map_err(typed)?;
    (r.cartesian, r.home, r.tool_frame) = (robot.cartesian, robot.home.clone(), robot.tool_frame);
    Ok(r.loaded(geometry(&robot.model), robot.payload))
}

/// Lua's unit for a parameter: mm for translations, ° for rotations.
fn lua_value(component: usize, x: f64) -> f64 {
    if component < 3 {
        x * 1e3
    } else {
        x.to_degrees()
    }
}

/// The joint vectors (° / mm, SI out) of the list `poses`, each a number per joint (NaN and
/// infinities are refused by `robot_params::joints`) and, with
/// `within_limits` (poses the robot moves to), within the joint limits; errors name the `what`
/// index, the joint and its value.
fn joint_poses(robot: &Robot, poses: &Table, what: &str, within_limits: bool) -> Result<Vec<Vec<f64>>, String> {
    let mut qs = Vec::new();
    for (i, q) in poses.sequence_values::<mlua::Value>().enumerate() {
        let label = format!("{what} {}", i + 1);
        let q = q.and_then(|q| robot_params::joints(robot, &q, Units::LUA, &label)).map_err(|e| e.to_string())?;
        if let Some(j) = robot.outside_limits(&q).filter(|_| within_limits) {
            let l = &robot.joints[j].limits;
            return Err(format!(
                "{label}: joint {} at {} is outside its limits [{}, {}]: the robot cannot move there; remove it or bring it within the limits",
                robot.joints[j].name,
                robot.show(j, q[j], 3),
                robot.show(j, l.lower, 1),
                robot.show(j, l.upper, 1)
            ));
        }
        qs.push(q);
    }
    Ok(qs)
}

/// `robot:calibrate { poses = { q°, … }, measured = { { x, y, z } mm, … } }`.
pub(crate) fn calibrate(lua: &Lua, robot: &Arc<Robot>, t: Table) -> mlua::Result<Table> {
    let origin = caller(lua);
    let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: robot:calibrate: {m}"));
    let poses: Table = t.get::<Option<Table>>("poses")?.ok_or_else(|| fail("give poses = { q°, … } (the joint positions where the tool was measured)".into()))?;
    let measured: Table = t.get::<Option<Table>>("measured")?.ok_or_else(|| fail("give measured = { { x, y, z } mm, … } (one tool position per pose)".into()))?;
    let qs = joint_poses(robot, &poses, "pose", false).map_err(fail)?;
    let cal = GeometricCalibration::new(&robot.model, robot.tool_frame);
    if qs.is_empty() {
        return Err(fail(format!(
            "poses is empty: give poses = {{ q°, … }} and measured = {{ {{ x, y, z }} mm, … }}, one measured position per pose (at least {} poses, spread over the workspace)",
            cal.poses_needed(cal.parameters().len())
        )));
    }
    let mut ps = Vec::new();
    for (i, p) in measured.sequence_values::<Vec<f64>>().enumerate() {
        let p = p.map_err(|_| fail(format!("measured[{}] must be {{ x, y, z }} in mm", i + 1)))?;
        if p.len() != 3 || p.iter().any(|x| !x.is_finite()) {
            return Err(fail(format!("measured[{}] must be three finite numbers {{ x, y, z }} in mm, got {p:?}", i + 1)));
        }
        ps.push(Vector3::new(p[0], p[1], p[2]) * 1e-3);
    }
    let c = cal.calibrate(&robot.model, &qs, &ps).map_err(fail)?;
    let calibrated = regeometried(robot, |m| cal.apply(m, &c.errors), &origin.to_string())?;
    let out = lua.create_table()?;
    out.set("robot", LuaRobot(Arc::new(calibrated)))?;
    out.set("rms_before", c.rms_before * 1e3)?;
    out.set("rms_after", c.rms_after * 1e3)?;
    out.set("iterations", c.iterations)?;
    out.set("observability", c.identification.observability)?;
    out.set("identified", c.identification.kept.len())?;
    let parameters = cal.parameters();
    out.set("dropped", lua.create_sequence_from(c.identification.dropped.iter().map(|(k, _)| parameters[*k].name.clone()))?)?;
    let errors = lua.create_table()?;
    for &k in &c.identification.kept {
        errors.set(parameters[k].name.as_str(), lua_value(parameters[k].component, c.errors[k]))?;
    }
    out.set("errors", errors)?;
    Ok(out)
}

/// A parameter's value from Lua's unit back to SI.
fn si_value(component: usize, x: f64) -> f64 {
    if component < 3 {
        x * 1e-3
    } else {
        x.to_radians()
    }
}

/// `robot:calibrated(errors)`: the robot with the placement errors `errors` ({ [name] = mm or ° },
/// as `calibrate` returns them and `save_calibration` saves them) in its model: what a lab's
/// program loads at start from the saved file.
pub(crate) fn calibrated(lua: &Lua, robot: &Arc<Robot>, errors: Table) -> mlua::Result<LuaRobot> {
    let origin = caller(lua);
    let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: robot:calibrated: {m}"));
    let cal = GeometricCalibration::new(&robot.model, robot.tool_frame);
    let parameters = cal.parameters();
    let mut values = vec![0.0; parameters.len()];
    for pair in errors.pairs::<String, f64>() {
        let (name, x) = pair.map_err(|_| fail("errors = { [\"name\"] = mm or °, … } (the errors table of robot:calibrate)".into()))?;
        let Some(k) = parameters.iter().position(|p| p.name == name) else {
            let known: Vec<&str> = parameters.iter().map(|p| p.name.as_str()).collect();
            return Err(fail(format!("no calibration parameter '{name}' on {} (parameters: {})", robot.name, known.join(", "))));
        };
        if !x.is_finite() {
            return Err(fail(format!("{name} = {x} is not a number")));
        }
        values[k] = si_value(parameters[k].component, x);
    }
    Ok(LuaRobot(Arc::new(regeometried(robot, |m| cal.apply(m, &values), &origin.to_string())?)))
}

/// `robot:save_calibration(path, result)`: `result`'s errors (a table from `robot:calibrate`) as a
/// Lua file that `robot:calibrated(dofile(path).errors)` reads back; never replaces a file (the next
/// free NAME-001… beside it). Returns the path written.
pub(crate) fn save_calibration(lua: &Lua, robot: &Arc<Robot>, path: String, result: Table) -> mlua::Result<String> {
    let origin = caller(lua);
    let what = format!("{origin}: robot:save_calibration");
    let errors: Table = result
        .get::<Option<Table>>("errors")?
        .ok_or_else(|| raise(ErrorKind::Robot, format!("{what}: give the table robot:calibrate returned (it has errors)")))?;
    let mut entries: Vec<(String, f64)> = errors.pairs::<String, f64>().collect::<mlua::Result<_>>()?;
    let order: Vec<String> = GeometricCalibration::new(&robot.model, robot.tool_frame).parameters().iter().map(|p| p.name.clone()).collect();
    entries.sort_by_key(|(n, _)| order.iter().position(|o| o == n).unwrap_or(usize::MAX));
    let mut text = format!(
        "-- Geometric calibration of {} (robot:calibrate): the identified placement errors, mm and °.\n-- Use: robot:calibrated(dofile(\"this file\").errors)\nreturn {{\n  robot = {:?},\n",
        robot.name, robot.name
    );
    for key in ["rms_before", "rms_after", "identified"] {
        if let Some(x) = result.get::<Option<f64>>(key)? {
            text += &format!("  {key} = {x},\n");
        }
    }
    text += "  errors = {\n";
    for (name, x) in entries {
        text += &format!("    [{name:?}] = {x:e},\n");
    }
    text += "  },\n}\n";
    crate::new_file::write_new(&crate::new_file::checked_path(lua, &path), &text, &what)
}

/// `robot:perturbed { seed = n, length = mm, angle = ° }`: every placement parameter off by up to
/// `length` or `angle` (uniform, from `seed`): a "true" robot for a simulated calibration.
pub(crate) fn perturbed(lua: &Lua, robot: &Arc<Robot>, t: Option<Table>) -> mlua::Result<LuaRobot> {
    let origin = caller(lua);
    let get = |k: &str, d: f64| -> mlua::Result<f64> { Ok(t.as_ref().map(|t| t.get::<Option<f64>>(k)).transpose()?.flatten().unwrap_or(d)) };
    let (mut seed, length, angle) = (get("seed", 1.0)? as u64, get("length", 1.0)? * 1e-3, get("angle", 0.1)?.to_radians());
    let mut uniform = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let cal = GeometricCalibration::new(&robot.model, robot.tool_frame);
    let errors: Vec<f64> = cal.parameters().iter().map(|p| if p.component < 3 { length } else { angle } * uniform()).collect();
    Ok(LuaRobot(Arc::new(regeometried(robot, |m| cal.apply(m, &errors), &origin.to_string())?)))
}

/// `robot:measurement_poses { candidates = { q°, … }, n = 30, index = "O1"…"O5" }`: the `n`
/// candidates to measure, chosen by remove-and-replace on the observability index.
pub(crate) fn measurement_poses(lua: &Lua, robot: &Arc<Robot>, t: Table) -> mlua::Result<Table> {
    let origin = caller(lua);
    let fail = |m: String| raise(ErrorKind::Robot, format!("{origin}: robot:measurement_poses: {m}"));
    let candidates: Table = t.get::<Option<Table>>("candidates")?.ok_or_else(|| fail("give candidates = { q°, … } (poses the tracker sees and the robot reaches)".into()))?;
    // The robot is to move to every chosen pose: each must be a number within the joint limits.
    let qs = joint_poses(robot, &candidates, "candidate", true).map_err(fail)?;
    if qs.is_empty() {
        return Err(fail("candidates is empty: give candidates = { q°, … }, more poses than n (the tracker sees them and the robot reaches them)".into()));
    }
    let n: usize = t.get::<Option<usize>>("n")?.unwrap_or(30);
    let name: String = t.get::<Option<String>>("index")?.unwrap_or_else(|| "O1".into());
    let index = morc_model::ObservabilityIndex::parse(&name).ok_or_else(|| fail(format!("index \"{name}\": give \"O1\" … \"O5\"")))?;
    let cal = GeometricCalibration::new(&robot.model, robot.tool_frame);
    // Checked here, before anything moves, rather than by the fit after the measurements.
    let needed = cal.poses_needed(cal.identify(&robot.model, &qs).kept.len());
    if n < needed {
        return Err(fail(format!(
            "n = {n} poses are too few: these candidates identify parameters that need at least {needed} measured poses (3 equations each, twice the unknowns): give n = {needed} or more"
        )));
    }
    let s = cal.select_poses(&robot.model, &qs, n, index).map_err(fail)?;
    let out = lua.create_table()?;
    let poses = lua.create_table()?;
    for &i in &s.chosen {
        poses.push(lua.create_sequence_from(qs[i].iter().enumerate().map(|(j, x)| x / Units::LUA.joint(robot, j)))?)?;
    }
    out.set("poses", poses)?;
    out.set("chosen", lua.create_sequence_from(s.chosen.iter().map(|i| i + 1))?)?;
    out.set("index", s.index)?;
    out.set("linear_scan_index", s.linear_scan_index)?;
    out.set("ratio", s.index / s.linear_scan_index)?;
    out.set("sweeps", s.sweeps)?;
    Ok(out)
}

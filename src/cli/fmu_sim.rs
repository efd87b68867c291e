//! `morc fmu sim FILE`: runs an FMU alone, as FMPy's `simulate` does, and
//! writes the result in FMPy's CSV layout, so the two can be compared line
//! by line: a quoted header `"time","y",…`, one row per step from the start
//! time (the default experiment's startTime), the outputs (FMPy's default
//! selection, in FMPy's order: grouped by type), numbers as Python prints them
//! (shortest round trip, `1e-05`; array cells as `%.16g` joined by spaces),
//! booleans `True`/`False`. String outputs, which FMPy leaves out, come last.
//! Rows are written as they are computed: a long run does not grow in memory.
//!
//! Inputs come from a CSV in FMPy's format (a `time` column, then one column
//! per input): continuous inputs are interpolated linearly between rows,
//! discrete ones (and strings) hold the last row at or before t; before the
//! first row the first holds, after the last the last (FMPy's `Input`). The
//! input at the start of each step is what the step sees; the first row's is
//! set in initialisation mode. Inputs without a column hold their start values.

use std::io::Write;
use std::path::Path;

use morc_fmi::description::{parse_real, FmiVersion, VarType};
use morc_fmi::FmuComponent;
use morc_kernel::AssemblyData;
use morc_kernel::Value;
use morc_kernel::{Component, InitContext, Step, StepContext};

/// The most steps one `morc fmu sim` takes: beyond it, a step is too small for the span (and
/// the CSV would not fit a disk), so it is refused before starting.
pub const MAX_STEPS: f64 = 1e8;

/// Why a simulation did not run to its end: the arguments (exit 2), or the FMU (exit 3).
pub enum SimError {
    /// Bad arguments: what to change.
    Usage(String),
    /// The FMU failed, or writing the result did.
    Fault(String),
    /// A signal (Ctrl-C: SIGINT = 2) stopped it: the message says where; the rows up to there are written.
    Interrupted(i32, String),
}

impl From<String> for SimError {
    fn from(e: String) -> Self {
        SimError::Fault(e)
    }
}

/// What `morc fmu sim` was asked.
pub struct SimOptions<'a> {
    pub file: &'a Path,
    pub start: Option<f64>,
    pub stop: Option<f64>,
    pub step: Option<f64>,
    pub params: &'a [String],
    pub input: Option<&'a Path>,
}

/// One column of an input table.
enum Cells {
    /// Numbers (booleans as 0/1), and whether to interpolate them.
    Numbers(Vec<f64>, bool),
    /// Text, for a string input (held, never interpolated).
    Text(Vec<String>),
}

/// An input table: times and, per column, the input port and its cells.
struct InputTable {
    time: Vec<f64>,
    columns: Vec<(usize, Cells)>,
}

impl InputTable {
    fn read(path: &Path, fmu: &FmuComponent) -> Result<InputTable, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header: Vec<String> = lines.next().ok_or_else(|| format!("{}: empty file", path.display()))?.split(',').map(|h| h.trim().trim_matches('"').to_string()).collect();
        if header.first().map(String::as_str) != Some("time") {
            return Err(format!("{}: the first column must be \"time\"", path.display()));
        }
        let info = fmu.info();
        let md = &fmu.fmu().description;
        let mut columns = Vec::new();
        for name in &header[1..] {
            let port = info.input_index(name).ok_or_else(|| {
                let inputs: Vec<&str> = info.inputs.iter().map(|p| p.name.as_str()).collect();
                format!("{}: column '{name}' is no input of the FMU (inputs: {})", path.display(), inputs.join(", "))
            })?;
            let variable = md.variable(name);
            let cells = if variable.is_some_and(|v| v.ty == VarType::String) { Cells::Text(Vec::new()) } else { Cells::Numbers(Vec::new(), variable.is_some_and(|v| v.variability == "continuous")) };
            columns.push((port, cells));
        }
        let mut time = Vec::new();
        for (row, line) in lines.enumerate() {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            if cells.len() != header.len() {
                return Err(format!("{}: row {} has {} cells, the header {}", path.display(), row + 2, cells.len(), header.len()));
            }
            let number = |s: &str| match s {
                "True" | "true" => Some(1.0),
                "False" | "false" => Some(0.0),
                s => parse_real(s),
            };
            let t = number(cells[0]).ok_or_else(|| format!("{}: row {}: bad time {:?}", path.display(), row + 2, cells[0]))?;
            if time.last().is_some_and(|last| t < *last) {
                return Err(format!("{}: row {}: time goes backwards", path.display(), row + 2));
            }
            time.push(t);
            for ((port, column), cell) in columns.iter_mut().zip(&cells[1..]) {
                match column {
                    Cells::Numbers(values, _) => values.push(number(cell).ok_or_else(|| format!("{}: row {}: bad value {cell:?} for {}", path.display(), row + 2, info.inputs[*port].name))?),
                    Cells::Text(values) => values.push(cell.trim_matches('"').to_string()),
                }
            }
        }
        Ok(InputTable { time, columns })
    }

    /// Sets the inputs to their values at `t`.
    fn apply(&self, t: f64, inputs: &mut [Value]) {
        let n = self.time.len();
        if n == 0 {
            return;
        }
        // Rows at or before t.
        let after = self.time.partition_point(|x| *x <= t);
        let held = after.max(1) - 1;
        for (port, column) in &self.columns {
            let (values, continuous) = match column {
                Cells::Numbers(values, continuous) => (values, *continuous),
                Cells::Text(values) => {
                    if let Value::String(s) = &mut inputs[*port] {
                        s.clone_from(&values[held]);
                    }
                    continue;
                }
            };
            let x = if after == 0 {
                values[0]
            } else if after == n || !continuous {
                values[after - 1]
            } else {
                let (t0, t1, v0, v1) = (self.time[after - 1], self.time[after], values[after - 1], values[after]);
                if t1 == t0 {
                    v1
                } else {
                    v0 + (t - t0) / (t1 - t0) * (v1 - v0)
                }
            };
            inputs[*port].set_real(x);
        }
    }
}

/// A parameter "k=v" as a value of the parameter's type.
fn parse_param(fmu: &FmuComponent, text: &str) -> Result<(String, Value), String> {
    let (name, value) = text.split_once('=').ok_or_else(|| format!("--param {text:?}: write name=value"))?;
    let current = fmu.info().param_value(name).ok_or_else(|| format!("--param {name}: the FMU has no such parameter"))?;
    let v = morc_fmi::value_from_text(current.ty(), value).ok_or_else(|| format!("--param {name}={value}: expected {}", current.ty()))?;
    Ok((name.to_string(), v))
}

/// A float as Python's repr writes it (and numpy's str): shortest round trip,
/// scientific below 1e-4 and from 1e16 with a two-digit exponent at least.
pub fn python_float(x: f64) -> String {
    special(x).unwrap_or_else(|| repr_layout(&format!("{x:e}"), 16))
}

/// A Float32 as numpy's str writes it: the shortest digits that give back the float32,
/// positional from 1e-4 up to 1e6.
fn python_float32(x: f32) -> String {
    special(f64::from(x)).unwrap_or_else(|| repr_layout(&format!("{x:e}"), 6))
}

/// nan, ±inf and ±0 as Python writes them.
fn special(x: f64) -> Option<String> {
    Some(match x {
        _ if x.is_nan() => "nan".into(),
        _ if x.is_infinite() => if x > 0.0 { "inf" } else { "-inf" }.into(),
        _ if x == 0.0 => if x.is_sign_negative() { "-0.0" } else { "0.0" }.into(),
        _ => return None,
    })
}

/// Python's repr layout of the digits in `sci` ("-1.2345e-7"): positional from 1e-4 up to
/// 10^`positional_below`.
fn repr_layout(sci: &str, positional_below: i32) -> String {
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..positional_below).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{sign}{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!("{sign}{}.{}", &digits[..point as usize], &digits[point as usize..])
        }
    } else {
        format!("{sign}{mantissa}e{}{:02}", if exponent < 0 { '-' } else { '+' }, exponent.abs())
    }
}

/// C's `%.16g` (Python's `f'{x:.16g}'`), which FMPy writes array elements with.
fn g16(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{x:.15e}"); // 16 significant digits, rounded
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |t: &str| if t.contains('.') { t.trim_end_matches('0').trim_end_matches('.').to_string() } else { t.to_string() };
    if (-4..16).contains(&exponent) {
        trim(&format!("{x:.*}", (15 - exponent) as usize))
    } else {
        format!("{}e{}{:02}", trim(mantissa), if exponent < 0 { '-' } else { '+' }, exponent.abs())
    }
}

/// A CSV cell of an output of FMI type `ty`, as FMPy writes it.
fn cell(v: &Value, ty: VarType) -> String {
    match v {
        Value::Real(x) if ty == VarType::Float32 => python_float32(*x as f32),
        Value::Real(x) => python_float(*x),
        Value::Integer(i) => i.to_string(),
        Value::Boolean(b) => if *b { "True" } else { "False" }.to_string(),
        Value::String(s) => s.clone(),
        Value::Vector(v) => v.iter().map(|x| g16(*x)).collect::<Vec<_>>().join(" "),
        Value::List(_) | Value::Record(_) => unreachable!("an FMU's outputs are never lists or records"),
    }
}

/// FMPy's column order: by type (FMI 2: Real, Integer and Enumeration, Boolean; FMI 3: its
/// eleven types in the standard's order), the model's order within a type. Strings, which FMPy
/// does not record, come last.
fn column_rank(ty: VarType, version: FmiVersion) -> usize {
    let order: &[VarType] = match version {
        FmiVersion::V2 => &[VarType::Float64, VarType::Int32, VarType::Boolean],
        FmiVersion::V3 => {
            &[VarType::Float32, VarType::Float64, VarType::Int8, VarType::UInt8, VarType::Int16, VarType::UInt16, VarType::Int32, VarType::UInt32, VarType::Int64, VarType::UInt64, VarType::Boolean]
        }
    };
    order.iter().position(|t| *t == ty).unwrap_or(order.len())
}

/// FMPy's default output interval: the default experiment's step, doubled
/// until at most 1000 steps; else a round interval giving 500 to 1000 steps.
fn default_interval(step: Option<f64>, span: f64) -> f64 {
    if let Some(mut h) = step.filter(|h| *h > 0.0) {
        while span / h > 1000.0 {
            h *= 2.0;
        }
        return h;
    }
    let mut h = 10f64.powf(span.log10().round() - 3.0);
    let n = span / h;
    if n >= 2500.0 {
        h *= 5.0;
    } else if n >= 2000.0 {
        h *= 4.0;
    } else if n >= 1000.0 {
        h *= 2.0;
    } else if n <= 200.0 {
        h /= 5.0;
    } else if n <= 250.0 {
        h /= 4.0;
    } else if n <= 500.0 {
        h /= 2.0;
    }
    h
}

/// Simulates, writing the CSV to `out` row by row; returns the number of rows.
pub fn simulate(o: &SimOptions, out: &mut dyn Write) -> Result<u64, SimError> {
    let usage = SimError::Usage;
    let fmu = morc_fmi::Fmu::open(o.file).map_err(|e| SimError::Fault(e.to_string()))?;
    let md = fmu.description.clone();
    let de = &md.default_experiment;
    let mut component = FmuComponent::new(fmu);
    let start = o.start.or(de.start_time).unwrap_or(0.0);
    let stop = o.stop.or(de.stop_time).unwrap_or(start + 1.0);
    if !(start.is_finite() && stop.is_finite() && stop > start) {
        return Err(usage(format!("the stop time ({stop} s) must come after the start time ({start} s)")));
    }
    let h = o.step.unwrap_or_else(|| default_interval(de.step_size, stop - start));
    if !(h > 0.0 && h.is_finite()) {
        return Err(usage(format!("--step must be a positive time in s, got {h}")));
    }
    let steps = ((stop - start) / h - 1e-9).ceil().max(0.0);
    if steps > MAX_STEPS {
        return Err(usage(format!("--step {h} s makes {steps:.3e} steps from {start} s to {stop} s, more than the {MAX_STEPS:.0e} morc fmu sim takes: give a larger --step")));
    }
    let steps = steps as u64;
    for p in o.params {
        let (name, value) = parse_param(&component, p).map_err(usage)?;
        component.set_parameter(&name, &value).map_err(usage)?;
    }
    component.set_parameter(morc_fmi::START_TIME, &Value::Real(start)).map_err(usage)?;
    component.configure().map_err(usage)?;
    let inputs_table = o.input.map(|p| InputTable::read(p, &component)).transpose().map_err(usage)?;
    let info = component.info().clone();
    let mut inputs: Vec<Value> = info.inputs.iter().map(morc_kernel::PortInfo::initial_value).collect();
    let mut outputs: Vec<Value> = info.outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let data = AssemblyData::new();
    if let Some(t) = &inputs_table {
        t.apply(start, &mut inputs);
        component.set_initial_inputs(inputs.clone());
    }
    component.initialize(&InitContext { name: "sim", period: h, base_period: h, data: &data, thread: &Default::default(), base_latency: 0 }, &mut outputs)?;

    // Columns in FMPy's order.
    let types: Vec<VarType> = info.outputs.iter().map(|p| md.variable(&p.name).map_or(VarType::Float64, |v| v.ty)).collect();
    let mut columns: Vec<usize> = (0..info.outputs.len()).collect();
    columns.sort_by_key(|&i| column_rank(types[i], md.version));
    let written = |e: std::io::Error| SimError::Fault(format!("cannot write the result: {e}"));
    let header: Vec<String> = std::iter::once("\"time\"".to_string()).chain(columns.iter().map(|&i| format!("\"{}\"", info.outputs[i].name))).collect();
    writeln!(out, "{}", header.join(",")).map_err(written)?;
    let mut rows = 0u64;
    let mut row = |out: &mut dyn Write, t: f64, outputs: &[Value]| -> Result<(), SimError> {
        let mut line = python_float(t);
        for &i in &columns {
            line.push(',');
            line.push_str(&cell(&outputs[i], types[i]));
        }
        rows += 1;
        writeln!(out, "{line}").map_err(written)
    };
    row(out, start, &outputs)?;
    let mut failure = None;
    for k in 0..steps {
        let t = k as f64 * h;
        if let Some(signal) = super::interrupt::stop_signal() {
            out.flush().map_err(written)?;
            let mut results = AssemblyData::new();
            component.terminate(&mut morc_kernel::AssemblyResults::new("sim", &mut results));
            return Err(SimError::Interrupted(signal, format!("stopped at t = {} s by signal {signal}; the {rows} rows up to there are written", start + t)));
        }
        if let Some(table) = &inputs_table {
            table.apply(start + t, &mut inputs);
        }
        match component.step(&StepContext { step: k, time: t, period: h }, &inputs, &mut outputs) {
            Step::Continue => row(out, start + (k + 1) as f64 * h, &outputs)?,
            Step::Finish(_) => {
                // The FMU ended the simulation: its last row is at the time it reached (FMPy's too).
                row(out, component.ended_at().unwrap_or(start + (k + 1) as f64 * h), &outputs)?;
                break;
            }
            Step::Fault(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    out.flush().map_err(written)?;
    let mut results = AssemblyData::new();
    component.terminate(&mut morc_kernel::AssemblyResults::new("sim", &mut results));
    match failure {
        // The rows up to the fault are written: the result up to there is kept.
        Some(e) => Err(SimError::Fault(format!("{e} (the result up to there is written: {rows} rows)"))),
        None => Ok(rows),
    }
}

#[cfg(test)]
mod tests {
    use super::{g16, python_float, python_float32};

    #[test]
    fn floats_print_as_python_prints_them() {
        for (x, python) in
            [(0.1, "0.1"), (1e-5, "1e-05"), (0.0001, "0.0001"), (123.456, "123.456"), (1e16, "1e+16"), (1234567890123456.0, "1234567890123456.0"), (-2.5e-7, "-2.5e-07"), (3.0, "3.0"), (0.0, "0.0")]
        {
            assert_eq!(python_float(x), python, "{x:e}");
        }
    }

    #[test]
    fn float32_prints_as_numpy_prints_it() {
        for (x, numpy) in [(0.1f32, "0.1"), (1.0 / 3.0, "0.33333334"), (1e-5, "1e-05"), (999999.0, "999999.0"), (1e6, "1e+06"), (16777216.0, "1.6777216e+07"), (-2.5, "-2.5")] {
            assert_eq!(python_float32(x), numpy, "{x:e}");
        }
    }

    #[test]
    fn array_elements_print_as_percent_16g() {
        // Python: [f'{x:.16g}' for x in (...)]
        for (x, c) in [
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0, "2"),
            (1e-5, "1e-05"),
            (123456789.125, "123456789.125"),
            (1e16, "1e+16"),
            (-0.5, "-0.5"),
            (0.0, "0"),
            (f64::from(0.1f32), "0.1000000014901161"),
            (6.02214076e23, "6.02214076e+23"),
        ] {
            assert_eq!(g16(x), c, "{x:e}");
        }
    }
}

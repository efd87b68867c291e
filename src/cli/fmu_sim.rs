//! `morc fmu sim FILE`: runs an FMU alone, as FMPy's `simulate` does, and
//! writes the result in FMPy's CSV layout, so the two can be compared line
//! by line: a quoted header `"time","y",…`, one row per step from t = 0,
//! the outputs (FMPy's default selection), numbers as Python prints them
//! (shortest round trip, `1e-05`), booleans `True`/`False`.
//!
//! Inputs come from a CSV in FMPy's format (a `time` column, then one column
//! per input): continuous inputs are interpolated linearly between rows,
//! discrete ones hold the last row at or before t; before the first row the
//! first holds, after the last the last (FMPy's `Input`). The input at the
//! start of each step is what the step sees.

use std::fmt::Write as _;
use std::path::Path;

use morc_fmi::description::parse_real;
use morc_fmi::FmuComponent;
use morc_kernel::AssemblyData;
use morc_kernel::{Component, InitContext, Step, StepContext};
use morc_kernel::{Value, ValueType};

pub struct SimOptions<'a> {
    pub file: &'a Path,
    pub stop: Option<f64>,
    pub step: Option<f64>,
    pub params: &'a [String],
    pub input: Option<&'a Path>,
}

/// An input table: times and, per column, the values and whether to interpolate.
struct InputTable {
    time: Vec<f64>,
    /// (input port, values per row, continuous)
    columns: Vec<(usize, Vec<f64>, bool)>,
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
            let continuous = md.variable(name).is_some_and(|v| v.variability == "continuous");
            columns.push((port, Vec::new(), continuous));
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
            for ((_, values, _), cell) in columns.iter_mut().zip(&cells[1..]) {
                values.push(number(cell).ok_or_else(|| format!("{}: row {}: bad value {cell:?}", path.display(), row + 2))?);
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
        for (port, values, continuous) in &self.columns {
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
    let bad = || format!("--param {name}={value}: expected {}", current.ty());
    let v = match current.ty() {
        ValueType::Real => Value::Real(parse_real(value).ok_or_else(bad)?),
        ValueType::Integer => Value::Integer(value.trim().parse().map_err(|_| bad())?),
        ValueType::Boolean => Value::Boolean(match value.trim() {
            "true" | "True" | "1" => true,
            "false" | "False" | "0" => false,
            _ => return Err(bad()),
        }),
        ValueType::String => Value::String(value.to_string()),
        ValueType::Vector(_) => Value::Vector(value.split_whitespace().map(parse_real).collect::<Option<_>>().ok_or_else(bad)?),
    };
    Ok((name.to_string(), v))
}

/// A float as Python's repr writes it (and numpy's str): shortest round trip,
/// scientific below 1e-4 and from 1e16 with a two-digit exponent at least.
pub fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    let sci = format!("{x:e}"); // shortest digits: "-1.2345e-7"
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exponent) {
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

fn cell(v: &Value) -> String {
    match v {
        Value::Real(x) => python_float(*x),
        Value::Integer(i) => i.to_string(),
        Value::Boolean(b) => if *b { "True" } else { "False" }.to_string(),
        Value::String(s) => s.clone(),
        Value::Vector(v) => v.iter().map(|x| format!("{x:e}")).collect::<Vec<_>>().join(" "),
    }
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

/// Simulates and returns the CSV text.
pub fn simulate(o: &SimOptions) -> Result<String, String> {
    let fmu = morc_fmi::Fmu::open(o.file)?;
    let de = fmu.description.default_experiment.clone();
    let mut component = FmuComponent::new(fmu);
    let stop = o.stop.or(de.stop_time).unwrap_or(1.0);
    let start = de.start_time.unwrap_or(0.0);
    let h = o.step.unwrap_or_else(|| default_interval(de.step_size, stop - start));
    if !(h > 0.0 && h.is_finite() && stop > 0.0) {
        return Err(format!("step {h} s and stop {stop} s must be positive"));
    }
    for p in o.params {
        let (name, value) = parse_param(&component, p)?;
        component.set_parameter(&name, &value)?;
    }
    component.configure()?;
    let inputs_table = o.input.map(|p| InputTable::read(p, &component)).transpose()?;
    let info = component.info().clone();
    let mut inputs: Vec<Value> = info.inputs.iter().map(|p| Value::zero(p.ty)).collect();
    let mut outputs: Vec<Value> = info.outputs.iter().map(|p| Value::zero(p.ty)).collect();
    let data = AssemblyData::new();
    if let Some(t) = &inputs_table {
        t.apply(0.0, &mut inputs);
    }
    component.initialize(&InitContext { name: "sim", period: h, base_period: h, data: &data, thread: &Default::default() }, &mut outputs)?;
    let mut csv = String::new();
    let names: Vec<String> = std::iter::once("time".to_string()).chain(info.outputs.iter().map(|p| p.name.clone())).collect();
    let _ = writeln!(csv, "{}", names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(","));
    let row = |csv: &mut String, t: f64, outputs: &[Value]| {
        let cells: Vec<String> = std::iter::once(python_float(t)).chain(outputs.iter().map(cell)).collect();
        let _ = writeln!(csv, "{}", cells.join(","));
    };
    row(&mut csv, 0.0, &outputs);
    let steps = ((stop / h) - 1e-9).ceil().max(0.0) as u64;
    for k in 0..steps {
        let t = k as f64 * h;
        if let Some(table) = &inputs_table {
            table.apply(t, &mut inputs);
        }
        match component.step(&StepContext { step: k, time: t, period: h }, &inputs, &mut outputs) {
            Step::Continue => row(&mut csv, (k + 1) as f64 * h, &outputs),
            Step::Finish(_) => {
                row(&mut csv, (k + 1) as f64 * h, &outputs);
                break;
            }
            Step::Fault(e) => return Err(e),
        }
    }
    let mut results = AssemblyData::new();
    component.terminate(&mut morc_kernel::AssemblyResults::new("sim", &mut results));
    Ok(csv)
}

#[cfg(test)]
mod tests {
    use super::python_float;

    #[test]
    fn floats_print_as_python_prints_them() {
        for (x, python) in
            [(0.1, "0.1"), (1e-5, "1e-05"), (0.0001, "0.0001"), (123.456, "123.456"), (1e16, "1e+16"), (1234567890123456.0, "1234567890123456.0"), (-2.5e-7, "-2.5e-07"), (3.0, "3.0"), (0.0, "0.0")]
        {
            assert_eq!(python_float(x), python, "{x:e}");
        }
    }
}

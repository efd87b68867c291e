//! Times the Cartesian law's per-step arithmetic and the 6-element gain in the Lua VM this build
//! links (feature `lua54` or `luajit`), one mlua function call per step as morc steps a
//! component, and prints ns per step (mean and p99 over batches).

use std::time::Instant;

use mlua::{Function, Lua, MetaMethod, UserData, UserDataMethods, Value};

const LAW: &str = include_str!("law.lua");

/// Mean and 99th percentile of ns per call over `batches` batches of `per_batch` calls.
fn time(f: &Function, batches: usize, per_batch: usize) -> (f64, f64) {
    let mut t = 0.0f64;
    // Warm-up (LuaJIT traces the loops here).
    for _ in 0..20_000 {
        t += 1.0;
        f.call::<f64>(t).expect("step runs");
    }
    let mut per_call = Vec::with_capacity(batches);
    for _ in 0..batches {
        let start = Instant::now();
        for _ in 0..per_batch {
            t += 1.0;
            f.call::<f64>(t).expect("step runs");
        }
        per_call.push(start.elapsed().as_nanos() as f64 / per_batch as f64);
    }
    let mean = per_call.iter().sum::<f64>() / per_call.len() as f64;
    per_call.sort_by(f64::total_cmp);
    (mean, per_call[per_call.len() * 99 / 100])
}

/// A stand-in for morc's matrix userdata: a 3×3 matrix read by `m:get(i, j)` and `m[i]`, taking
/// its arguments as morc-lua's linalg methods do (as `Value`s), so that the cost of one call from
/// Lua into Rust through mlua is measured in each VM.
struct Mat([f64; 9]);

impl UserData for Mat {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("get", |_, this, (i, j): (Value, Value)| {
            let (i, j) = (i.as_integer().unwrap_or(1), j.as_integer().unwrap_or(1));
            Ok(this.0[((i - 1) * 3 + (j - 1)).clamp(0, 8) as usize])
        });
        methods.add_meta_method(MetaMethod::Index, |_, this, i: Value| Ok(this.0[(i.as_integer().unwrap_or(1) - 1).clamp(0, 8) as usize]));
    }
}

/// 25 calls into Rust per step, as many as the library's Cartesian law makes into morc's model and
/// matrices (7 in-place calls, 12 reads of the frame's placement, 6 reads of the result).
const CALLS: &str = r#"local m = ...
return function(t)
  local s = 0
  for k = 1, 13 do s = s + m:get(1, 2) end
  for k = 1, 12 do s = s + m[k % 9 + 1] end
  return s
end"#;

fn main() {
    let lua = Lua::new();
    let vm: String = lua.globals().get("_VERSION").unwrap();
    let jit = lua.load("return jit and jit.version or ''").eval::<String>().unwrap();
    let (step, gain): (Function, Function) = lua.load(LAW).set_name("=law.lua").eval().unwrap();
    // The law's result, so both VMs are seen to compute the same thing.
    let qd1: f64 = step.call(0.0).unwrap();
    let (law_mean, law_p99) = time(&step, 2000, 100);
    let (gain_mean, gain_p99) = time(&gain, 2000, 1000);
    let calls: Function = lua.load(CALLS).set_name("=calls").call(Mat([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])).unwrap();
    let (calls_mean, calls_p99) = time(&calls, 2000, 100);
    println!("{vm} {jit}");
    println!("cartesian law: {law_mean:.0} ns per step (p99 of 100-step batches {law_p99:.0} ns), qd[1] at t = 0: {qd1:.15e}");
    println!("6-element gain: {gain_mean:.1} ns per step (p99 {gain_p99:.1} ns)");
    println!("25 calls into Rust userdata: {calls_mean:.0} ns per step (p99 {calls_p99:.0} ns)");
}

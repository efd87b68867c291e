//! Skill start-up overhead: from calling a skill to its assembly's first tick.
//! A skill whose assembly of native blocks runs one tick on the virtual clock: the
//! call's wall time is start-up + one tick + tear-down, an upper bound of the start-up.
//! The same assembly through engine:run directly gives the engine's share; the rest
//! is the skill machinery (param checks, ctx, precondition, evaluate).
//! Run: cargo bench --bench skill

use std::time::Instant;

use morc_kernel::EngineConfig;

fn main() {
    let engine = morc_lua::start_engine(EngineConfig::default()).expect("engine");
    let lua = morc_lua::new_state().expect("lua");
    morc_lua::install(&lua, engine).expect("install");
    let t0 = Instant::now();
    lua.globals().set("now", lua.create_function(move |_, ()| Ok(t0.elapsed().as_secs_f64())).unwrap()).unwrap();
    let code = r#"
      local function assembly()
        local a = morc.assembly { "bench", duration = morc.engine.period }
        a:add("ref", "sine", { n = 6, amplitude = 0.1, frequency = 1 })
        a:add("lp", "lowpass", { n = 6, fc = 20 })
        a:connect("ref.y", "lp.u")
        a:connect("lp.y", "robot.q_cmd")
        return a
      end
      local hold = morc.skill {
        name = "bench_hold", doc = "one tick of a native assembly",
        params = { q = { type = "vector", size = 6, unit = "rad", default = { 0, 0, 0, 0, 0, 0 }, range = { -3, 3 } },
                   speed = { type = "number", unit = "%", default = 100, range = { 1, 100 } } },
        positional = "q",
        precondition = function(ctx, p) return true end,
        execute = function(ctx, p) return ctx.engine:run(assembly()) end,
        evaluate = function(ctx, p, r) return r.ticks == 1, ("%d tick"):format(r.ticks) end,
      }
      local function measure(f, n)
        local t = {}
        for i = 1, n do local s = now(); f(); t[i] = now() - s end
        table.sort(t)
        return t[n // 2 + 1], t[math.ceil(n * 0.99)], t[n]
      end
      for _ = 1, 20 do hold { speed = 50 } end  -- warm up
      local N = 300
      local a = assembly()
      local e50, e99, emax = measure(function() assert(morc.engine:run(a).ticks == 1) end, N)
      local s50, s99, smax = measure(function() assert(hold({ 0.1, 0, 0, 0, 0, 0 }, { speed = 50 }).ok) end, N)
      local b50 = measure(function() assembly() end, N)
      print(("skill call → 1-tick native assembly done (virtual clock), %d calls:"):format(N))
      print(("  skill call        p50 %.3f ms  p99 %.3f ms  max %.3f ms"):format(s50 * 1e3, s99 * 1e3, smax * 1e3))
      print(("  engine:run alone  p50 %.3f ms  p99 %.3f ms  max %.3f ms"):format(e50 * 1e3, e99 * 1e3, emax * 1e3))
      print(("  building the assembly in Lua  p50 %.3f ms"):format(b50 * 1e3))
      print(("  skill machinery ≈ %.3f ms (p50); target: whole call < 5 ms — %s"):format((s50 - e50 - b50) * 1e3, s99 < 5e-3 and "met" or "NOT met"))
    "#;
    lua.load(code).set_name("@benches/skill.rs").exec().unwrap_or_else(|e| panic!("{e}"));
}

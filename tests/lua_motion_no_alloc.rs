//! A Lua component that plans with `morc.motion` in its init and samples every kind of object in
//! its step (profile:sample, the `sample_to` forms into its port tables and into morc vectors,
//! path:pose_to, a blended sequence with a Cartesian move solved by IK every step) allocates
//! nothing from the system allocator in steady state. The harness is tests/lua_rt_no_alloc.rs's:
//! a counting global allocator armed and disarmed from inside the assembly sees every thread.
//! One test in this binary, so no other test allocates concurrently.

use std::sync::Arc;

use morc_test_support::alloc::{all_thread_allocations, assert_allocated_nothing, counting_all_threads, reset_all_thread_allocations, CountingAllocator};
use morc_test_support::doubles::allocation_window;

use morc_kernel::*;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The planner: a KR 16-like arm from DH (closed-form IK), and one object of each kind.
const PLANNER: &str = r#"return morc.component { name = "motion_planner", outputs = { "q[6]", "qd[6]", "qdd[6]", "s" },
  init = function(self, out)
    local M, D = morc.motion, math.pi / 180
    local function row(a, alpha, d, offset) -- mm and degrees, as robots/kr16.lua
      return { a = a, alpha = alpha, d = d, offset = offset, mass = 5, com = { 0, 0, 0 }, inertia = { 0.1, 0.1, 0.1, 0, 0, 0 } }
    end
    local arm = morc.model.dh { row(260, -90, 675), row(680, 0, 0), row(35, -90, 0, -90), row(0, 90, 670), row(0, -90, 0), row(0, 0, 158) }
    local start = { 0, -90 * D, 90 * D, 0, 45 * D, 0 }
    local p = arm:frame_placement(start, "tool")
    local goal = { pos = { p.pos[1], p.pos[2] + 0.15, p.pos[3] - 0.1 }, rot = p.rot }
    local via = { 10 * D, -80 * D, 85 * D, 0, 40 * D, 5 * D }
    self.seq = M.sequence(arm, { { "ptp", via, blend = 0.05 }, { "lin", goal }, { "ptp", start } },
      { velocity = 2, acceleration = 5, jerk = 50, linear = { 0.5, 2 }, angular = { 1, 4 } }):plan(start)
    self.profile = M.profile(1, 0.5, 1, 10)
    self.spline = M.spline(6, { via, start }):plan(start, 1, 3)
    self.timed = M.timed { { time = 0, q = start }, { time = 2, q = via }, { time = 4, q = start } }
    self.fourier = M.fourier { omega = 2 * math.pi * 0.2, q0 = start, periods = 2,
      a = { -0.1, 0.1, -0.2, 0.2, 0.1, -0.1, 0.05, -0.05, -0.1, 0.1, 0.1, -0.1 }, b = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } }
    self.path = M.arc({ pos = { 0.8, 0, 1 } }, { 0.8, 0.1, 1.1 }, { pos = { 0.8, 0.2, 1 }, rpy = { 0, 0.2, 0 } })
    self.v1, self.v2, self.v3 = morc.vec(6), morc.vec(6), morc.vec(6)
    self.pos, self.rot, self.t3 = morc.vec(3), morc.mat(3, 3), { 0, 0, 0 }
    self.period = self.seq.duration + 0.5
  end,
  step = function(self, inp, out, t)
    local tau = t % self.period
    local s = self.profile:sample(tau)
    self.spline:sample_to(self.v1, self.v2, self.v3, tau)
    self.timed:sample_to(self.v1, nil, self.v3, tau)
    self.fourier:sample_to(out.qd, out.qdd, self.v2, tau)
    self.path:pose_to(self.pos, self.rot, s)
    self.path:pose_to(self.t3, nil, s)
    self.seq:sample_to(out.q, out.qd, out.qdd, tau)
    out.s = s + self.pos[1] + self.t3[2]
  end }"#;

fn planner() -> Arc<morc_lua::LuaComponentDef> {
    let lua = morc_lua::new_state().unwrap();
    let engine = morc_lua::start_engine(EngineConfig::default()).unwrap();
    morc_lua::install(&lua, engine).unwrap();
    let kind: mlua::AnyUserData = lua.load(PLANNER).set_name("=motion_planner").eval().unwrap();
    let def = kind.borrow::<morc_lua::LuaKind>().unwrap().0.clone();
    drop(kind);
    def
}

fn assembly(def: &Arc<morc_lua::LuaComponentDef>) -> AssemblySpec {
    let mut a = AssemblySpec::new("lua-motion-steady");
    a.add("window", "window", 1, allocation_window(1000, 19_000));
    let d = def.clone();
    a.add("planner", "motion_planner", 1, Arc::new(move || Ok(Box::new(morc_lua::LuaComponent::new(d.clone())) as Box<dyn Component>)));
    a.add_native("probe", "probe", 1, &[("n", Value::Integer(6)), ("capacity", Value::Integer(30_000))]);
    a.connect("planner.q", "probe.u");
    a.duration = Some(20.0);
    a.memory = Some(4 << 20);
    a
}

#[test]
fn lua_motion_sampling_allocates_nothing_in_steady_state() {
    let period = 0.001;
    let config = EngineConfig { period, clock: ClockKind::Virtual, rt: rt::RtPolicy::default() };
    let mut engine = Engine::start(config, Box::new(IdealAxes::new(&[0.0; 6], period, 1.0))).unwrap();
    let def = planner();
    // A first run warms up what blocking on channels caches per thread.
    let warm = engine.run(&assembly(&def), &AssemblyData::new()).unwrap();
    assert_eq!(warm.outcome, Outcome::Finished("duration".into()), "{:?}", warm.outcome);
    reset_all_thread_allocations();
    let r = engine.run(&assembly(&def), &AssemblyData::new()).unwrap();
    assert_eq!(r.outcome, Outcome::Finished("duration".into()), "{:?}", r.outcome);
    assert!(!counting_all_threads(), "the window closed");
    assert_eq!(r.ticks, 20_000);
    assert_allocated_nothing("18 000 steady-state ticks of a Lua component sampling morc.motion objects", all_thread_allocations());
    // The sequence ran: the reference moved away from its start and came back to it.
    let Some(Value::Vector(q)) = r.data.get("probe.u") else { panic!("probe samples") };
    let (first, largest) = (q[0], q.chunks(6).map(|s| (s[0] - q[0]).abs()).fold(0.0, f64::max));
    assert!(largest > 0.1, "joint 1 moved {largest} rad");
    assert!((first - 0.0).abs() < 1e-12, "joint 1 starts at 0: {first}");
}

-- One registry of component kinds: native blocks, a library's Lua component and a robot's kinds
-- are found by name the same way; a taken name is refused, naming both origins.
local T = require "morc.testing"
local here = "tests/lua/kind_registry.lua:"
morc.lib.load "tests/lua/libs/kindlib"

local function listed(name)
  for _, k in ipairs(morc.components()) do
    if k.name == name then return k end
  end
end

T.test("a library's kind is listed under the library's name, with its origin", function()
  local k = assert(listed("kindlib.scale"), "kindlib.scale is listed")
  T.eq(k.doc, "y = k·u, a Lua component of the kindlib library")
  assert(k.origin:find("Lua component of library kindlib (", 1, true), k.origin)
  assert(k.origin:find("kindlib/components/scale.lua:2)", 1, true), k.origin)
  T.eq(listed("gain").origin, "native")
  local info = morc.kind("kindlib.scale")
  T.eq(info.name, "kindlib.scale"); T.eq(info.params[1].name, "k"); T.eq(info.params[1].default, 2)
  T.eq(info.inputs[1].name, "u"); T.eq(info.outputs[1].name, "y")
end)

T.test("an assembly uses the library's kind by name, and it runs", function()
  local a = morc.assembly { "by_name", duration = 0.005 }
  a:add("one", "constant", { value = 1.5 })
  a:add("s", "kindlib.scale", { k = 4 })
  a:add("p", "probe")
  a:connect("one.y", "s.u")
  a:connect("s.y", "p.u")
  T.eq(a:components()[2].kind, "kindlib.scale")
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  local y = r.data["p.u"]
  T.eq(#y, 5, "samples")
  for i = 1, 5 do T.near(y[i], 6, 1e-12, "s.y") end
  -- Parameters are checked against the kind at the adding line.
  T.raises(function() a:add("s2", "kindlib.scale", { gain = 1 }) end, here, "'s2'", "gain")
end)

T.test("a taken name is refused, naming both origins; a free one is taken", function()
  local k = morc.component { name = "twice", doc = "nothing", step = function() end }
  T.raises(function() morc.register(k, "gain") end, here, "'gain' is already registered by native")
  T.raises(function() morc.register(k, "kindlib.scale") end, "already registered by Lua component of library kindlib", "Lua component of " .. here)
  local same, name = morc.register(k, "prog.twice")
  T.eq(same, k); T.eq(name, "prog.twice")
  local _, own = morc.register(k)
  T.eq(own, "twice", "default name")
  T.raises(function() morc.register(k, "prog.twice") end, "'prog.twice' is already registered by Lua component of " .. here)
  T.raises(function() morc.register("gain") end, "morc.register expects a component kind")
end)

T.test("an unknown name lists the kinds there are, the registered ones too", function()
  T.raises(function() morc.assembly("x"):add("y", "kindlib.scal") end, here, "unknown component kind 'kindlib.scal'", "kindlib.scale", "gain")
end)

T.test("an FMU registered by name runs as the native block it was exported from", function()
  local dir = os.getenv("MORC_TEST_FMUS")
    or error("MORC_TEST_FMUS is not set: run these tests with `cargo test --test lua_tests`, which exports morc's FMUs")
  local _, name = morc.register(morc.fmu(dir .. "/morc_pid.fmu"), "fmu_pid")
  T.eq(name, "fmu_pid")
  local k = listed("fmu_pid")
  assert(k.origin:find("FMU " .. dir .. "/morc_pid.fmu of " .. here, 1, true), k.origin)
  local function run(kind)
    local a = morc.assembly { kind, duration = 0.02 }
    a:add("ref", "step", { final = 1, time = 0.005 })
    a:add("pid", kind, { kp = 2, ki = 10 })
    a:add("p", "probe")
    a:add("y", "constant", { value = 0.25 })
    a:connect("ref.y", "pid.r"); a:connect("y.y", "pid.y"); a:connect("pid.u", "p.u")
    local r = morc.engine:run(a)
    T.eq(r.ok, true, r.reason)
    return r.data["p.u"]
  end
  local fmu_u, native_u = run("fmu_pid"), run("pid")
  T.eq(#fmu_u, 20, "samples")
  T.near(fmu_u, native_u, 1e-12, "pid.u")
  assert(native_u[20] > 1.55, "kp·e plus a growing integral: " .. native_u[20])
end)

T.test("robot kinds: robot:component \"ptp\", and by name once registered (degrees converted by the robot)", function()
  local kr16 = require "robots.kr16"
  local home = { 0, -90, 90, 0, 45, 0 }
  morc.use_robot(kr16, { q0 = home })
  T.eq(tostring(kr16:component "ptp"), "ptp of robot 'KUKA KR 16-2'")
  T.raises(function() kr16:component "gain" end, here, "has no component kind 'gain' (kinds: ptp, lin, circ, spline, path, time_optimal, joint_trajectory, joint_stream, rnea, elastic_feed_forward, elastic_links, jog, monitor, tracker, cartesian_velocity)")
  local _, name = morc.register(kr16:component "ptp", "arm.ptp")
  T.eq(name, "arm.ptp")
  local origin = listed("arm.ptp").origin
  assert(origin:find("robot KUKA KR 16-2 of " .. here, 1, true), origin)
  T.eq(morc.kind("arm.ptp").name, "arm.ptp")
  local target = { 10, -80, 95, 5, 40, -5 }
  local a = morc.assembly { "ptp_by_name" }
  a:add("traj", "arm.ptp", { target = target, settle = 0.05 })
  a:add("p", "probe", { n = 6 })
  a:connect("robot.q", "traj.start")
  a:connect("traj.q", "robot.q_cmd")
  a:connect("traj.qd", "robot.qd_ff")
  a:connect("robot.q", "p.u")
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  local q = r.data["p.u"]
  for i = 1, 6 do T.near(q[#q - 6 + i], math.rad(target[i]), 2e-3, "joint " .. i) end
end)

return T.summary()

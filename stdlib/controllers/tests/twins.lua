-- `morc test stdlib/controllers`: each Lua controller of the library beside its native Rust twin
-- in the same assembly on the simulated UR5, the same inputs to both, both outputs probed at
-- every step: they agree to 1e-12 at every step.
local T = require "morc.testing"
morc.lib.load "controllers"
local ur5 = require "robots.ur5"
morc.use_robot(ur5)

local DURATION = 2.0

--- The largest |a[i] − b[i]| of two probes' samples, and the largest |a[i]|.
local function compare(a, b)
  assert(#a == #b and #a > 0, ("probes of %d and %d samples"):format(#a, #b))
  local diff, size = 0, 0
  for i = 1, #a do
    diff = math.max(diff, math.abs(a[i] - b[i]))
    size = math.max(size, math.abs(a[i]))
  end
  return diff, size
end

local function six(f) local t = {} for i = 1, 6 do t[i] = f(i) end return t end

T.test("controllers.ppi equals the native ppi at every step, saturated and integrating", function()
  local a = morc.assembly { "ppi twins", duration = DURATION }
  -- References: a sine per joint around home, and its derivative as velocity feed-forward.
  local home = six(function(i) return math.rad(ur5.home[i]) end)
  a:add("q_ref", "sine", { n = 6, amplitude = 0.3, frequency = 0.7, offset = home, phase = six(function(i) return 0.4 * i end) })
  a:add("qd_ref", "sine", { n = 6, amplitude = 0.3 * 2 * math.pi * 0.7, frequency = 0.7, phase = six(function(i) return 0.4 * i + math.pi / 2 end) })
  local gains = { n = 6, kp = 30, kv = { 40, 40, 30, 10, 10, 5 }, ki = 20, umin = -60, umax = { 60, 60, 40, 20, 20, 10 } }
  a:add("rust", "ppi", gains)
  a:add("lua", "controllers.ppi", gains)
  for _, c in ipairs { "rust", "lua" } do
    a:connect("q_ref.y", c .. ".q_ref"); a:connect("qd_ref.y", c .. ".qd_ref")
    a:connect("robot.q", c .. ".q"); a:connect("robot.qd", c .. ".qd")
  end
  -- The native one drives the arm's torque feed-forward: a closed loop, seen by both alike.
  a:connect("rust.tau", "robot.tau_ff")
  a:add("p_rust", "probe", { n = 6 }); a:connect("rust.tau", "p_rust.u")
  a:add("p_lua", "probe", { n = 6 }); a:connect("lua.tau", "p_lua.u")
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  local rust, lua = r.data["p_rust.u"], r.data["p_lua.u"]
  T.eq(#rust, 6 * DURATION * 1000, "a sample per step")
  local diff, size = compare(lua, rust)
  print(("ppi: %d samples, largest |tau| %.3g N·m, largest |lua − rust| %.3g"):format(#rust, size, diff))
  assert(diff <= 1e-12, ("lua and rust differ by %g"):format(diff))
  -- The law was exercised: torques saturated on some joint (the anti-windup acted) and moved.
  local saturated = 0
  for i = 1, #rust do
    local limit = gains.umax[(i - 1) % 6 + 1]
    if rust[i] == limit or rust[i] == -60 then saturated = saturated + 1 end
  end
  assert(saturated > 0 and saturated < #rust, ("%d of %d samples saturated"):format(saturated, #rust))
end)

T.test("controllers.cartesian_velocity equals the native cartesian_velocity at every step", function()
  local a = morc.assembly { "cartesian twins", duration = DURATION }
  -- The arm moves (a ptp from home), so q, J and the pose change every step.
  ur5:add(a, "move", "ptp", { target = { 30, -70, 100, -110, -80, 40 }, vel_scale = 0.5 })
  a:connect("robot.q", "move.start"); a:connect("move.q", "robot.q_cmd")
  -- A reference pose circling in front of the arm with a turning orientation, and a velocity.
  local home_tool = ur5:fk(ur5.home)
  local pos = { home_tool.pos[1] / 1000, home_tool.pos[2] / 1000, home_tool.pos[3] / 1000 }
  local rpy = { math.rad(home_tool.rpy[1]), math.rad(home_tool.rpy[2]), math.rad(home_tool.rpy[3]) }
  a:add("x_ref", "sine", { n = 6, amplitude = { 0.05, 0.05, 0.03, 0.2, 0.1, 0.3 }, frequency = 0.5,
    phase = { 0, math.pi / 2, 0, 0.3, 0.6, 0.9 }, offset = { pos[1], pos[2], pos[3], rpy[1], rpy[2], rpy[3] } })
  a:add("v_ref", "sine", { n = 6, amplitude = { 0.1, 0.1, 0.05, 0.2, 0.2, 0.2 }, frequency = 0.5, phase = six(function(i) return 0.5 * i end) })
  a:add("q_rest", "constant", { n = 6, value = six(function(i) return math.rad(ur5.home[i]) end) })
  local params = { frame = "tool0", damping = 0.05, k = 8, k_rot = 4, k_null = 2 }
  a:add("rust", ur5:component "cartesian_velocity", params)
  params.robot = ur5
  a:add("lua", "controllers.cartesian_velocity", params)
  for _, c in ipairs { "rust", "lua" } do
    a:connect("robot.q", c .. ".q"); a:connect("x_ref.y", c .. ".x_ref")
    a:connect("v_ref.y", c .. ".v_ref"); a:connect("q_rest.y", c .. ".q_rest")
  end
  for _, p in ipairs { "rust.qd", "lua.qd", "rust.e", "lua.e" } do
    local name = "p_" .. p:gsub("%.", "_")
    a:add(name, "probe", { n = 6 }); a:connect(p, name .. ".u")
  end
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  local rust, lua = r.data["p_rust_qd.u"], r.data["p_lua_qd.u"]
  -- The ptp ends the run when the arm arrives.
  T.eq(#rust, 6 * r.ticks, "a sample per step")
  assert(r.ticks > 500, r.ticks)
  local diff, size = compare(lua, rust)
  local ediff, esize = compare(r.data["p_lua_e.u"], r.data["p_rust_e.u"])
  print(("cartesian_velocity: %d samples, largest |qd| %.3g rad/s, |lua − rust| %.3g; largest |e| %.3g, |lua − rust| %.3g"):format(#rust, size, diff, esize, ediff))
  assert(diff <= 1e-12, ("qd: lua and rust differ by %g"):format(diff))
  assert(ediff <= 1e-12, ("e: lua and rust differ by %g"):format(ediff))
  assert(size > 0.1 and esize > 0.01, "the law produced commands from a real error")
end)

T.test("controllers.elastic_feed_forward equals the native elastic_feed_forward at every step", function()
  local kr16 = require "robots.kr16_elastic"
  morc.use_robot(kr16, { q0 = { -5, -95, 85, 0, 0, 0 } })
  local a = morc.assembly { "elastic twins" }
  kr16:add(a, "move", "ptp", { target = { 0, -90, 90, 0, 0, 0 }, filter = 8, settle = 0.2 })
  a:connect("robot.q", "move.start")
  a:add("rust", kr16:component "elastic_feed_forward")
  a:add("lua", "controllers.elastic_feed_forward", { robot = kr16 })
  for _, c in ipairs { "rust", "lua" } do
    for _, p in ipairs { "q", "qd", "qdd" } do a:connect("move." .. p, c .. "." .. p) end
  end
  -- The native one drives the arm: a closed loop, seen by both alike.
  a:connect("rust.q", "robot.q_cmd"); a:connect("rust.qd", "robot.qd_ff"); a:connect("rust.tau", "robot.tau_ff")
  for _, p in ipairs { "rust.q", "lua.q", "rust.tau", "lua.tau" } do
    local name = "p_" .. p:gsub("%.", "_")
    a:add(name, "probe", { n = 6 }); a:connect(p, name .. ".u")
  end
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  local qdiff = compare(r.data["p_lua_q.u"], r.data["p_rust_q.u"])
  local tdiff, tsize = compare(r.data["p_lua_tau.u"], r.data["p_rust_tau.u"])
  print(("elastic_feed_forward: %d steps, largest |tau| %.3g N·m, |lua − rust| %.3g; motor positions |lua − rust| %.3g"):format(r.ticks, tsize, tdiff, qdiff))
  assert(qdiff <= 1e-12 and tdiff <= 1e-12 * tsize, ("lua and rust differ: q by %g, tau by %g"):format(qdiff, tdiff))
  assert(tsize > 100, "the arm carried its weight and moved")
  morc.use_robot(ur5)
end)

T.test("bad parameters are errors naming the component and what to give", function()
  local function build(params, kind)
    local a = morc.assembly { "bad", duration = 0.001 }
    a:add("c", kind or "controllers.cartesian_velocity", params)
    return morc.engine:run(a)
  end
  T.raises(function() build { robot = 6 } end, "component 'c' (controllers.cartesian_velocity): parameter 'robot' takes a robot", "got a number")
  T.raises(function() build { robot = ur5.model } end, "parameter 'robot' takes a robot", "got a model")
  T.raises(function() build { robot = "robots.no_such_arm" } end, "component 'c'", "parameter 'robot'", "cannot load its robot module 'robots.no_such_arm'")
  T.raises(function() build { frame = "nose" } end, "has no frame 'nose'", "tool0")
  T.raises(function() build { n = 7 } end, "robot 'UR5' has 6 joints, n = 7")
  -- The module's name still works, as before the robot could be handed.
  T.eq(build({ robot = "robots.ur5" }).ok, true)
  T.raises(function() build({ kp = { 1, 2 } }, "controllers.ppi") end, "parameter kp must be a number or 6 numbers (one per joint), got 2 numbers")
  T.raises(function() build({ umin = 1, umax = 0 }, "controllers.ppi") end, "umin (1) must not exceed umax (0)")
  T.raises(function() ur5:add(morc.assembly "x", "c", "cartesian_velocity", { frame = "nose" }) end, "has no such frame; its frames:", "tool0")
end)

return T.summary()

-- FMUs from Lua: morc.fmu kinds and the "fmu" kind, parameters by name (also
-- from Assembly Data), introspection, FMUs beside native components at
-- several rates, and interpolated inputs.
local T = require "morc.testing"
local engine = morc.engine
local dir = os.getenv("MORC_TEST_FMUS")
  or error("MORC_TEST_FMUS is not set: run these tests with `cargo test --test lua_tests`, which exports morc's FMUs")
local function fmu(name) return dir .. "/" .. name end

T.test("morc.fmu_info describes variables, units, interfaces and the default experiment", function()
  local info = morc.fmu_info(fmu "morc_arm.fmu")
  T.eq(info.name, "morc_arm")
  T.eq(info.fmi_version, "2.0")
  T.eq(info.co_simulation, true)
  T.eq(info.model_exchange, true)
  T.eq(info.default_experiment.stop, 2.0)
  T.eq(info.default_experiment.step, 0.001)
  local by_name = {}
  for _, v in ipairs(info.variables) do by_name[v.name] = v end
  T.eq(by_name.tau.causality, "input")
  T.eq(by_name.tau.unit, "N.m")
  T.eq(by_name.q.causality, "output")
  T.eq(by_name.friction.doc, "viscous friction coefficient")
  T.eq(morc.fmu_info(fmu "morc_arm-fmi3.fmu").fmi_version, "3.0")
  local kind = morc.fmu(fmu "morc_pid-fmi3.fmu")
  T.eq(kind.name, "morc_pid")
  T.eq(kind:info().variables[1].name, "r")
end)

-- A PID FMU (every 2) closing a loop around the arm FMU (every 1), against
-- the same loop of native blocks: the same bits, on both clocks.
local function loop(as_fmu, fmi3)
  local a = morc.assembly { as_fmu and "fmu loop" or "native loop", duration = 0.3 }
  local suffix = fmi3 and "-fmi3.fmu" or ".fmu"
  a:add("ref", "step", { final = 0.5, time = 0.05 })
  if as_fmu then
    a:add("pid", morc.fmu(fmu("morc_pid" .. suffix)), { every = 2, kp = 20, ki = 5, sample_period = 0.002 })
    a:add("arm", "fmu", { path = fmu("morc_arm" .. suffix), friction = 0.5 })
  else
    a:add("pid", "pid", { every = 2, kp = 20, ki = 5 })
    a:add("arm", "arm", { friction = 0.5 })
  end
  a:add("p", "probe")
  a:connect("ref.y", "pid.r")
  a:connect("arm.q", "pid.y", { delay = true })
  a:connect("pid.u", "arm.tau")
  a:connect("arm.q", "p.u")
  return a
end

T.test("FMUs and native components at two rates: FMU == native, virtual == wall", function()
  local native = engine:run(loop(false))
  T.eq(native.ok, true, native.reason)
  for _, fmi3 in ipairs { false, true } do
    local virtual = engine:run(loop(true, fmi3))
    T.eq(virtual.ok, true, virtual.reason)
    local n, v = native.data["p.u"], virtual.data["p.u"]
    T.eq(#v, 300)
    for i = 1, #n do T.eq(v[i], n[i], "sample " .. i) end
    T.near(v[300], 0.5, 0.2, "the arm moved towards the reference")
  end
  -- Bit-identity holds for runs without overruns; a loaded machine may stall
  -- a thread past a deadline now and then: take the first of five clean runs.
  morc.start_engine { clock = "wall" }
  local wall
  for _ = 1, 5 do
    wall = morc.engine:run(loop(true))
    if wall.components.pid.overruns == 0 then break end
  end
  morc.start_engine { clock = "virtual" }
  T.eq(wall.ok, true, wall.reason)
  T.eq(wall.components.pid.overruns, 0, "five wall-clock runs overran: the machine is too loaded to compare")
  local v, w = native.data["p.u"], wall.data["p.u"]
  for i = 1, #v do T.eq(w[i], v[i], "wall sample " .. i) end
end)

T.test("Assembly Data sets FMU parameters by name", function()
  local a = morc.assembly { "data", duration = 0.01 }
  a:add("arm", "fmu", { path = fmu "morc_arm.fmu" })
  a:add("p", "probe")
  a:connect("arm.q", "p.u")
  local r = engine:run(a, { data = { ["arm.q0"] = 0.25 } })
  T.eq(r.ok, true, r.reason)
  T.near(r.data["p.u"][1], 0.25, 1e-3, "q starts at the q0 from Assembly Data")
end)

T.test("FMU errors name the file and the line", function()
  T.raises(function() morc.fmu(fmu "missing.fmu") end, "missing.fmu", "fmus.lua:")
  local a = morc.assembly "bad"
  T.raises(function() a:add("x", "fmu", { path = fmu "morc_pid.fmu", nope = 1 }) end, "unknown parameter 'nope' of the FMU", "fmus.lua:")
  T.raises(function() a:add("x", "fmu", { kp = 1 }) end, "needs the FMU file")
end)

-- A ramp from a source every 10 ticks into a gain and into a Bessel filter,
-- native and FMU, every tick: held, the input is a staircase; interpolated,
-- a straight line one source period behind the staircase.
T.test("interpolate = { \"u\" }: linear between the slow producer's samples, one period late", function()
  local function run(interpolate)
    local a = morc.assembly { "interp", duration = 0.05 }
    a:add("src", "ramp", { every = 10, slope = 1 })
    a:add("g", "gain", { k = 1, interpolate = interpolate })
    a:add("f", "fmu", { path = fmu "morc_bessel.fmu", fc = 50, interpolate = interpolate })
    a:add("n", "bessel", { fc = 50, interpolate = interpolate })
    for _, c in ipairs { "g", "f", "n" } do
      a:add("p" .. c, "probe")
      a:connect("src.y", c .. ".u")
      a:connect(c .. ".y", "p" .. c .. ".u")
    end
    local r = engine:run(a)
    T.eq(r.ok, true, r.reason)
    local fmu_y, native_y = r.data["pf.u"], r.data["pn.u"]
    for i = 1, #native_y do T.eq(fmu_y[i], native_y[i], "FMU == native filter at " .. i) end
    return r.data["pg.u"]
  end
  local held, ramped = run(nil), run { "u" }
  -- Samples y(0) = 0, y(0.01) = 0.01, … are seen from ticks 10, 20, … (logical execution time).
  T.near(held[15], 0.0, 1e-15, "held: the first sample")
  T.near(held[25], 0.01, 1e-15, "held: the second sample")
  for tick = 20, 49 do
    -- The line from sample j − 1 to sample j over ticks 10(j+1) … 10(j+1)+9.
    T.near(ramped[tick + 1], (tick - 20) / 1000, 1e-15, "interpolated at tick " .. tick)
  end
  local ok, err = pcall(function()
    local a = morc.assembly { "bad", duration = 0.01 }
    a:add("g", "gain", { interpolate = { "nope" } })
    return engine:run(a)
  end)
  T.eq(ok and err.ok, false)
end)

return T.summary()

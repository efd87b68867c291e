-- Errors as values: a program reacts to err.kind ("bus", "robot", "model", "record", "fmi",
-- "assembly", "lua", …) and reads err.message, while tostring(err), err:find and .. keep
-- giving the text programs printed and matched before. A run's fault is r.error, the same kind
-- of value.
local T = require "morc.testing"
local kr16 = require "robots.kr16"

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))

local function write(name, text)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- The error pcall catches from f, which must fail.
local function caught(f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error")
  return err
end

-- Checks kind and message, and that the text works as before: tostring, find, match, ..
local function check(err, kind, text)
  T.eq(err.kind, kind, "kind of: " .. tostring(err))
  assert(err.message:find(text, 1, true), ("message lacks %q: %s"):format(text, err.message))
  assert(tostring(err):find(text, 1, true), tostring(err))
  assert(err:find(text, 1, true), "err:find")
  assert(("error: " .. err):find(text, 1, true), "..")
  assert(not err.message:find("stack traceback", 1, true), "the message has no traceback: " .. err.message)
end

T.test("a bad robot file is a robot error naming the file and the joint", function()
  local file = write("bad_robot.lua", [[
local model = morc.model.dh { { a = 0, alpha = 0, d = 100, mass = 1, com = { 0, 0, 0 }, inertia = { 0.1, 0.1, 0.1, 0, 0, 0 } } }
return morc.robot { name = "bad", model = model,
  joints = { { "A1", drive = { slave = 1, counts = 2^17 }, limits = { pos = { 90, -90 }, vel = 100, acc = 100, torque = 10 } } } }
]])
  local err = caught(dofile, file)
  check(err, "robot", "bad_robot.lua:2")
  check(err, "robot", "lower < upper")
  -- A program reacts to the kind.
  local what = ({ robot = "fix the robot file", bus = "check the bus" })[err.kind]
  T.eq(what, "fix the robot file")
end)

T.test("a robot's model that cannot be read is a model error", function()
  check(caught(morc.model.urdf, dir .. "/no_such.urdf"), "model", "no_such.urdf")
end)

T.test("an impossible payload is a robot error", function()
  check(caught(function() return kr16:with_payload { mass = -1 } end), "robot", "payload")
end)

T.test("a recording where no folder can be made is a record error", function()
  local file = write("a_file", "")
  local a = morc.assembly { "rec", duration = 0.01 }
  a:add("g", "step")
  a:record { "g.y", path = file .. "/x.h5" }
  local err = caught(morc.engine.run, morc.engine, a)
  check(err, "record", "cannot create directory")
  check(err, "record", "component 'rec' (recorder)")
  check(caught(a.record, a, {}), "record", "a:record needs signals")
  check(caught(plot, dir .. "/no_such.h5"), "record", "no_such.h5")
end)

T.test("an FMU that cannot be opened is an fmi error", function()
  check(caught(morc.fmu, dir .. "/no_such.fmu"), "fmi", "no_such.fmu")
  local junk = write("junk.fmu", "not a zip archive")
  check(caught(morc.fmu, junk), "fmi", "junk.fmu")
  local a = morc.assembly { "fmu", duration = 0.01 }
  check(caught(a.add, a, "f", "fmu", { path = junk }), "fmi", "junk.fmu")
end)

T.test("an assembly that cannot be built is an assembly error", function()
  local a = morc.assembly { "wires", duration = 0.01 }
  a:add("g", "gain")
  a:connect("g.nope", "robot.q_cmd")
  check(caught(morc.engine.run, morc.engine, a), "assembly", "nope")
end)

T.test("a wrong argument is a lua error; Lua's own errors stay strings", function()
  check(caught(morc.assembly, 5), "lua", "morc.assembly expects a name")
  local err = caught(error, "plain text", 0)
  T.eq(type(err), "string")
  T.eq(err, "plain text")
  T.eq(err.kind, nil)
  -- A caught error raised again keeps its kind.
  local again = caught(function() error(caught(morc.fmu, dir .. "/no_such.fmu")) end)
  T.eq(again.kind, "fmi")
end)

T.test("T.raises and tostring see the same text as before", function()
  local text = T.raises(function() morc.fmu(dir .. "/no_such.fmu") end, "no_such.fmu")
  T.eq(type(text), "string")
end)

T.test("a component's fault is the component's: r.error.kind of a Lua component's error is \"lua\"", function()
  local boom = morc.component { name = "boom", inputs = { "u" }, outputs = { "y" },
    step = function(self, inp, out, t) if t > 0.01 then error("boom at t") end end }
  local b = morc.assembly { "boom", duration = 0.1 }
  b:add("s", "step")
  b:add("x", boom)
  b:connect("s.y", "x.u")
  local r = morc.engine:run(b)
  T.eq(r.outcome, "fault")
  T.eq(r.error.kind, "lua")
  T.eq(r.error.message, r.reason)
  assert(r.error.message:find("component 'x' (boom)", 1, true), r.error.message)
  assert(r.error:find("boom at t", 1, true), tostring(r.error))
  T.eq(morc.engine:run(b, { duration = 0.005 }).error, nil)
  -- The same kind registered under a name of its own, added by that name.
  local _, name = morc.register(boom, "boom_by_name")
  local c = morc.assembly { "boom by name", duration = 0.1 }
  c:add("s", "step")
  c:add("y", name)
  c:connect("s.y", "y.u")
  local rc = morc.engine:run(c)
  T.eq(rc.error.kind, "lua")
  assert(rc.error.message:find("component 'y' (boom_by_name)", 1, true), rc.error.message)
end)

T.test("a skill that fails keeps its reason text and gives the error: result.error.kind", function()
  local open = morc.skill { name = "open_fmu", doc = "opens an FMU", params = { path = { type = "string" } },
    execute = function(ctx, p) return morc.fmu(p.path) end }
  local r = open(dir .. "/no_such.fmu")
  T.eq(r.ok, false)
  T.eq(r.stage, "execute")
  assert(r.reason:find("^open_fmu: execute failed: .*no_such%.fmu"), r.reason)
  T.eq(r.error.kind, "fmi")
  local plain = morc.skill { name = "plain", doc = "fails", execute = function() error("just text", 0) end }()
  T.eq(plain.reason, "plain: execute failed: just text")
  T.eq(plain.error, "just text")
end)

-- The bus last: the engine runs the robot on the virtual segment from here on.
T.test("a bus fault ends the run with r.error.kind == \"bus\"; a bad injection is a bus error", function()
  morc.start_engine { bus = "sim", robot = kr16 }
  local bus = morc.engine.bus
  check(caught(bus.sim, bus, { inject = { fault = "nope" } }), "bus", "fault must be")
  check(caught(bus.sim, bus, { inject = { fault = "drive", position = 99 } }), "bus", "position 99")
  bus:sim { inject = { fault = "drive", position = 2, after = 0.05 } }
  local a = morc.assembly { "move", duration = 0.5 }
  a:add("traj", kr16:component "ptp", { target = { 10, -80, 80, 0, 30, 0 } })
  a:connect("robot.q", "traj.start")
  a:connect("traj.q", "robot.q_cmd")
  local r = morc.engine:run(a)
  T.eq(r.outcome, "fault")
  check(r.error, "bus", "drive fault")
  T.eq(r.error.message, r.reason)
  assert(morc.engine:reset_faults())
end)

os.execute("rm -rf " .. dir)
T.test("calibrating from no poses is a robot error naming the call and what to give, not a panic", function()
  -- Until issue 39 the calibration's SVD of an empty matrix panicked in nalgebra (the panic's
  -- own report is tested in crates/morc-lua/src/panics.rs; tests/lua/api_sweep.lua sweeps the API).
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, err = pcall(function() return kr16:calibrate { poses = {}, measured = {} } end)
  T.eq(ok, false)
  T.eq(err.kind, "robot")
  assert(err.message:find("errors.lua:" .. line .. ": robot:calibrate: poses is empty: give poses = { q°, … }", 1, true), err.message)
  T.eq(kr16:reachable(kr16.home), true)
end)

return T.summary()

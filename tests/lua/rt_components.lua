-- Lua components on the engine's own threads: kinds loaded there by module name (upvalues,
-- helpers and require work), errors with file:line and traceback, a memory pool per stepping
-- thread whose exhaustion faults the component by name, and edited modules that run next time.
local T = require "morc.testing"
local engine = morc.engine

morc.lib.load "tests/lua/libs/rtlib"
package.path = "tests/lua/modules/?.lua;" .. package.path
local mods = require "rt_modules"

T.test("a library kind runs with its module's locals and its library's helper", function()
  local a = morc.assembly { "smooth", duration = 0.004 }
  a:add("step", "constant", { value = 16 })
  a:add("s", "rtlib.smooth", { alpha = 0.5 })
  a:add("p", "probe")
  a:connect("step.y", "s.u")
  a:connect("s.y", "p.u")
  local r = engine:run(a)
  T.eq(r.ok, true, r.reason)
  -- 8, 12, then clamped: 14 → 10, 15 → 10
  T.near(r.data["p.u"], { 8, 10, 10, 10 }, 0, "smoothed and clamped")
end)

T.test("a plain module's kind keeps its module state; two instances share it as Lua would", function()
  local a = morc.assembly { "count", duration = 0.003 }
  a:add("c1", mods.counter)
  a:add("c2", mods.counter, { every = 2 })
  local periods = morc.component { name = "rt_period", outputs = { "y" }, step = function(self, inp, out) out.y = self.period end }
  a:add("h", periods, { every = 4 })
  a:add("ph", "probe", { every = 4 })
  a:connect("h.y", "ph.u")
  a:add("p", "probe")
  a:connect("c1.y", "p.u")
  local r = engine:run(a)
  T.eq(r.ok, true, r.reason)
  T.near(r.data["p.u"], { 1, 2, 3 }, 0, "steps of c1 in its module's table")
  T.near(r.data["ph.u"], { 0.004 }, 0, "self.period of a component every 4 ticks")
end)

T.test("a runtime error faults the component with file:line and a traceback", function()
  local a = morc.assembly { "faulty", duration = 0.01 }
  a:add("one", "constant", { value = 1 })
  a:add("f", mods.faulty)
  a:connect("one.y", "f.u")
  local r = engine:run(a)
  T.eq(r.ok, false)
  T.eq(r.error.kind, "lua")
  assert(r.reason:find("component 'f' (rt_faulty) at t = 0.003 s", 1, true), r.reason)
  assert(r.reason:find("rt_modules.lua:22: attempt to index a nil value (local 'reading')", 1, true), r.reason)
  assert(r.reason:find("stack traceback:", 1, true), r.reason)
  assert(r.reason:find("rt_modules.lua:22: in", 1, true), r.reason)
  -- The report's headline is one line; the traceback follows it, indented.
  local headline = r.report:match("^[^\n]*")
  assert(headline:find("after 3 ticks", 1, true) and not headline:find("traceback", 1, true), headline)
  assert(r.report:find("\n    stack traceback:\n      ", 1, true), r.report)
end)

T.test("a full memory pool faults the component that filled it, by name; morc's own calls still work", function()
  -- hoard is refused a large block; filler fills the pool to its last bytes with small ones.
  -- Copying ports, references and the results run outside a protected call: they draw on a
  -- reserve the component's code cannot use, so a full pool is a fault, never an abort.
  for _, c in ipairs { { "h", mods.hoard, "rt_hoard" }, { "f", mods.filler, "rt_filler" } } do
    local a = morc.assembly { "full", duration = 10, memory = 1 }
    a:add(c[1], c[2])
    local r = engine:run(a)
    T.eq(r.ok, false)
    assert(r.reason:find(("component '%s' (%s)"):format(c[1], c[3]), 1, true), r.reason)
    assert(r.reason:find("Lua memory pool (1 MB", 1, true), r.reason)
    assert(r.reason:find("memory = MB", 1, true), r.reason)
    -- terminate still reports (it may use the reserve).
    assert(c[1] ~= "f" or r.data["f.filled"] > 1000, tostring(r.data["f.filled"]))
  end
  -- The engine goes on.
  local b = morc.assembly { "after", duration = 0.005 }
  b:add("c", mods.counter)
  T.eq(engine:run(b).ok, true)
  T.raises(function() morc.assembly { "x", memory = 0 } end, "memory = 0", "in MB")
end)

T.test("an edited module runs from the next assembly; changed ports ask for a reload", function()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local path = dir .. "/rt_edit.lua"
  local function write(gain, ports)
    local f = assert(io.open(path, "w"))
    f:write(([[
local gain = %d
return morc.component { name = "rt_edit", inputs = { %s }, outputs = { "y" },
  step = function(self, inp, out) out.y = gain * inp.u end }
]]):format(gain, ports))
    f:close()
  end
  write(2, '"u"')
  package.path = dir .. "/?.lua;" .. package.path
  local kind = require "rt_edit"
  local function run()
    local a = morc.assembly { "edit", duration = 0.001 }
    a:add("one", "constant", { value = 1.5 })
    a:add("e", kind)
    a:add("p", "probe")
    a:connect("one.y", "e.u")
    a:connect("e.y", "p.u")
    return engine:run(a)
  end
  local r = run()
  T.eq(r.ok, true, r.reason); T.near(r.data["p.u"], { 3 }, 0, "gain 2")
  write(5, '"u"')
  r = run()
  T.eq(r.ok, true, r.reason); T.near(r.data["p.u"], { 7.5 }, 0, "gain 5 after the edit")
  write(5, '"u", "w"')
  local ok, err = pcall(run)
  T.eq(ok, false)
  assert(tostring(err):find("changed the ports of 'rt_edit'", 1, true), tostring(err))
  assert(tostring(err):find("reload", 1, true), tostring(err))
  -- A syntax error in the edited module: its file:line, without the loader's own traceback.
  local f = assert(io.open(path, "w"))
  f:write("local gain = = 5\n")
  f:close()
  ok, err = pcall(run)
  T.eq(ok, false)
  err = tostring(err)
  assert(err:find("loading its module 'rt_edit'", 1, true) and err:find("rt_edit.lua:1: unexpected symbol near '='", 1, true), err)
  assert(select(2, err:gsub("stack traceback", "")) <= 1, err)
  os.remove(path)
  os.remove(dir)
end)
T.test("engine:swap switches to the edited module at a tick boundary, no cycle missed", function()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local path = dir .. "/rt_swap.lua"
  local function write(gain)
    local f = assert(io.open(path, "w"))
    f:write(("local gain = %d\nreturn morc.component { name = 'rt_swap', inputs = { 'u' }, outputs = { 'y' },\n" ..
      "  step = function(self, inp, out) out.y = gain * inp.u end }\n"):format(gain))
    f:close()
  end
  write(2)
  package.path = dir .. "/?.lua;" .. package.path
  local kind = require "rt_swap"
  local a = morc.assembly "live"
  a:add("one", "constant", { value = 1.5 })
  a:add("c", kind)
  a:add("p", "probe", { capacity = 1000 })
  a:connect("one.y", "c.u")
  a:connect("c.y", "p.u")
  local h = engine:start(a)
  write(5)
  local old, h2 = engine:swap()
  T.eq(old.ok, true, old.reason)
  T.eq(old.reason, "swapped for 'live'", "reason")
  h2:cancel()
  local new = h2:wait()
  T.eq(new.outcome, "cancelled")
  T.eq(math.floor((new.start_time - old.start_time) * 1000 + 0.5), old.ticks, "the new run starts the tick after the old one's last")
  T.eq(old.data["p.u"][1], 3, "old code: gain 2")
  T.eq(new.data["p.u"][1], 7.5, "new code: gain 5")
  local ok, err = pcall(engine.swap, engine)
  T.eq(ok, false)
  assert(tostring(err):find("none is running", 1, true), tostring(err))
  os.remove(path)
  os.remove(dir)
end)

T.test("vector ports sized by an integer parameter (q[n]) take the instance's size", function()
  local scale = morc.component { name = "rt_sized", inputs = { "u[n]" }, outputs = { "y[n]" }, params = { n = 2, k = 2 },
    step = function(self, inp, out) for i = 1, self.n do out.y[i] = self.k * inp.u[i] end end }
  local a = morc.assembly { "sized", duration = 0.001 }
  a:add("src", "constant", { n = 3, value = 1.5 })
  a:add("s", scale, { n = 3 })
  a:add("p", "probe", { n = 3 })
  a:connect("src.y", "s.u")
  a:connect("s.y", "p.u")
  local r = engine:run(a)
  T.eq(r.ok, true, r.reason)
  T.near(r.data["p.u"], { 3, 3, 3 }, 0, "three elements")
  T.raises(function()
    morc.component { name = "rt_unsized", inputs = { "u[m]" }, outputs = { "y" }, step = function() end }
  end, "port 'u[m]' is sized by the parameter 'm'", "params = { m = 6 }")
end)

T.test("an endless loop in a step is stopped: the component faults, the robot holds", function()
  local a = morc.assembly { "spin", duration = 1 }
  a:add("s", mods.spin)
  local r = engine:run(a)
  T.eq(r.ok, false)
  assert(r.reason:find("component 's' (rt_spin) at t = 0.002 s", 1, true), r.reason)
  assert(r.reason:find("ran past its time limit (a step: 10 periods", 1, true), r.reason)
end)

T.test("a step stopped for its time limit is reported so, even if it ran its pool out before", function()
  -- 2 MB of empty tables in a 1 MB pool: an allocation is refused, Lua's emergency collection frees the
  -- garbage and the step goes on, into a loop the watchdog stops.
  local a = morc.assembly { "spin_full", duration = 1, memory = 1 }
  a:add("s", mods.spin_after_filling)
  local r = engine:run(a)
  T.eq(r.ok, false)
  assert(r.reason:find("component 's' (rt_spin_full) at t = 0.002 s", 1, true), r.reason)
  assert(r.reason:find("ran past its time limit (a step: 10 periods", 1, true), r.reason)
end)

T.test("an endless loop inside a coroutine a step resumes is stopped too", function()
  local a = morc.assembly { "spin_co", duration = 1 }
  a:add("s", mods.spin_in_coroutine)
  local r = engine:run(a)
  T.eq(r.ok, false)
  assert(r.reason:find("component 's' (rt_spin_co) at t = 0.002 s", 1, true), r.reason)
  assert(r.reason:find("ran past its time limit (a step: 10 periods", 1, true), r.reason)
end)

T.test("steps within their time limit run without a hook (the watchdog arms one only past it)", function()
  local hooked = morc.component { name = "rt_hooked", outputs = { "y" },
    init = function(self, out) out.y = debug.gethook() and 1 or 0 end,
    step = function(self, inp, out) out.y = debug.gethook() and 1 or 0 end }
  local a = morc.assembly { "hooked", duration = 0.003 }
  a:add("h", hooked)
  a:add("p", "probe")
  a:connect("h.y", "p.u")
  local r = engine:run(a)
  T.eq(r.ok, true, r.reason)
  T.near(r.data["p.u"], { 0, 0, 0 }, 0, "no hook in any step")
end)

return T.summary()

-- Assembly Data: read by components at start, written with results at the end.
local T = require "morc.testing"
local engine = morc.engine

local function gain_assembly()
  local a = morc.assembly { "data", duration = 0.003 }
  a:add("one", "constant", { value = 2 })
  a:add("g", "gain", { k = 1 })
  a:add("p", "probe")
  a:connect("one.y", "g.u")
  a:connect("g.y", "p.u")
  return a
end

T.test("a 'component.param' entry overrides the parameter", function()
  local d = morc.data { ["g.k"] = 3.5, note = "tuning run", q0 = { 1, 2, 3 }, enabled = true }
  local r = engine:run(gain_assembly(), { data = d })
  T.near(r.data["p.u"], { 7, 7, 7 }, 0, "g.y")
  -- The same object comes back, with the results added and the inputs kept.
  T.eq(rawequal(r.data, d), true, "same Assembly Data")
  T.eq(d["p.samples"], 3)
  T.eq(d.note, "tuning run")
  T.near(d.q0, { 1, 2, 3 }, 0, "vector kept")
  T.eq(d.enabled, true)
end)

T.test("a plain table works too, and wrong types are named", function()
  local r = engine:run(gain_assembly(), { data = { ["g.k"] = 0.5 } })
  T.near(r.data["p.u"], { 1, 1, 1 }, 0)
  T.raises(function() engine:run(gain_assembly(), { data = { ["g.k"] = "high" } }) end, "from Assembly Data", "expected real")
end)

T.test("data behaves like a table", function()
  local d = morc.data { a = 1 }
  d.b = { 0.5, 0.25 }
  d.a = nil
  T.eq(d.a, nil)
  local keys = {}
  for k in pairs(d) do keys[#keys + 1] = k end
  T.eq(#keys, 1); T.eq(keys[1], "b")
  -- Lists and records, nested, come back as the tables they were.
  d.c = { "x", { y = 1 } }
  T.eq(d.c[1], "x"); T.eq(d.c[2].y, 1)
  T.raises(function() d.c = { print } end, "c[1]: expected a number, boolean, string or table, got a function")
end)

T.test("a duration given at run overrides the assembly's", function()
  local r = engine:run(gain_assembly(), { duration = 0.005 })
  T.eq(r.ticks, 5)
  T.eq(#r.data["p.u"], 5)
end)

return T.summary()

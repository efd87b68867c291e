-- Validation before anything runs: each error names the component/port and
-- the file:line where the offending statement is.
local T = require "morc.testing"
local engine = morc.engine
local here = "tests/lua/assembly_validation.lua:"

local function line_of(fn) return debug.getinfo(fn, "S").linedefined end

T.test("unknown kind is reported at the add", function()
  local a = morc.assembly "bad"
  local line = debug.getinfo(1, "l").currentline + 1
  local err = T.raises(function() a:add("x", "no_such_kind") end, "unknown component kind 'no_such_kind'", "gain")
  assert(err:find(here .. line, 1, true), err)
end)

T.test("unknown parameter is reported at the add", function()
  local a = morc.assembly "bad"
  T.raises(function() a:add("g", "gain", { gian = 2 }) end, here, "unknown parameter 'gian' of gain; known: k, n")
  T.raises(function() a:add("c", "constant", { n = 1, vlaue = 2 }) end, here, "unknown parameter 'vlaue' of constant; did you mean 'value'?")
end)

T.test("NaN and infinities in parameters are refused at the add, naming the parameter", function()
  local a = morc.assembly "bad"
  T.raises(function() a:add("c", "constant", { n = 1, value = 0/0 }) end, here, "component 'c': parameter 'value' is NaN: give a finite number")
  T.raises(function() a:add("c", "constant", { n = 2, value = { 1, math.huge } }) end, here, "component 'c': parameter 'value' (element 2) is inf")
  T.raises(function() a:add("i", "integrator", { upper = 0/0 }) end, here, "parameter 'upper' is NaN")
  -- A limit whose default is "none" (±inf) may be set to none.
  a:add("i", "integrator", { upper = math.huge, lower = -1 })
  T.raises(function() morc.assembly { "x", duration = 0/0 } end, here, "duration is NaN: give a finite number")
end)

T.test("keys morc.assembly and its methods do not know are errors naming the nearest", function()
  T.raises(function() morc.assembly { "x", duraton = 1 } end, here, "unknown key 'duraton' in morc.assembly { … }; did you mean 'duration'?")
  local a = morc.assembly "keys"
  a:add("g", "gain")
  T.raises(function() a:connect("g.y", "robot.q_cmd", { dleay = true }) end, here, "unknown key 'dleay' in a:connect's options; did you mean 'delay'?")
  T.raises(function() a:record { "g.*", evry = 2 } end, here, "unknown key 'evry' in a:record's options; did you mean 'every'?")
  T.raises(function() a:publish { "g.*", rat = 10 } end, here, "unknown key 'rat' in a:publish's options; did you mean 'rate'?")
end)

T.test("unknown component in a connection", function()
  local a = morc.assembly "bad"
  a:add("g", "gain")
  local line = debug.getinfo(1, "l").currentline + 1
  a:connect("nope.y", "g.u")
  T.raises(function() engine:check(a) end, here .. line, "no component 'nope'", "components: g, robot")
end)

T.test("unknown port lists the ports", function()
  local a = morc.assembly "bad"
  a:add("g", "gain")
  local line = debug.getinfo(1, "l").currentline + 1
  a:connect("g.out", "robot.q_cmd")
  T.raises(function() engine:check(a) end, here .. line, "g (gain) has no output 'out'", "outputs: y (real)")
end)

T.test("an input used as an output is named as such", function()
  local a = morc.assembly "bad"
  a:add("g", "gain"); a:add("h", "gain")
  a:connect("g.u", "h.u")
  T.raises(function() engine:check(a) end, "it is an input")
end)

T.test("size mismatch", function()
  local a = morc.assembly "bad"
  a:add("g6", "gain", { n = 6 })
  a:add("g3", "gain", { n = 3 })
  a:connect("robot.q", "g6.u")
  local line = debug.getinfo(1, "l").currentline + 1
  a:connect("g6.y", "g3.u")
  T.raises(function() engine:check(a) end, here .. line, "type mismatch: g6.y is vector[6] but g3.u is vector[3]")
end)

T.test("sample time must be a whole multiple of the base period", function()
  local a = morc.assembly "bad"
  local line = debug.getinfo(1, "l").currentline + 1
  a:add("g", "gain", { n = 6, period = 0.0025 })
  a:connect("robot.q", "g.u")
  T.raises(function() engine:check(a) end, here .. line, "sample time 0.0025 s is not a whole multiple of the base period 0.001 s")
  T.raises(function() a:add("h", "gain", { every = 0 }) end, "'every' of 'h' must be a whole number")
end)

T.test("same-tick loop needs a delay edge", function()
  local a = morc.assembly "bad"
  a:add("a", "gain"); a:add("b", "gain"); a:add("c", "gain")
  a:connect("a.y", "b.u")
  a:connect("b.y", "c.u")
  a:connect("c.y", "a.u")
  T.raises(function() engine:check(a) end, "same-tick loop a → b → c → a", "delay = true")
  -- Declaring one edge delayed makes it valid.
  local ok = morc.assembly "ok"
  ok:add("a", "gain"); ok:add("b", "gain")
  ok:connect("a.y", "b.u")
  ok:connect("b.y", "a.u", { delay = true })
  T.eq(engine:check(ok), true)
end)

T.test("a loop across rates is not a same-tick loop", function()
  local a = morc.assembly "ok"
  a:add("fast", "gain"); a:add("slow", "gain", { every = 5 })
  a:connect("fast.y", "slow.u")
  a:connect("slow.y", "fast.u")
  T.eq(engine:check(a), true)
end)

T.test("required input left unconnected", function()
  local a = morc.assembly "bad"
  local line = debug.getinfo(1, "l").currentline + 1
  a:add("g", "gain", { n = 6 })
  T.raises(function() engine:check(a) end, here .. line, "input g.u (vector[6]) is not connected")
end)

T.test("an input takes one source", function()
  local a = morc.assembly "bad"
  a:add("a", "gain", { n = 6 }); a:add("b", "gain", { n = 6 })
  a:connect("robot.q", "a.u")
  a:connect("robot.q", "b.u")
  a:connect("a.y", "robot.q_cmd")
  a:connect("b.y", "robot.q_cmd")
  T.raises(function() engine:check(a) end, "robot.q_cmd is already connected")
end)

T.test("a failed validation runs nothing", function()
  local a = morc.assembly "bad"
  a:add("g", "gain", { n = 6 })
  local t0 = engine:tick()
  T.raises(function() engine:run(a) end, "is not connected")
  T.eq(engine:tick(), t0, "engine tick")
end)

return T.summary()

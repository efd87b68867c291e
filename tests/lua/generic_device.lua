-- A device morc has no class for, from Lua (issue 28, item 2): the simulated cell's gripper
-- (vendor PDOs, no class) runs as a generic device whose ports come from its own PDO
-- description, named from its EEPROM's strings; a Lua component drives it at the bus rate.
local T = require "morc.testing"

morc.start_engine { bus = "sim", drives = 2 }
local engine = morc.engine
-- coupler, 2 drives, DO8, DI8, AI4, AO4, safety PLC, F/T sensor: the gripper is device 9.
local G = "robot.dev9_"

local close = morc.component {
  name = "close_gripper", doc = "closes the gripper to `goal` (0.01 mm) with `force` N and says when it is there",
  inputs = { "width" }, outputs = { "enable:boolean", "target", "force", "there:boolean" },
  params = { goal = 2000, force = 40 },
  step = function(self, inp, out)
    out.enable, out.target, out.force = true, self.goal, self.force
    out.there = math.abs(inp.width - self.goal) < 1
  end,
}

local function gripping(goal, seconds)
  local a = morc.assembly { "grip", duration = seconds }
  a:add("g", close, { goal = goal })
  a:connect(G .. "actual_width", "g.width")
  a:connect("g.enable", G .. "enable")
  a:connect("g.target", G .. "target_width")
  a:connect("g.force", G .. "grip_force")
  a:add("w", "probe"); a:connect(G .. "actual_width", "w.u")
  return engine:run(a)
end

T.test("its entries are the bus's ports, named from its EEPROM", function()
  local outputs, inputs = table.concat(engine.outputs, " "), table.concat(engine.inputs, " ")
  for _, name in ipairs { "dev9_ready", "dev9_holding", "dev9_fault", "dev9_actual_width", "dev9_motor_temperature" } do
    assert(outputs:find(name, 1, true), name .. " in " .. outputs)
  end
  for _, name in ipairs { "dev9_enable", "dev9_acknowledge", "dev9_target_width", "dev9_grip_force" } do
    assert(inputs:find(name, 1, true), name .. " in " .. inputs)
  end
end)

T.test("a Lua component closes it at 100 mm/s", function()
  local r = gripping(2000, 0.7)
  T.eq(r.outcome, "finished", r.reason)
  local w = r.data["w.u"]
  T.eq(w[1], 8000)
  -- 0.3 s in: 30 mm closed (the bus's few cycles of delay aside).
  assert(math.abs(w[300] - 5000) <= 50, "after 0.3 s: " .. w[300])
  T.eq(w[#w], 2000)
end)

T.test("a command its entry cannot take ends the run naming the port", function()
  local r = gripping(70000, 0.05)
  T.eq(r.outcome, "fault")
  assert(r.reason:find("command dev9_target_width takes 0 to 65535, got 70000", 1, true), r.reason)
end)

return T.summary()

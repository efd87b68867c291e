-- guide: hand guiding (direct teaching) of a group of the robot by admittance control, with
-- teach-in by the handle's button.
local drive = require "stdlib.assemblies.drive"
local takes = require "stdlib.assemblies.base_inputs"
local cmd = require "stdlib.motion.command"

--- The guiding assembly for robot's group with the admittance's parameters p.
local function assembly(robot, p, duration)
  local a = morc.assembly { "hand guiding", duration = duration }
  a:add("adm", "teach.admittance", {
    n = robot.dof, np = robot.dof * p.capacity, robot = p.robot_module ~= "" and p.robot_module or robot, group = p.group,
    until_released = p.until_released, mass = p.mass, damping = p.damping, stiffness = p.stiffness, v_max = p.v_max / 1000, a_max = p.a_max / 1000,
    load_mass = p.load_mass, load_com = { p.load_com[1] / 1000, p.load_com[2] / 1000, p.load_com[3] / 1000 },
    box_min = { p.box_min[1] / 1000, p.box_min[2] / 1000, p.box_min[3] / 1000 },
    box_max = { p.box_max[1] / 1000, p.box_max[2] / 1000, p.box_max[3] / 1000 },
  })
  for _, port in ipairs { "q", "ft", "enable", "button" } do a:connect("robot." .. port, "adm." .. port) end
  drive(a, robot, "adm", takes("tau_ff"), "adm.tau")
  if p.record then a:record { "robot.q", "robot.ft", "adm.*", notes = "hand guiding, group " .. p.group } end
  return a
end

--- Why `group` of `robot` cannot be guided by its F/T sensor, or nil: the sensor feels the hand
--- only on the chain it sits on, so a group with a joint that does not move the sensor would be
--- pushed by a hand on another wrist (and a hand on its own wrist go unfelt).
local function unsensed(robot, group)
  local on_chain = {}
  for _, j in ipairs(robot.ft.joints) do on_chain[j] = true end
  local g = robot.groups[group]
  for k, j in ipairs(g.joints) do
    if not on_chain[j] then
      local sensed = {}
      for name, other in pairs(robot.groups) do
        local all = true
        for _, i in ipairs(other.joints) do all = all and on_chain[i] end
        if all then sensed[#sensed + 1] = ("group = %q"):format(name) end
      end
      table.sort(sensed)
      sensed[#sensed + 1] = "group = \"\" (the sensor's own chain)"
      return ("group '%s' has no F/T sensor on its chain: its joint %s does not move the sensor of robot '%s' at '%s' (on %s); guide %s, or give this group's wrist a sensor"):format(
        group, g.names[k], robot.name, robot.ft.frame, table.concat(robot.ft.names, ", "), table.concat(sensed, " or "))
    end
  end
end

return morc.skill {
  name = "guide",
  doc = [[hand guiding of a group of the robot by admittance control: M dV/dt + D V = F from the wrist F/T sensor,
the orientation held; the handle's button stores the pose (teach-in). Runs for `time` seconds (0: as long as the
simulated operator's script, r:sim_hand). The component on the engine's thread is handed the robot the engine runs
(its model shared, not loaded again). Measured: taught (count), points (° / mm, whole robot), recording.]],
  params = {
    robot_module = { type = "string", default = "", doc = "another definition of the robot for the law, as require names its module (\"\": the robot the engine runs, as it should be)" },
    group = { type = "string", default = "", doc = "the group guided (\"\": all joints)" },
    time = { type = "number", unit = "s", default = 0, range = { 0, 3600 }, doc = "how long (0: the simulated hand's script)" },
    mass = { type = "number", unit = "kg", default = 1, range = { 0.01, 100 }, doc = "M_d" },
    damping = { type = "number", unit = "N*s/m", default = 50, range = { 0, 10000 }, doc = "D_d" },
    stiffness = { type = "number", unit = "N/m", default = 0, range = { 0, 100000 }, doc = "K: a spring to where guiding started" },
    v_max = { type = "number", unit = "mm/s", default = 250, range = { 1, 1000 }, doc = "the tool's speed limit (collaborative: 250)" },
    a_max = { type = "number", unit = "mm/s2", default = 20000, range = { 10, 100000 }, doc = "the tool's acceleration limit" },
    load_mass = { type = "number", unit = "kg", default = 0, range = { 0, 100 }, doc = "the tool's mass on the sensor" },
    load_com = { type = "vector", size = 3, unit = "mm", default = { 0, 0, 0 }, doc = "its centre of mass in the sensor frame" },
    box_min = { type = "vector", size = 3, unit = "mm", default = { -1e6, -1e6, -1e6 }, doc = "the workspace box's lower corner (base frame)" },
    box_max = { type = "vector", size = 3, unit = "mm", default = { 1e6, 1e6, 1e6 }, doc = "its upper corner" },
    until_released = { type = "number", unit = "s", default = 0.5, range = { 0, 60 }, doc = "the run ends when the enabling switch has been let go this long after guiding (0: never)" },
    capacity = { type = "integer", default = 64, range = { 1, 1000 }, doc = "most points taught in one run" },
    record = { type = "boolean", default = false, doc = "record the run to HDF5" },
    wait = { type = "boolean", default = true, doc = "false: return at once with a session (s:store() keeps the pose now, s:stop() ends guiding), for teaching from the REPL" },
  },
  precondition = function(ctx, p)
    local robot = cmd.robot(ctx)
    if not robot.ft then return false, ("robot '%s' has no F/T sensor (ft = { frame = … } in its definition)"):format(robot.name) end
    if not takes("q_cmd") then return false, "the engine's base takes no position command" end
    for _, port in ipairs { "ft", "enable", "button" } do
      local found = false
      for _, o in ipairs(ctx.engine.outputs) do found = found or o == "robot." .. port or o == port end
      if not found then return false, ("the engine's base has no '%s' port (the simulated robot with an F/T sensor has)"):format(port) end
    end
    if p.group ~= "" then
      if not robot.groups[p.group] then return false, ("robot '%s' has no group '%s'"):format(robot.name, p.group) end
      local why = unsensed(robot, p.group)
      if why then return false, why end
    end
    if p.time == 0 then
      p.time = robot:sim_hand_duration()
      if p.time == 0 then return false, "time = 0 needs a simulated operator's script (r:sim_hand { … }); give the guiding time" end
    end
    return true
  end,
  execute = function(ctx, p)
    local robot = cmd.robot(ctx)
    --- The points the button taught in run result r, then `stored` (° / mm), named P1, P2, …
    local function points_of(r, stored)
      local points = {}
      for k, q in ipairs(r.data["adm.points"] or {}) do points[k] = cmd.degrees(q, robot) end
      for _, q in ipairs(stored or {}) do points[#points + 1] = q end
      for k, q in ipairs(points) do q.name = "P" .. k end
      return points
    end
    if not p.wait then
      -- Guiding goes on in the background; the REPL stays free to store poses.
      local handle = ctx.engine:start(assembly(robot, p, p.time))
      local stored = {}
      local session = {}
      --- Keeps the pose the robot is at now (° / mm); returns how many are kept.
      function session.store()
        stored[#stored + 1] = robot:state().q
        return #stored
      end
      --- Ends guiding; returns { ok, taught, points, recording }, the button's points first.
      function session.stop()
        if handle:status() == "running" then handle:cancel() end
        local r = handle:wait()
        if not r.ok and r.outcome ~= "cancelled" then return r end
        local points = points_of(r, stored)
        return { ok = true, taught = #points, points = points, recording = r.recordings and r.recordings[1] }
      end
      return { ok = true, taught = 0, points = {}, session = session }
    end
    local r = ctx.engine:run(assembly(robot, p, p.time))
    if not r.ok then return r end
    local points = points_of(r)
    return { ok = true, taught = #points, points = points, recording = r.recordings and r.recordings[1] }
  end,
  evaluate = function(ctx, p, r)
    if r.session then return true, "guiding: s = result.session; s.store() keeps the pose, s.stop() ends" end
    return true, ("%d points taught"):format(r.taught)
  end,
}

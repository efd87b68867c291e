-- stdlib/motion/group.lua — a group of a robot's joints as an object (r.left, r.right on the
-- dual-arm stacker): its joints, its tool, forward kinematics and PTP of its own joints, the
-- others held where they are.
local Group = {}
Group.__index = Group

--- The robot's joints (degrees / mm) with the group's set to `qg` (one per group joint) and the
--- others from `full` (default: where the robot is).
function Group:full(qg, full)
  local q = {}
  full = full or self.robot:state().q
  for i = 1, self.robot.dof do q[i] = full[i] end
  for c, j in ipairs(self.joints) do q[j] = qg[c] end
  return q
end

--- The group's joints (degrees / mm) out of a whole-robot vector (default: where the robot is).
function Group:part(full)
  full = full or self.robot:state().q
  local qg = {}
  for c, j in ipairs(self.joints) do qg[c] = full[j] end
  return qg
end

--- The group's tool pose ({ pos = {mm}, rpy = {°} }) at the whole-robot joints q.
function Group:fk(q) return self.robot:fk(q, self.tool) end

--- PTP of the group's joints to qg (degrees / mm), the robot's other joints held.
function Group:ptp(qg, params)
  local motion = morc.lib.load("motion").skills
  return motion.ptp(self:full(qg), params or {})
end

local takes = require "stdlib.assemblies.base_inputs"

--- Runs motions of several groups of `robot` at the same time, each from where the robot is:
--- parts = { left = moves, right = moves } with moves as a path takes them ({ "ptp", qg }, …)
--- in the group's joints (° / mm). Each group's path is planned on its own; a joint that two
--- parts move is refused, naming both. opts: speed, acc (%), max_error (°/mm), record, settle (s).
--- Returns { ok, durations = { left = s, … }, duration } or { ok = false, reason }.
local function together(robot, parts, opts)
  opts = opts or {}
  local start = robot:state().q
  local names, owner, plans = {}, {}, {}
  for name in pairs(parts) do names[#names + 1] = name end
  table.sort(names)
  if #names == 0 then return { ok = false, reason = "together: no groups' motions given" } end
  local full_moves = {}
  for _, name in ipairs(names) do
    if not robot.groups[name] then return { ok = false, reason = ("together: robot '%s' has no group '%s'"):format(robot.name, name) } end
    local g = robot[name]
    local moves = {}
    for i, m in ipairs(parts[name]) do
      if m[1] ~= "ptp" then return { ok = false, reason = ("together: %s's move %d is '%s'; groups run PTP moves together"):format(name, i, tostring(m[1])) } end
      local q = g:full(m[2], start)
      moves[i] = { "ptp", q }
      for c, j in ipairs(g.joints) do
        if math.abs(q[j] - start[j]) > 1e-9 then
          if owner[j] and owner[j] ~= name then
            return { ok = false, reason = ("together: groups '%s' and '%s' both move joint %s; a joint is commanded by one group at a time"):format(owner[j], name, robot.joints[j].name) }
          end
          owner[j] = name
        end
      end
    end
    full_moves[name] = moves
    local plan = robot:plan(start, moves, { vel_scale = (opts.speed or 100) / 100, acc_scale = (opts.acc or 100) / 100 })
    if not plan.ok then return { ok = false, reason = ("together: group %s: %s"):format(name, plan.reason) } end
    plans[name] = plan.duration
  end
  -- Each group's trajectory drives the joints it owns (the first group also the joints nobody
  -- moves, which all trajectories hold): masks and sums merge them into one command.
  local a = morc.assembly { "together: " .. table.concat(names, " + ") }
  local duration = 0
  for k, name in ipairs(names) do
    local traj = "traj_" .. name
    a:add(traj, robot:component("path"), { moves = full_moves[name], vel_scale = (opts.speed or 100) / 100, acc_scale = (opts.acc or 100) / 100, settle = -1 })
    a:connect("robot.q", traj .. ".start")
    local mask = {}
    for j = 1, robot.dof do mask[j] = (owner[j] == name or (owner[j] == nil and k == 1)) and 1 or 0 end
    for _, port in ipairs { "q", "qd", "qdd" } do
      a:add(port .. "_" .. name, "gain", { n = robot.dof, k = mask })
      a:connect(traj .. "." .. port, port .. "_" .. name .. ".u")
    end
    duration = math.max(duration, plans[name])
  end
  local signs = string.rep("+", #names)
  for _, port in ipairs { "q", "qd", "qdd" } do
    a:add("merged_" .. port, "sum", { n = robot.dof, signs = signs })
    for k, name in ipairs(names) do a:connect(port .. "_" .. name .. ".y", ("merged_%s.u%d"):format(port, k)) end
  end
  -- The merged reference as one source for the drives, monitored as any motion.
  robot:add(a, "mon", "monitor", { max_error = opts.max_error or 2 })
  a:connect("merged_q.y", "mon.q_ref"); a:connect("robot.q", "mon.q"); a:connect("robot.qd", "mon.qd"); a:connect("robot.tau", "mon.tau")
  a:connect("merged_q.y", "robot.q_cmd")
  if takes("qd_ff") then a:connect("merged_qd.y", "robot.qd_ff") end
  if takes("tau_ff") then
    robot:add(a, "ff", "rnea")
    a:connect("merged_q.y", "ff.q"); a:connect("merged_qd.y", "ff.qd"); a:connect("merged_qdd.y", "ff.qdd")
    a:connect("ff.tau", "robot.tau_ff")
  end
  if opts.record then a:record { "robot.*", "merged_q.y", "mon.error", notes = opts.notes or "together" } end
  a.duration = duration + (opts.settle or 0.2)
  local r = morc.engine:run(a)
  if not r.ok then return { ok = false, reason = r.reason, run = r } end
  return { ok = true, durations = plans, duration = duration, run = r }
end

return {
  --- The group `name` of `robot` (robot.groups[name]: joints, names, tool).
  of = function(robot, name)
    local g = robot.groups[name]
    return setmetatable({ robot = robot, name = name, joints = g.joints, names = g.names, tool = g.tool, dof = #g.joints }, Group)
  end,
  together = together,
}

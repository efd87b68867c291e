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
  local p = { self:full(qg) }
  for k, v in pairs(params or {}) do p[k] = v end
  return motion.ptp(p)
end

--- The group `name` of `robot` (robot.groups[name]: joints, names, tool).
return function(robot, name)
  local g = robot.groups[name]
  return setmetatable({ robot = robot, name = name, joints = g.joints, names = g.names, tool = g.tool, dof = #g.joints }, Group)
end, Group

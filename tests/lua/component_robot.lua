-- A Lua component handed the robot (params = { robot = morc.ROBOT }) or a model (morc.MODEL):
-- its own state, on the engine's thread, sees the same robot read-only and computes with its
-- model; a wrong type is an error naming the component and the parameter.
local T = require "morc.testing"

-- Defined in this chunk: its functions travel to the engine's state as bytecode.
local jacobian = morc.component {
  name = "jacobian_probe",
  doc = "the tool's Jacobian at q (row after row), with the robot's own model",
  inputs = { "q[n]" },
  outputs = { "j[nj]", "dof" },
  params = { n = 6, nj = 36, robot = morc.ROBOT, frame = "tool0" },
  init = function(self, out)
    self.model = self.robot.model
    self.J = morc.mat(6, self.n)
    out.dof = self.robot.dof
  end,
  step = function(self, inp, out)
    local J, n, j = self.J, self.n, out.j
    self.model:frame_jacobian_to(J, inp.q, self.frame)
    for r = 1, 6 do
      for c = 1, n do j[(r - 1) * n + c] = J:get(r, c) end
    end
  end,
}

local gravity = morc.component {
  name = "gravity_probe",
  doc = "the model's gravity torques at q",
  inputs = { "q[n]" },
  outputs = { "tau[n]" },
  params = { n = 6, model = morc.MODEL },
  init = function(self, out) self.tau = morc.vec(self.n) end,
  step = function(self, inp, out)
    self.model:gravity_to(self.tau, inp.q)
    self.tau:totable(out.tau)
  end,
}

--- A matrix's elements row after row.
local function flat(M, rows, cols)
  local t = {}
  for r = 1, rows do
    for c = 1, cols do t[#t + 1] = M:get(r, c) end
  end
  return t
end

--- Runs `kind` on the engine's robot with `params` for `ticks` steps, q probed beside it; returns
--- the run, the last q and the component's last `port` (n numbers).
local function run(kind, params, port, n, ticks)
  local a = morc.assembly { "handed", duration = ticks * morc.engine.period }
  a:add("c", kind, params)
  a:connect("robot.q", "c.q")
  a:add("pq", "probe", { n = params.n }); a:connect("robot.q", "pq.u")
  a:add("pc", "probe", { n = n }); a:connect("c." .. port, "pc.u")
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  local q, c = r.data["pq.u"], r.data["pc.u"]
  local last_q, last_c = {}, {}
  for i = 1, params.n do last_q[i] = q[#q - params.n + i] end
  for i = 1, n do last_c[i] = c[#c - n + i] end
  return r, last_q, last_c
end

T.test("a robot parameter needs a robot: none on the engine is an error at a:add", function()
  T.eq(morc.current_robot, nil)
  T.raises(function() morc.assembly("x"):add("c", jacobian, {}) end, "component 'c' (jacobian_probe): parameter 'robot' needs a robot", "morc.use_robot")
end)

T.test("a component handed a robot computes with its model on the engine, as the program's model does", function()
  local ur5 = require "robots.ur5"
  morc.use_robot(ur5, { q0 = { 10, -80, 90, -30, 40, 20 } })
  local _, q, j = run(jacobian, { n = 6, nj = 36, robot = ur5 }, "j", 36, 5)
  T.near(j, flat(ur5.model:frame_jacobian(q, "tool0"), 6, 6), 1e-12, "J")
  assert(math.abs(j[1]) + math.abs(j[2]) > 0.1, "a real Jacobian")
  -- Not given: the robot on the engine; and the robot's module's name, as before.
  local _, q2, j2 = run(jacobian, { n = 6, nj = 36 }, "j", 36, 3)
  T.near(j2, j, 1e-9)
  local _, _, j3 = run(jacobian, { n = 6, nj = 36, robot = "robots.ur5" }, "j", 36, 3)
  T.near(j3, flat(ur5.model:frame_jacobian(q2, "tool0"), 6, 6), 1e-12)
end)

T.test("the component's robot is read-only there, its name, joints and model the program's", function()
  local a = morc.assembly { "ro", duration = morc.engine.period }
  local ur5 = morc.current_robot
  a:add("c", jacobian, { n = 6, nj = 36, robot = ur5 })
  a:connect("robot.q", "c.q")
  a:add("p", "probe", { n = 1 }); a:connect("c.dof", "p.u")
  local b = morc.assembly { "ro2", duration = morc.engine.period }
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  T.eq(r.data["p.u"][1], 6)
  -- read_only is a boolean output: checked through a run that fails otherwise.
  b:add("c", morc.component {
    name = "writer", inputs = {}, outputs = { "y" }, params = { robot = morc.ROBOT },
    init = function(self, out) self.robot:set_payload { mass = 1 } end,
    step = function() end,
  }, { robot = ur5 })
  T.raises(function() local rb = morc.engine:run(b); if not rb.ok then error(rb.reason) end end, "set_payload", "read-only")
end)

T.test("a robot defined in the program (no module to load) is handed, prismatic joint and all", function()
  local arm = morc.robot { name = "finger arm", model = morc.model.urdf "tests/data/finger_arm.urdf",
    joints = { { "shoulder", limits = { acc = 300 } }, { "elbow", limits = { acc = 300 } }, { "wrist", limits = { acc = 300 } },
               { "finger_joint", limits = { acc = 1000 } } }, home = { 0, 30, 30, 20 } }
  morc.use_robot(arm)
  local _, q, tau = run(gravity, { n = 4, model = arm }, "tau", 4, 3)
  T.near(tau, arm.model:gravity(q):totable(), 1e-12)
  local _, q2, tau2 = run(gravity, { n = 4, model = arm.model }, "tau", 4, 3)
  T.near(tau2, arm.model:gravity(q2):totable(), 1e-12)
  morc.use_robot(require "robots.ur5")
end)

T.test("a wrong type names the component and the parameter", function()
  local ur5 = require "robots.ur5"
  local a = morc.assembly "wrong"
  T.raises(function() a:add("c", jacobian, { robot = 5 }) end, "component 'c' (jacobian_probe): parameter 'robot' takes a robot", "got a number")
  T.raises(function() a:add("c", jacobian, { robot = ur5.model }) end, "parameter 'robot' takes a robot", "got a model")
  T.raises(function() a:add("c", jacobian, { robot = "robots.nope" }) end, "parameter 'robot'", "cannot load its robot module 'robots.nope'")
  T.raises(function() a:add("c", jacobian, { robot = "string" }) end, "module 'string' returns a table, not a robot")
  T.raises(function() a:add("g", gravity, { model = true }) end, "component 'g' (gravity_probe): parameter 'model' takes a model or a robot", "got a boolean")
  T.raises(function() a:add("k", "gain", { k = ur5 }) end, "component 'k' (gain): parameter 'k' takes a number", "not a robot")
  T.raises(function() a:add("c", jacobian, { frame = ur5 }) end, "parameter 'frame' takes a number", "not a robot")
  T.raises(function() ur5:add(a, "m", "monitor", { max_error = ur5 }) end, "component 'm': parameter 'max_error' takes a number", "not a robot")
end)

T.test("help and morc.kind show the parameter as morc.ROBOT, documented", function()
  morc.register(jacobian)
  local info = morc.kind "jacobian_probe"
  local found
  for _, p in ipairs(info.params) do
    if p.name == "robot" then found = p end
  end
  T.eq(tostring(found.default), "morc.ROBOT")
  assert(found.doc:find("self.robot is that robot, read-only", 1, true), found.doc)
  T.eq(tostring(morc.MODEL), "morc.MODEL")
end)

return T.summary()

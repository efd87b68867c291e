-- Hand guiding by Cartesian admittance control, stepped at the bus rate (after the dual-arm
-- stacker paper):
--   M_d dV/dt + D_d V + K (x − x₀) = F_ext        (per axis, base frame, translation only)
--   q̇_ref = (J_T N)⁺ V,  N = I − J_R⁺ J_R        (the orientation stays as it is)
--   q_ref += q̇_ref · T
-- F_ext is the wrist F/T sensor's reading with its offset (zeroed over the first `zero_time`
-- seconds, hands off) and the tool's own weight (mass, centre of mass in the sensor frame)
-- taken out, turned into base axes. V follows the exact discretisation of the first-order law
-- (V ← aV + (1 − a)F/D, a = e^(−D·T/M)), so the time constant is M/D at any bus rate, and
-- M, D, K may change while guiding (inputs) without a jump in V. V is limited to `v_max`, its
-- change to `a_max` (so the drives can follow), and it brakes to stop on the faces of the
-- workspace box; the joints stop at their limits. Released enabling
-- switch: V = 0 at once and the arm holds; released for `until_released` seconds after guiding
-- (when > 0), the run ends. The teach button's rising edge stores the pose.
-- Joints outside the group hold where they were. `tau` is the push as joint torques (−J_Tᵀ F)
-- for the drives' torque feed-forward. Allocates nothing per step.
local rot = require "lib.teach.helpers.rot"

local exp, sqrt, huge = math.exp, math.sqrt, math.huge

return morc.register(morc.component {
  name = "admittance",
  doc = "hand guiding: M dV/dt + D V + K(x − x0) = F (F/T sensor, offset zeroed, tool weight out), orientation held by null-space projection, speed limit, workspace box, enabling switch, teach button",
  inputs = { "q[n]", "ft[6]", "enable:boolean", "button:boolean", "M", "D", "K" },
  outputs = { "q[n]", "qd[n]", "qdd[n]", "tau[n]",
    { "v[3]", unit = "m/s", elements = { "x", "y", "z" }, doc = "the law's velocity V (base axes)" },
    { "f[3]", unit = "N", elements = { "x", "y", "z" }, doc = "the operator's force F (base axes, offset and tool weight out)" },
    { "x[3]", unit = "m", elements = { "x", "y", "z" }, doc = "the guided frame's position, commanded" },
    { "drift", unit = "°", doc = "the commanded orientation's angle from where guiding started" },
    "taught:integer", "points[np]", "state:integer" },
  params = {
    n = 6, np = 6, robot = morc.ROBOT, group = "", frame = "",
    mass = 1.0, damping = 50.0, stiffness = 0.0, v_max = 0.25, a_max = 20.0,
    box_min = { -1e3, -1e3, -1e3 }, box_max = { 1e3, 1e3, 1e3 }, until_released = 0.0,
    load_mass = 0.0, load_com = { 0, 0, 0 }, zero_time = 0.1, lambda = 1e-4,
  },
  init = function(self, out)
    local robot, n = self.robot, self.n
    if robot.dof ~= n then error(("component '%s': robot '%s' has %d joints, n = %d"):format(self.name, robot.name, robot.dof, n), 0) end
    local joints, frame = {}, nil
    if self.group ~= "" then
      local g = robot.groups[self.group]
      if not g then
        local names = {}
        for k in pairs(robot.groups) do names[#names + 1] = k end
        error(("component '%s': robot '%s' has no group '%s' (it has: %s)"):format(self.name, robot.name, self.group, table.concat(names, ", ")), 0)
      end
      joints, frame = g.joints, g.tool
    else
      for i = 1, n do joints[i] = i end
    end
    if self.frame ~= "" then frame = self.frame end
    frame = frame or (robot.ft and robot.ft.frame)
    if not frame then error(("component '%s': say which frame is guided (frame = \"…\"; the robot has no ft sensor frame)"):format(self.name), 0) end
    if self.np % n ~= 0 then error(("component '%s': np (%d) must be a multiple of n (%d): room for whole poses"):format(self.name, self.np, n), 0) end
    if not (self.mass > 0 and self.damping >= 0 and self.stiffness >= 0 and self.v_max > 0 and self.a_max > 0) then
      error(("component '%s': needs mass > 0, damping ≥ 0, stiffness ≥ 0, v_max > 0, a_max > 0"):format(self.name), 0)
    end
    local k = #joints
    self.model, self.frame_, self.joints_, self.k = robot.model, frame, joints, k
    -- Selections: S picks the group's columns of J, PT/PR its translation and rotation rows.
    self.S, self.PT, self.PR = morc.zeros(n, k), morc.zeros(3, 6), morc.zeros(3, 6)
    for c, j in ipairs(joints) do self.S:set(j, c, 1) end
    for i = 1, 3 do self.PT:set(i, i, 1); self.PR:set(i, i + 3, 1) end
    self.J, self.JS = morc.mat(6, n), morc.mat(6, k)
    self.JT, self.JR, self.JRp = morc.mat(3, k), morc.mat(3, k), morc.mat(k, 3)
    self.I, self.N, self.A, self.Ap = morc.eye(k), morc.mat(k, k), morc.mat(3, k), morc.mat(k, 3)
    self.qdg, self.pos, self.rot = morc.vec(k), morc.vec(3), morc.mat(3, 3)
    self.JTfull, self.tau_ = morc.mat(3, n), morc.vec(n)
    self.pos_t, self.R, self.R0 = { 0, 0, 0 }, rot.new(), rot.new()
    self.ftload = morc.ft.load { mass = self.load_mass, com = self.load_com }
    self.comp = { 0, 0, 0, 0, 0, 0 }
    self.Vp, self.V, self.F, self.tmp, self.x0 = { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }
    self.bias, self.sum = { 0, 0, 0, 0, 0, 0 }, { 0, 0, 0, 0, 0, 0 }
    self.lo, self.hi, self.acc, self.vj = {}, {}, {}, {}
    for i, j in ipairs(robot.joints) do
      self.lo[i], self.hi[i] = morc.units.to_si(j.limits.pos[1], j.unit), morc.units.to_si(j.limits.pos[2], j.unit)
      -- °/s² scale as ° do (mm/s² as mm).
      self.acc[i] = morc.units.to_si(j.limits.acc, j.unit)
      self.vj[i] = 0
    end
    self.tick, self.zero_ticks, self.samples, self.taught, self.was_pressed = 0, math.max(1, math.floor(self.zero_time / self.period + 0.5)), 0, 0, false
    self.started, self.guided, self.released = false, false, 0
    for i = 1, n do out.q[i], out.qd[i], out.qdd[i], out.tau[i] = 0, 0, 0, 0 end
    self.pts = {}
    for i = 1, self.np do out.points[i], self.pts[i] = 0, 0 end
    for i = 1, 3 do out.v[i], out.f[i], out.x[i] = 0, 0, 0 end
    out.drift, out.taught, out.state = 0, 0, 0
    -- A frame the model lacks is an error here (listing its frames), not at the first step.
    local z = {}
    for i = 1, n do z[i] = 0 end
    self.model:frame_placement_to(self.pos, self.rot, z, frame)
  end,
  step = function(self, inp, out)
    local n, T, q = self.n, self.period, inp.q
    local qc, qdc = out.q, out.qd
    if not self.started then
      -- Start from where the arm is.
      for i = 1, n do qc[i] = q[i] end
      self.started = true
    end
    -- Where the sensor is and how it is turned, at the commanded pose (what the arm holds).
    local model, frame = self.model, self.frame_
    model:frame_placement_to(self.pos, self.rot, qc, frame)
    local R, p = self.rot:totable(self.R), self.pos:totable(self.pos_t)
    out.x[1], out.x[2], out.x[3] = p[1], p[2], p[3]
    -- The reading less the tool's weight (sensor axes), as morc.ft's load computes it.
    local comp, tmp = self.comp, self.tmp
    self.ftload:compensate_to(comp, self.rot, inp.ft)
    local fx, fy, fz, tx, ty, tz = comp[1], comp[2], comp[3], comp[4], comp[5], comp[6]
    local bias, V = self.bias, self.V
    self.tick = self.tick + 1
    if self.tick <= self.zero_ticks then
      -- Zeroing, hands off: the offset is the mean reading.
      local s = self.sum
      s[1], s[2], s[3], s[4], s[5], s[6] = s[1] + fx, s[2] + fy, s[3] + fz, s[4] + tx, s[5] + ty, s[6] + tz
      if self.tick == self.zero_ticks then
        for i = 1, 6 do bias[i] = s[i] / self.zero_ticks end
        rot.copy_to(self.R0, R)
        self.x0[1], self.x0[2], self.x0[3] = p[1], p[2], p[3]
      end
      for i = 1, n do qdc[i], out.qdd[i], out.tau[i] = 0, 0, 0 end
      out.state = 0
      return
    end
    -- The operator's force in base axes.
    tmp[1], tmp[2], tmp[3] = fx - bias[1], fy - bias[2], fz - bias[3]
    local F = self.F
    rot.apply_to(F, R, tmp)
    out.f[1], out.f[2], out.f[3] = F[1], F[2], F[3]
    out.drift = math.deg(rot.angle(self.R0, R))
    -- The teach button's rising edge stores the commanded pose.
    local pressed = inp.button
    if pressed and not self.was_pressed and (self.taught + 1) * n <= self.np then
      local base = self.taught * n
      for i = 1, n do out.points[base + i], self.pts[base + i] = qc[i], qc[i] end
      self.taught = self.taught + 1
      out.taught = self.taught
    end
    self.was_pressed = pressed
    if not inp.enable then
      -- Released for `until_released` seconds after guiding: the operator is done.
      self.released = self.released + 1
      if self.guided and self.until_released > 0 and self.released * T >= self.until_released then
        return "the enabling switch released"
      end
      -- Released: hold at once; guiding starts again from rest.
      V[1], V[2], V[3] = 0, 0, 0
      for i = 1, n do qdc[i], out.qdd[i], out.tau[i] = 0, 0, 0 end
      for i = 1, 3 do out.v[i] = 0 end
      self.x0[1], self.x0[2], self.x0[3] = p[1], p[2], p[3]
      out.state = 2
      return
    end
    out.state = 1
    self.guided, self.released = true, 0
    -- The admittance: exact first-order step per axis (M, D, K from the inputs when given).
    local M = inp.M > 0 and inp.M or self.mass
    local D = inp.D > 0 and inp.D or self.damping
    local K = inp.K > 0 and inp.K or self.stiffness
    local x0, Vp = self.x0, self.Vp
    Vp[1], Vp[2], Vp[3] = V[1], V[2], V[3]
    local speed = 0
    for i = 1, 3 do
      local f = F[i] - K * (p[i] - x0[i])
      if D > 0 then
        local a = exp(-D * T / M)
        V[i] = a * V[i] + (1 - a) * f / D
      else
        V[i] = V[i] + T * f / M
      end
      speed = speed + V[i] * V[i]
    end
    speed = sqrt(speed)
    if speed > self.v_max then
      local s = self.v_max / speed
      V[1], V[2], V[3] = V[1] * s, V[2] * s, V[3] * s
    end
    -- The workspace box: slow down so as to stop on a face at a_max, never out through it.
    local lo, hi, a_max = self.box_min, self.box_max, self.a_max
    for i = 1, 3 do
      local room = V[i] > 0 and hi[i] - p[i] or p[i] - lo[i]
      local most = room > 0 and sqrt(2 * a_max * room) or 0
      if V[i] > most then V[i] = most elseif V[i] < -most then V[i] = -most end
    end
    -- The drives can follow: the velocity changes by at most a_max·T per step.
    local dv = sqrt((V[1] - Vp[1]) ^ 2 + (V[2] - Vp[2]) ^ 2 + (V[3] - Vp[3]) ^ 2)
    if dv > a_max * T then
      local s = a_max * T / dv
      for i = 1, 3 do V[i] = Vp[i] + (V[i] - Vp[i]) * s end
    end
    for i = 1, 3 do out.v[i] = V[i] end
    -- Joint velocities that move the frame at V and keep its orientation.
    local J, JS = self.J, self.JS
    model:frame_jacobian_to(J, qc, frame)
    -- The operator's push as joint torques, for the drives to hold against at once (−J_Tᵀ·F)
    -- instead of through their integrators: the arm follows the law, not the push.
    self.JTfull:gemm(self.PT, J)
    self.tau_:gemv_t(self.JTfull, F, -1, 0)
    self.tau_:totable(out.tau)
    JS:gemm(J, self.S)
    self.JT:gemm(self.PT, JS)
    self.JR:gemm(self.PR, JS)
    self.JR:pinv_to(self.JRp, 1e-6)
    self.N:copy(self.I)
    self.N:gemm(self.JRp, self.JR, -1, 1)
    self.A:gemm(self.JT, self.N)
    self.A:pinv_to(self.Ap, self.lambda)
    local qdg = self.qdg
    qdg:gemv(self.Ap, V)
    local joints, lo_q, hi_q, acc, vj, qddc = self.joints_, self.lo, self.hi, self.acc, self.vj, out.qdd
    -- Near a joint limit: this joint slows down so as to stop on it at its acceleration limit
    -- (the others go on); the base refuses a command past it, or a stop harder than the drive's.
    for c2, j in ipairs(joints) do
      local v = qdg[c2]
      local room = v > 0 and hi_q[j] - qc[j] or qc[j] - lo_q[j]
      local most = room > 0 and math.min(sqrt(2 * acc[j] * room), room / T) or 0
      if v > most then v = most elseif v < -most then v = -most end
      vj[c2] = v
    end
    for c2, j in ipairs(joints) do
      local v = vj[c2]
      -- The acceleration, for the drives' torque feed-forward: without it they lag the law.
      qddc[j] = (v - qdc[j]) / T
      qdc[j] = v
      qc[j] = qc[j] + v * T
    end
  end,
  -- The run's results: the poses taught (each a joint vector, rad / m) and how many.
  terminate = function(self)
    local points = {}
    for k = 1, self.taught do
      local q = {}
      for i = 1, self.n do q[i] = self.pts[(k - 1) * self.n + i] end
      points[k] = q
    end
    return { taught = self.taught, points = points }
  end,
})

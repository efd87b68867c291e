-- The feed-forward of an arm with elastic gears, as the native kind "elastic_feed_forward"
-- (crates/morc-robot): from the links' reference q, q̇, q̈ (Bessel-filtered: smooth to its 4th
-- derivative), the motors' position, velocity and torque through the model's inverse of
-- Spong's flexible-joint model (model:elastic_inverse_to, docs/robots.md). The jerk and snap are
-- differences of the acceleration from step to step (h = the component's period), as the
-- native's, operation for operation; the reference is taken to have been at rest before the
-- first step. Its step allocates nothing.
return morc.register(morc.component {
  name = "elastic_feed_forward",
  doc = "motors' position, velocity and torque of an arm with elastic gears for the links' reference q, qd, qdd (Bessel-filtered), through model:elastic_inverse_to; robot = the arm (default: the engine's)",
  inputs = { "q[n]", "qd[n]", "qdd[n]" },
  outputs = { "q[n]", "qd[n]", "tau[n]" },
  params = { n = 6, robot = morc.ROBOT },
  init = function(self, out)
    local model, n = self.robot.model, self.n
    if model.nv ~= n then
      error(("component '%s': robot '%s' has %d joints, n = %d"):format(self.name, self.robot.name, model.nv, n), 0)
    end
    self.model = model
    self.theta, self.theta_d, self.tau = morc.vec(n), morc.vec(n), morc.vec(n)
    self.last_qdd, self.last_jerk, self.jerk, self.snap = {}, {}, {}, {}
    for i = 1, n do
      self.last_qdd[i], self.last_jerk[i], self.jerk[i], self.snap[i] = 0, 0, 0, 0
      out.q[i], out.qd[i], out.tau[i] = 0, 0, 0
    end
    self.first = true
  end,
  step = function(self, inp, out)
    local qdd, h = inp.qdd, self.period
    local jerk, snap, last_qdd, last_jerk = self.jerk, self.snap, self.last_qdd, self.last_jerk
    for i = 1, self.n do
      local j, s = 0, 0
      if not self.first then
        j = (qdd[i] - last_qdd[i]) / h
        s = (j - last_jerk[i]) / h
      end
      jerk[i], snap[i], last_qdd[i], last_jerk[i] = j, s, qdd[i], j
    end
    self.first = false
    self.model:elastic_inverse_to(self.theta, self.theta_d, self.tau, inp.q, inp.qd, qdd, jerk, snap)
    self.theta:totable(out.q)
    self.theta_d:totable(out.qd)
    self.tau:totable(out.tau)
  end,
})

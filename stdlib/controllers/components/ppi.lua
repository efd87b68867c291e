-- The joint P-PI cascade, as the native kind "ppi" (crates/morc-kernel/src/blocks/motion.rs):
--   v = kp·(q_ref − q) + qd_ref;  e = v − qd;  tau = clamp(kv·e + I, umin, umax)
--   I[k+1] = I[k] + ki·h·e[k], skipped while tau is saturated and the increment drives it further
--   (conditional integration, the anti-windup); I[0] = 0.
-- h is the time between two steps (a Lua component is not told its period), so the increment
-- of step k is added at step k+1, before tau is computed: tau at every step is the native's.
local per_joint = require "lib.controllers.helpers.per_joint"

local function limit(u, lower, upper)
  -- As the native `limit`: NaN passes through rather than becoming a limit.
  if u < lower then return lower elseif u > upper then return upper else return u end
end

return morc.register(morc.component {
  name = "ppi",
  doc = "P-PI cascade per joint: velocity command kp·(q_ref − q) + qd_ref, torque clamp(kv·e + ki·∫e dt, umin, umax), e the velocity error; conditional-integration anti-windup (the native 'ppi' in Lua)",
  inputs = { "q_ref[n]", "qd_ref[n]", "q[n]", "qd[n]" },
  outputs = { "tau[n]" },
  params = { n = 6, kp = 20.0, kv = 1.0, ki = 10.0, umin = -math.huge, umax = math.huge },
  init = function(self, out)
    local n = self.n
    self.kp_, self.kv_, self.ki_ = per_joint.expand(self, "kp", n), per_joint.expand(self, "kv", n), per_joint.expand(self, "ki", n)
    self.umin_, self.umax_ = per_joint.expand(self, "umin", n), per_joint.expand(self, "umax", n)
    for i = 1, n do
      if self.umin_[i] ~= self.umin_[i] or self.umax_[i] ~= self.umax_[i] or self.umin_[i] > self.umax_[i] then
        error(("component '%s': umin (%g) must not exceed umax (%g)"):format(self.name, self.umin_[i], self.umax_[i]), 0)
      end
    end
    -- Integral, and the last step's velocity error and unclamped torque, per joint.
    self.integral, self.e, self.v = {}, {}, {}
    for i = 1, n do
      self.integral[i], self.e[i], self.v[i] = 0.0, 0.0, 0.0
      out.tau[i] = limit(0.0, self.umin_[i], self.umax_[i])
    end
    self.t_last = nil
  end,
  step = function(self, inp, out, t)
    local kp, kv, ki, umin, umax = self.kp_, self.kv_, self.ki_, self.umin_, self.umax_
    local integral, es, vs = self.integral, self.e, self.v
    local q_ref, qd_ref, q, qd, tau = inp.q_ref, inp.qd_ref, inp.q, inp.qd, out.tau
    local h = self.t_last and t - self.t_last
    self.t_last = t
    for i = 1, self.n do
      if h then
        local increment = ki[i] * h * es[i]
        local v = vs[i]
        if not ((v > umax[i] and increment > 0) or (v < umin[i] and increment < 0)) then
          integral[i] = integral[i] + increment
        end
      end
      local e = kp[i] * (q_ref[i] - q[i]) + qd_ref[i] - qd[i]
      local v = kv[i] * e + integral[i]
      tau[i] = limit(v, umin[i], umax[i])
      es[i], vs[i] = e, v
    end
  end,
})

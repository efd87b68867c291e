-- The joint P-PI cascade, as the native kind "ppi" (crates/morc-kernel/src/blocks/motion.rs):
--   v = kp·(q_ref − q) + qd_ref;  e = v − qd;  tau = clamp(kv·e + I, umin, umax)
--   I[k+1] = I[k] + ki·h·e[k], skipped while tau is saturated and the increment drives it further
--   (conditional integration, the anti-windup); I[0] = 0.
-- h is the component's sample period (self.period), so every step is the native's, operation
-- for operation.
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
    -- Integral per joint.
    self.integral = {}
    for i = 1, n do
      self.integral[i] = 0.0
      out.tau[i] = limit(0.0, self.umin_[i], self.umax_[i])
    end
  end,
  step = function(self, inp, out, t)
    local kp, kv, ki, umin, umax = self.kp_, self.kv_, self.ki_, self.umin_, self.umax_
    local integral, h = self.integral, self.period
    local q_ref, qd_ref, q, qd, tau = inp.q_ref, inp.qd_ref, inp.q, inp.qd, out.tau
    for i = 1, self.n do
      local e = kp[i] * (q_ref[i] - q[i]) + qd_ref[i] - qd[i]
      local v = kv[i] * e + integral[i]
      tau[i] = limit(v, umin[i], umax[i])
      local increment = ki[i] * h * e
      if not ((v > umax[i] and increment > 0) or (v < umin[i] and increment < 0)) then
        integral[i] = integral[i] + increment
      end
    end
  end,
})

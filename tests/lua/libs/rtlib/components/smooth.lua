-- y = a first-order smoothing of u, clamped to ±limit: written with a helper module of the
-- library and locals of this module, as any Lua code would be.
local filters = require "lib.rtlib.helpers.filters"

local limit = 10          -- a module local the step uses (an upvalue)
local function clamp(x)   -- a local function the step uses
  return math.max(-limit, math.min(limit, x))
end

return morc.register(morc.component {
  name = "smooth", doc = "y = first-order smoothing of u (alpha per step), clamped to ±10",
  inputs = { "u" }, outputs = { "y" }, params = { alpha = 0.5 },
  init = function(self, out)
    self.filter = filters.first_order(self.alpha, 0)
    out.y = 0
  end,
  step = function(self, inp, out)
    out.y = clamp(self.filter(inp.u))
  end,
})

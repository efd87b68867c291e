-- Helpers of the rtlib library: a first-order low-pass as a closure over its state.
local M = {}

--- A smoother y ← y + alpha·(u − y), starting at y0; returns a function of u.
function M.first_order(alpha, y0)
  local y = y0
  return function(u)
    y = y + alpha * (u - y)
    return y
  end
end

return M

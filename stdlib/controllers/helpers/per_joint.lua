-- Helpers of the controllers library: parameters given as one number or one per joint.
local M = {}

--- A table of n numbers from a parameter that is a number (every joint) or a table of n
--- numbers; an error naming the component and the parameter otherwise. Off the real-time path.
function M.expand(self, name, n)
  local p = self[name]
  local out = {}
  if type(p) == "number" then
    for i = 1, n do out[i] = p end
  elseif type(p) == "table" and #p == n then
    for i = 1, n do out[i] = p[i] end
  else
    error(("component '%s': parameter %s must be a number or %d numbers (one per joint), got %s"):format(self.name, name, n, type(p) == "table" and (#p .. " numbers") or type(p)), 0)
  end
  return out
end

return M

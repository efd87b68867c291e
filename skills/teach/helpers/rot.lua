-- Helpers of the teach library: small 3×3 rotation arithmetic on Lua tables of rows, allocating nothing.
local M = {}

--- out = R·v (R rows as M:totable(rows) fills them; v and out tables of 3).
function M.apply_to(out, R, v)
  local a, b, c = R[1], R[2], R[3]
  local x, y, z = v[1], v[2], v[3]
  out[1] = a[1] * x + a[2] * y + a[3] * z
  out[2] = b[1] * x + b[2] * y + b[3] * z
  out[3] = c[1] * x + c[2] * y + c[3] * z
end

--- The angle (rad) of the rotation from R0 to R: acos((trace(R0ᵀR) − 1) / 2).
function M.angle(R0, R)
  local t = 0
  for i = 1, 3 do
    for k = 1, 3 do t = t + R0[k][i] * R[k][i] end
  end
  local c = (t - 1) / 2
  if c > 1 then c = 1 elseif c < -1 then c = -1 end
  return math.acos(c)
end

--- Copies the rows of R into the rows of out.
function M.copy_to(out, R)
  for i = 1, 3 do
    local o, r = out[i], R[i]
    o[1], o[2], o[3] = r[1], r[2], r[3]
  end
end

--- A 3×3 table of rows of zeros.
function M.new() return { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } } end

return M

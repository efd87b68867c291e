-- Helpers of the controllers library: the pose error of a frame, allocating nothing.
local M = {}

local sin, cos = math.sin, math.cos

--- Writes into e (a table or morc vector of 6) the error of a frame at pos (a table or vec of 3), rot
--- (a table of 3 rows, as M:totable(rows) fills it, or a morc 3×3 matrix) to the
--- reference x = { x, y, z, roll, pitch, yaw } (m, rad; rotation Rz(yaw)·Ry(pitch)·Rx(roll)):
--- e[1..3] = p_ref − p, e[4..6] = ½ Σ_k r_k × rd_k (r_k, rd_k the columns of R and R_ref), the
--- orientation error of Luh, Walker and Paul, in world axes like the angular rows of a
--- local_world_aligned Jacobian (it is sin θ·axis for a rotation θ about axis from R to R_ref).
function M.error_to(e, pos, rot, x)
  e[1], e[2], e[3] = x[1] - pos[1], x[2] - pos[2], x[3] - pos[3]
  local sr, cr = sin(x[4]), cos(x[4])
  local sp, cp = sin(x[5]), cos(x[5])
  local sy, cy = sin(x[6]), cos(x[6])
  -- The reference's columns.
  local d11, d21, d31 = cy * cp, sy * cp, -sp
  local d12, d22, d32 = cy * sp * sr - sy * cr, sy * sp * sr + cy * cr, cp * sr
  local d13, d23, d33 = cy * sp * cr + sy * sr, sy * sp * cr - cy * sr, cp * cr
  local r11, r21, r31, r12, r22, r32, r13, r23, r33
  if type(rot) == "table" then
    local a, b, c = rot[1], rot[2], rot[3]
    r11, r21, r31, r12, r22, r32, r13, r23, r33 = a[1], b[1], c[1], a[2], b[2], c[2], a[3], b[3], c[3]
  else
    local g = rot.get
    r11, r21, r31 = g(rot, 1, 1), g(rot, 2, 1), g(rot, 3, 1)
    r12, r22, r32 = g(rot, 1, 2), g(rot, 2, 2), g(rot, 3, 2)
    r13, r23, r33 = g(rot, 1, 3), g(rot, 2, 3), g(rot, 3, 3)
  end
  e[4] = 0.5 * (((r21 * d31 - r31 * d21) + (r22 * d32 - r32 * d22)) + (r23 * d33 - r33 * d23))
  e[5] = 0.5 * (((r31 * d11 - r11 * d31) + (r32 * d12 - r12 * d32)) + (r33 * d13 - r13 * d33))
  e[6] = 0.5 * (((r11 * d21 - r21 * d11) + (r12 * d22 - r22 * d12)) + (r13 * d23 - r23 * d13))
end

return M

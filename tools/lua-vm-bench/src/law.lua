-- The per-step arithmetic of stdlib/controllers/components/cartesian_velocity.lua in plain Lua
-- (the Jacobian given as input: morc's model userdata is not linked here), as the morc.vec/mat
-- in-place calls compute it: G = J Jᵀ + λ²I, LU with partial pivoting, X = G⁻¹J column by column,
-- J⁺ = Xᵀ, qd = J⁺(v_ref + K e) + z − J⁺(J z), z = −k_null (q − q_rest). Tables are made once;
-- a step allocates nothing.
local n, lambda, k, k_null = 6, 0.05, 8.0, 2.0
local abs = math.abs

-- A UR5 Jacobian (6×6, linear rows first) at q = (0.3, −1.2, 1.4, −1.6, −1.5, 0.3), row major.
local J = {
  -0.1092, -0.3005, -0.0741, 0.0392, -0.0756, 0.0,
   0.4373, -0.0920, -0.0227, 0.0120,  0.0812, 0.0,
   0.0,     0.4460,  0.0556, 0.0819,  0.0022, 0.0,
   0.0,     0.2955,  0.2955, 0.2955, -0.9406, 0.2869,
   0.0,    -0.9553, -0.9553, -0.9553, -0.2910, 0.0877,
   1.0,     0.0,     0.0,     0.0,     0.1747, -0.9539,
}
local G, piv, X, Jp = {}, {}, {}, {}
for i = 1, 36 do G[i], X[i], Jp[i] = 0, 0, 0 end
local q, q_rest, e, v_ref, w, z, jz, qd = {}, {}, {}, {}, {}, {}, {}, {}
for i = 1, 6 do q[i], q_rest[i], e[i], v_ref[i], w[i], z[i], jz[i], qd[i] = 0.1 * i, 0.0, 0.01 * i, 0.02, 0, 0, 0, 0 end

local function step(t)
  -- The input moves a little each step, as a measured Jacobian would.
  J[1] = -0.1092 + 1e-6 * t
  -- G = J Jᵀ + λ² I (symmetric)
  for i = 1, 6 do
    local ri = (i - 1) * n
    for j = 1, i do
      local rj, s = (j - 1) * n, 0.0
      for c = 1, n do s = s + J[ri + c] * J[rj + c] end
      G[ri + j], G[(j - 1) * 6 + i] = s, s
    end
    G[ri + i] = G[ri + i] + lambda * lambda
  end
  -- LU with partial pivoting, in place
  for c = 1, 6 do
    local p, best = c, abs(G[(c - 1) * 6 + c])
    for r = c + 1, 6 do
      local a = abs(G[(r - 1) * 6 + c])
      if a > best then p, best = r, a end
    end
    piv[c] = p
    if p ~= c then
      for j = 1, 6 do
        local a, b = (c - 1) * 6 + j, (p - 1) * 6 + j
        G[a], G[b] = G[b], G[a]
      end
    end
    local pivot = G[(c - 1) * 6 + c]
    for r = c + 1, 6 do
      local l = G[(r - 1) * 6 + c] / pivot
      G[(r - 1) * 6 + c] = l
      for j = c + 1, 6 do G[(r - 1) * 6 + j] = G[(r - 1) * 6 + j] - l * G[(c - 1) * 6 + j] end
    end
  end
  -- X = G⁻¹ J column by column; J⁺ = Xᵀ
  for col = 1, n do
    for r = 1, 6 do X[(r - 1) * n + col] = J[(r - 1) * n + col] end
    for r = 1, 6 do
      local p = piv[r]
      if p ~= r then
        local a, b = (r - 1) * n + col, (p - 1) * n + col
        X[a], X[b] = X[b], X[a]
      end
    end
    for r = 1, 6 do
      local s = X[(r - 1) * n + col]
      for j = 1, r - 1 do s = s - G[(r - 1) * 6 + j] * X[(j - 1) * n + col] end
      X[(r - 1) * n + col] = s
    end
    for r = 6, 1, -1 do
      local s = X[(r - 1) * n + col]
      for j = r + 1, 6 do s = s - G[(r - 1) * 6 + j] * X[(j - 1) * n + col] end
      X[(r - 1) * n + col] = s / G[(r - 1) * 6 + r]
    end
    for r = 1, 6 do Jp[(col - 1) * 6 + r] = X[(r - 1) * n + col] end
  end
  -- qd = J⁺ (v_ref + K e)
  for i = 1, 6 do w[i] = v_ref[i] + k * e[i] end
  for i = 1, n do
    local s, ri = 0.0, (i - 1) * 6
    for j = 1, 6 do s = s + Jp[ri + j] * w[j] end
    qd[i] = s
  end
  -- + z − J⁺ (J z)
  for i = 1, n do z[i] = -k_null * (q[i] - q_rest[i]) end
  for i = 1, 6 do
    local s, ri = 0.0, (i - 1) * n
    for j = 1, n do s = s + J[ri + j] * z[j] end
    jz[i] = s
  end
  for i = 1, n do
    local s, ri = 0.0, (i - 1) * 6
    for j = 1, 6 do s = s + Jp[ri + j] * jz[j] end
    qd[i] = qd[i] + z[i] - s
  end
  return qd[1]
end

-- The 6-element gain of `morc bench lua`.
local u, y = { 1, 2, 3, 4, 5, 6 }, { 0, 0, 0, 0, 0, 0 }
local function gain(t)
  for i = 1, 6 do y[i] = 0.5 * u[i] end
  return y[1]
end

return step, gain

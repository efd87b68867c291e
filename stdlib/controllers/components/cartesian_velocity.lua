-- A Cartesian velocity law with a damped pseudo-inverse and a null-space term:
--   qd = J⁺(v_ref + K·e) + (I − J⁺J)·(−k_null·(q − q_rest)),   J⁺ = Jᵀ(JJᵀ + λ²I)⁻¹
-- J the local_world_aligned Jacobian of `frame` (linear rows first), e the frame's pose error to
-- x_ref (helpers/pose.lua), K = k on the position rows and k_rot on the orientation rows.
-- Written with the model's and the matrices' in-place forms: its step allocates nothing. The
-- native kind cartesian_velocity (a robot component, crates/morc-robot) computes the same.
local pose = require "lib.controllers.helpers.pose"

return morc.register(morc.component {
  name = "cartesian_velocity",
  doc = "qd = J⁺_λ(v_ref + K·e) + (I − J⁺_λ J)(−k_null (q − q_rest)): frame velocity law, damped pseudo-inverse (λ = damping), null-space pull to q_rest; robot = the robot whose model it uses (default: the engine's)",
  inputs = { "q[n]", "x_ref[6]", "v_ref[6]", "q_rest[n]" },
  outputs = { "qd[n]", "e[6]" },
  params = { n = 6, robot = morc.ROBOT, frame = "tool0", damping = 0.01, k = 10.0, k_rot = 10.0, k_null = 1.0 },
  init = function(self, out)
    -- The robot a:add handed (its model shared with the program's, a workspace of its own).
    local model, n = self.robot.model, self.n
    if model.nv ~= n then
      error(("component '%s': robot '%s' has %d joints, n = %d"):format(self.name, self.robot.name, model.nv, n), 0)
    end
    if not (self.damping >= 0) then
      error(("component '%s': damping must be ≥ 0, got %s"):format(self.name, tostring(self.damping)), 0)
    end
    self.model = model
    -- Destinations of the in-place calls are morc vectors and matrices; what is only read (q, e,
    -- w, z) stays a Lua table, which those calls read too: fewer calls into morc per step.
    self.qd_, self.jz = morc.vec(n), morc.vec(6)
    self.J, self.Jp = morc.mat(6, n), morc.mat(n, 6)
    self.pos, self.rot = morc.vec(3), morc.mat(3, 3)
    -- The placement read back in one call each (M:totable(rows)) rather than 12 element reads.
    self.pos_t, self.rot_t = { 0, 0, 0 }, { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } }
    self.e_, self.w, self.z = {}, {}, {}
    for i = 1, 6 do self.e_[i], self.w[i] = 0, 0 end
    for i = 1, n do self.z[i] = 0 end
    -- A frame the model lacks is an error here (listing its frames), not at the first step.
    model:frame_placement_to(self.pos, self.rot, self.z, self.frame)
    for i = 1, n do out.qd[i] = 0 end
    for i = 1, 6 do out.e[i] = 0 end
  end,
  step = function(self, inp, out)
    local model, frame, n = self.model, self.frame, self.n
    local qd, z, e, w, jz, J, Jp = self.qd_, self.z, self.e_, self.w, self.jz, self.J, self.Jp
    local q, q_rest, v_ref = inp.q, inp.q_rest, inp.v_ref
    model:frame_jacobian_to(J, q, frame)
    model:frame_placement_to(self.pos, self.rot, q, frame)
    J:pinv_to(Jp, self.damping)
    pose.error_to(e, self.pos:totable(self.pos_t), self.rot:totable(self.rot_t), inp.x_ref)
    local k, k_rot = self.k, self.k_rot
    for i = 1, 3 do w[i] = v_ref[i] + k * e[i] end
    for i = 4, 6 do w[i] = v_ref[i] + k_rot * e[i] end
    qd:gemv(Jp, w)
    -- The null-space term (I − J⁺J)·z = z − J⁺(J z), z = −k_null·(q − q_rest).
    local k_null = self.k_null
    for i = 1, n do z[i] = -k_null * (q[i] - q_rest[i]) end
    jz:gemv(J, z)
    qd:axpy(1, z)
    qd:gemv(Jp, jz, -1, 1)
    qd:totable(out.qd)
    local out_e = out.e
    for i = 1, 6 do out_e[i] = e[i] end
  end,
})

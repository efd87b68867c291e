-- The exciting trajectory of a dynamic identification as a reference: id:excite's Fourier series
-- per joint (morc.motion.fourier)
--   q_j(t) = q0_j + Σ_l a_jl/(l·ω)·sin(l·ω·t) − b_jl/(l·ω)·cos(l·ω·t),   l = 1 … order
-- with its velocity and acceleration, for `periods` whole periods, then holding where it started
-- (at rest: morc.dynid's excitations have q̇ = q̈ = 0 at t = 0). The coefficients come from
-- id:excite (omega, q0, a, b: a[(j − 1)·order + l]). The robot must start at q(0) (input start,
-- connect robot.q): within 0.5°, or the step says where it is. Allocates nothing per step.
local abs = math.abs

return morc.register(morc.component {
  name = "fourier",
  doc = "exciting trajectory: a Fourier series per joint (id:excite's omega, q0, a, b) for `periods` periods, then at rest where it started",
  inputs = { "start[n]" },
  outputs = { "q[n]", "qd[n]", "qdd[n]" },
  params = {
    n = 6, order = 2, omega = 1.0, periods = 1,
    q0 = { 0, 0, 0, 0, 0, 0 }, a = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, b = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
  },
  init = function(self, out)
    if #self.q0 ~= self.n or #self.a ~= self.n * self.order or #self.b ~= self.n * self.order then
      error(("component '%s': q0 needs n = %d values, a and b order × n = %d each (got %d, %d, %d)"):format(
        self.name, self.n, self.n * self.order, #self.q0, #self.a, #self.b), 0)
    end
    local ok, excitation = pcall(morc.motion.fourier, { omega = self.omega, q0 = self.q0, a = self.a, b = self.b, periods = self.periods })
    if not ok then error(("component '%s': %s"):format(self.name, tostring(excitation)), 0) end
    self.excitation = excitation
    self.checked = false
    -- How far from the excitation's start the robot may be when it begins.
    self.start_tolerance = morc.units.to_si(0.5, "deg")
  end,
  step = function(self, inp, out, t)
    self.excitation:sample_to(out.q, out.qd, out.qdd, t)
    if not self.checked then
      self.checked = true
      for j = 1, self.n do
        if abs(inp.start[j] - out.q[j]) > self.start_tolerance then
          error(("component '%s': joint %d is at %.2f°, the excitation starts at %.2f°: move there first (ptp(excitation.start))"):format(
            self.name, j, morc.units.from_si(inp.start[j], "deg"), morc.units.from_si(out.q[j], "deg")), 0)
        end
      end
    end
  end,
})

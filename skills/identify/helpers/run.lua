-- One exciting run of an identification: PTP to where the excitation starts, then its Fourier
-- reference for `periods` periods through the drives (position, velocity and rigid-body torque
-- feed-forward, as every motion), monitored, robot.q, robot.qd and robot.tau (and robot.q_link
-- where the engine has it) recorded every cycle. Returns { ok = true, recording = file, run = the run's result }, or a failed result saying why.
--   local run = require "lib.identify.helpers.run"
--   local r = run(robot, excitation, { periods = 2, max_error = 2, path = "x.h5", engine = ctx.engine })
local motion_assembly = require "stdlib.assemblies.motion"

--- What the run records: the drives' q, qd and tau and the reference, and the links where the
--- engine measures them (robot.q_link of an arm with elastic gears: the gears' stiffness shows there).
local function signals(engine, path)
  local list = { "robot.q", "robot.qd", "robot.tau", "traj.q", path = path }
  for _, name in ipairs(engine.outputs) do
    if name == "q_link" then list[#list + 1] = "robot.q_link" end
  end
  return list
end

return function(robot, e, opts)
  opts = opts or {}
  local engine = opts.engine or morc.engine
  local motion = morc.lib.load("motion").skills
  local m = motion.ptp(e.start, { settle = 0.5, tolerance = 0.05 })
  if not m.ok then return m end
  local periods = opts.periods or 1
  local a = motion_assembly(robot, "identification", { n = robot.dof, order = e.order, omega = e.omega, q0 = e.q0, a = e.a, b = e.b, periods = periods }, {
    trajectory = "identify.fourier",
    name = opts.name or "identification",
    max_error = opts.max_error,
    record = signals(engine, opts.path),
    notes = opts.notes or "identification: exciting trajectory",
  })
  -- Whole periods and a little rest at the end.
  a.duration = periods * e.period + 0.2
  local r = engine:run(a)
  if not r.ok then return r end
  return { ok = true, recording = r.recordings[#r.recordings], run = r }
end

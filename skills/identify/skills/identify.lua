-- identify: the robot's dynamic parameters from an exciting run (morc.dynid).
local cmd = require "stdlib.motion.command"
local run = require "lib.identify.helpers.run"


return morc.skill {
  name = "identify",
  doc = [[identifies the robot's dynamics: finds its base parameters (link inertias, motor inertias, viscous and Coulomb
friction, regrouped by QR), optimises an exciting trajectory (a Fourier series per joint: `order` harmonics of
`frequency`, within `margin` of the joint, speed, acceleration and torque limits, the joints above the floor), moves to
where it starts, runs it `periods` times recorded, estimates the base parameters by weighted least squares and saves
them to `save` ("": beside the robot's definition, robots/NAME.dynamics.lua; "-": not saved; an existing file is never
replaced: the next free NAME-001… is taken). Keep the workspace clear: the arm sweeps its joint ranges.
Measured: count (base parameters), condition (of the regressor along the run), residual (rms torque residual, % of the
measured rms), estimate, recording, saved (the file); on an arm with elastic gears, stiffness (per elastic joint: stiffness,
damping, residual, by morc.dynid.stiffness where the links were measured, robot.q_link) or stiffness_unseen (why not).]],
  params = {
    order = { type = "number", default = 5, range = { 2, 20 }, doc = "harmonics of the Fourier series" },
    frequency = { type = "number", unit = "Hz", default = 0.1, range = { 0.01, 5 }, doc = "base frequency: the period is its inverse" },
    periods = { type = "number", default = 2, range = { 1, 100 }, doc = "periods run (noise averages out)" },
    evaluations = { type = "number", default = 1500, range = { 10, 1000000 }, doc = "cost evaluations of the trajectory optimisation" },
    margin = { type = "number", default = 0.8, range = { 0.05, 1 }, doc = "share of the limits the trajectory may use" },
    seed = { type = "number", default = 1, range = { 0, 1e9 }, doc = "makes the optimisation's starts reproducible" },
    every = { type = "number", default = 1, range = { 1, 1000 }, doc = "estimate from every n-th recorded sample" },
    robot_module = { type = "string", default = "", doc = "the robot identified, as require names it (\"\": the robot the engine runs)" },
    save = { type = "string", default = "", doc = "file for the parameters (\"\": beside the robot's definition; \"-\": none)" },
    max_error = { type = "number", unit = "deg", default = 2, range = { 0.001, 90 }, doc = "following error that stops the run" },
  },
  precondition = function(ctx, p)
    local robot, why = cmd.robot_of(ctx, p.robot_module)
    if not robot then return false, why end
    local path, why_not = cmd.save_path(robot, p.robot_module, p.save, ".dynamics.lua")
    if path == false then return false, why_not end
    return true
  end,
  execute = function(ctx, p)
    local robot = cmd.robot_of(ctx, p.robot_module)
    local id = morc.dynid.base(robot)
    local e = id:excite { order = p.order, frequency = p.frequency, evaluations = p.evaluations, margin = p.margin, seed = p.seed }
    local r = run(robot, e, { periods = p.periods, max_error = p.max_error, engine = ctx.engine })
    if not r.ok then return r end
    local est = id:estimate(r.recording, { every = p.every })
    local fit = id:validate(est, r.recording, { every = p.every })
    local path = cmd.save_path(robot, p.robot_module, p.save, ".dynamics.lua")
    local saved = path and id:save(path, est)
    -- The gears' stiffness, where the robot has elastic ones: fitted if the links were measured,
    -- else said to be unseen.
    local stiffness, unseen
    for _, j in ipairs(robot.joints) do
      if (j.stiffness or 0) > 0 then
        local ok, fits = pcall(morc.dynid.stiffness, robot, r.recording)
        if ok then stiffness = fits else unseen = tostring(fits):gsub("^.-morc.dynid.stiffness: ", "") end
        break
      end
    end
    return { ok = true, count = id.count, condition = est.condition, excitation_condition = e.condition, residual = fit.rms_error,
             estimate = est, recording = r.recording, saved = saved, stiffness = stiffness, stiffness_unseen = unseen }
  end,
  evaluate = function(ctx, p, r)
    local text = ("%d base parameters, condition number %.0f, torque residual %.2f %% of the measured rms"):format(r.count, r.condition, r.residual)
    if r.saved then text = text .. ", saved to " .. r.saved end
    for _, f in ipairs(r.stiffness or {}) do
      if f.stiffness then
        text = text .. ("; %s gear %.3g N·m/rad, damping %.3g N·m·s/rad (fit residual %.1f %%)"):format(f.joint, f.stiffness, f.damping, f.residual)
      else
        text = text .. ("; %s gear unseen: %s"):format(f.joint, f.unseen)
      end
    end
    if r.stiffness_unseen then text = text .. "; " .. r.stiffness_unseen end
    return r.residual < 10, text
  end,
}

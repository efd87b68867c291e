-- calibrate: the robot's geometry from measured tool positions (robot:calibrate).
local cmd = require "stdlib.motion.command"


--- Rows "q1, …, qn, x, y, z" (degrees or mm per joint, tool position in mm) of a CSV file; a first
--- line that is not numbers is a header. Errors name the file and the line.
local function read_csv(path, dof)
  local f, err = io.open(path, "r")
  if not f then error(("tracker file %s: %s"):format(path, err), 0) end
  local poses, measured, n = {}, {}, 0
  for line in f:lines() do
    n = n + 1
    local values = {}
    for field in line:gmatch("[^,;%s]+") do values[#values + 1] = tonumber(field) end
    local fields = select(2, line:gsub("[^,;%s]+", ""))
    if fields > 0 and #values ~= fields then
      if n > 1 then f:close(); error(("%s:%d: not numbers: %s"):format(path, n, line), 0) end
    elseif #values > 0 then
      if #values ~= dof + 3 then
        f:close()
        error(("%s:%d: %d values; a row is %d joint positions and x, y, z in mm"):format(path, n, #values, dof), 0)
      end
      poses[#poses + 1] = { table.unpack(values, 1, dof) }
      measured[#measured + 1] = { table.unpack(values, dof + 1, dof + 3) }
    end
  end
  f:close()
  return poses, measured
end

return morc.skill {
  name = "calibrate",
  doc = [[calibrates the robot's geometry: with a tracker function(q°) → { x, y, z } mm, chooses n of the candidate poses
for observability (remove-and-replace on index O1…O5), moves there one after the other (PTP at speed %), reads the
encoders and asks the tracker where the tool is; with csv (rows q1…qn, x, y, z in ° and mm, measured before) it reads
those. Then estimates the identifiable placement errors (robot:calibrate) and saves them to save
("": beside the robot's definition, robots/NAME.calibration.lua; "-": not saved; an existing file is never replaced: the
next free NAME-001… is taken). Load them at a program's start: robot:calibrated(dofile(file).errors).
Measured: rms_before, rms_after (mm, the fit's residuals), identified, dropped (names), gain (observability against a
linear scan), robot (the calibrated robot), saved (the file).]],
  params = {
    tracker = { type = "function", optional = true, doc = "function(q°) → { x, y, z } mm: where the tracker sees the tool" },
    csv = { type = "string", optional = true, doc = "instead of a tracker: a CSV file of measurements made before (rows q1…qn, x, y, z)" },
    candidates = { type = "table", optional = true, doc = "poses the tracker sees and the robot reaches (with a tracker function)" },
    n = { type = "integer", default = 30, range = { 6, 1000 }, doc = "poses to measure (at least what the fit needs: 2/3 of the identifiable parameters; the precondition says how many)" },
    index = { type = "string", default = "O1", values = { "O1", "O2", "O3", "O4", "O5" }, doc = "observability index the poses maximise" },
    speed = { type = "number", unit = "%", default = 50, range = { 1, 100 }, doc = "PTP speed between the poses" },
    save = { type = "string", default = "", doc = "file for the errors (\"\": beside the robot's definition; \"-\": none)" },
    robot_module = { type = "string", default = "", doc = "the robot calibrated, as require names it (\"\": the robot the engine runs; in simulation with a tracker, needed: the engine runs the hidden true robot)" },
  },
  precondition = function(ctx, p)
    local robot, why = cmd.robot_of(ctx, p.robot_module)
    if not robot then return false, why end
    if (p.tracker == nil) == (p.csv == nil) then
      return false, "give tracker = function(q°) → { x, y, z } mm, or csv = \"file.csv\" of measurements (one of them)"
    end
    if p.tracker then
      -- In simulation the engine runs the hidden "true" robot the tracker measures: calibrating
      -- that against itself finds no error at all.
      if p.robot_module == "" and cmd.simulated(ctx) then
        return false, ("in simulation the engine runs the hidden true robot (%s): give robot_module = \"robots.NAME\", the nominal robot to calibrate against it (the engine on its perturbed twin, r:perturbed { … })"):format(robot.name)
      end
      if not p.candidates or #p.candidates < p.n then
        return false, ("candidates: give at least n = %d poses the tracker sees (got %d)"):format(p.n, p.candidates and #p.candidates or 0)
      end
      -- The poses are chosen now, before anything moves: every candidate a number within the
      -- joint limits, and n enough for the fit.
      local ok, chosen = pcall(robot.measurement_poses, robot, { candidates = p.candidates, n = p.n, index = p.index })
      if not ok then return false, tostring(chosen) end
      local moved = cmd.robot(ctx)
      for i, q in ipairs(chosen.poses) do
        local reachable, why_not = moved:reachable(q)
        if not reachable then return false, ("candidate %d: %s"):format(chosen.chosen[i], why_not) end
      end
      ctx.chosen = chosen
    end
    local path, why_not = cmd.save_path(robot, p.robot_module, p.save, ".calibration.lua")
    if path == false then return false, why_not end
    return true
  end,
  execute = function(ctx, p)
    -- The engine moves the physical robot (in simulation: a hidden true one); what is calibrated
    -- is the model the program holds of it.
    local moved = cmd.robot(ctx)
    local robot = cmd.robot_of(ctx, p.robot_module)
    local poses, measured, gain
    if p.csv then
      poses, measured = read_csv(p.csv, robot.dof)
    else
      local chosen = ctx.chosen
      gain = chosen.ratio
      local ptp = morc.lib.load("motion").skills.ptp
      poses, measured = {}, {}
      for i, q in ipairs(chosen.poses) do
        local r = ptp(q, { speed = p.speed })
        if not r.ok then return { ok = false, reason = ("pose %d: %s"):format(i, r.reason) } end
        poses[i] = moved:state().q                 -- what the encoders say, not what was asked
        local m = p.tracker(poses[i])
        if type(m) ~= "table" or #m ~= 3 then
          return { ok = false, reason = ("pose %d: the tracker must return { x, y, z } in mm, got %s"):format(i, tostring(m)) }
        end
        measured[i] = m
      end
    end
    local c = robot:calibrate { poses = poses, measured = measured }
    local path = cmd.save_path(robot, p.robot_module, p.save, ".calibration.lua")
    local saved = path and robot:save_calibration(path, c)
    return { ok = true, rms_before = c.rms_before, rms_after = c.rms_after, identified = c.identified, dropped = c.dropped,
             gain = gain, poses = #poses, robot = c.robot, errors = c.errors, saved = saved }
  end,
  evaluate = function(ctx, p, r)
    local text = ("%d poses, %d parameters identified, residual rms %.3f mm → %.4f mm"):format(r.poses, r.identified, r.rms_before, r.rms_after)
    if r.gain then text = text .. (", observability %.1f× a linear scan"):format(r.gain) end
    if r.saved then text = text .. ", saved to " .. r.saved end
    return r.rms_after < r.rms_before, text
  end,
}

-- sweep: a chirp on one axis, and the frequency from which the axis stops following.
local chirp_axis = require "lib.sweep.assemblies.chirp_axis"

return morc.skill {
  name = "sweep",
  doc = [[sweeps one axis with a linear chirp and measures its tracking bandwidth
Measured: bandwidth (Hz, the chirp frequency when |command − position| first exceeds tolerance,
nil if it never does), max_error (rad) and samples. The axes first go to 0 (`settle` s). The measured position lags the command by one
bus cycle, so the error is compared with the command of the previous tick.]],
  params = {
    axis = { type = "integer", default = 1, range = { 1, 6 }, doc = "which axis" },
    amplitude = { type = "number", unit = "rad", default = 0.1, range = { 1e-4, 1 }, doc = "chirp amplitude" },
    f0 = { type = "number", unit = "Hz", default = 0.5, range = { 0, 100 }, doc = "start frequency" },
    f1 = { type = "number", unit = "Hz", default = 10, range = { 0, 100 }, doc = "end frequency" },
    duration = { type = "number", unit = "s", default = 4, range = { 0.01, 600 }, doc = "length of the sweep" },
    tolerance = { type = "number", unit = "rad", default = 0.01, range = { 0, 1 }, doc = "tracking error that ends the band" },
    min_bandwidth = { type = "number", unit = "Hz", default = 1, range = { 0, 100 }, doc = "the skill fails below this" },
    record = { type = "boolean", default = false, doc = "record robot.q and the command to HDF5" },
    settle = { type = "number", unit = "s", default = 0.5, range = { 0, 60 }, doc = "time to go to the start (all axes at 0) first" },
  },
  precondition = function(ctx, p)
    return p.f1 > p.f0, ("f1 (%g Hz) must be above f0 (%g Hz)"):format(p.f1, p.f0)
  end,
  execute = function(ctx, p)
    -- The chirp starts at 0: bring the axes there first, or the start would count as an error.
    if p.settle > 0 then
      local home = morc.assembly { "sweep_start", duration = p.settle }
      home:add("zero", "constant", { n = 6, value = 0 })
      home:connect("zero.y", "robot.q_cmd")
      local h = ctx.engine:run(home)
      if not h.ok then return h end
    end
    local r = ctx.engine:run(chirp_axis(p))
    if not r.ok then return r end
    local command, measured = r.data["command.u"], r.data["measured.u"]
    local samples = #measured // 6
    local h = ctx.engine.period
    local bandwidth, max_error = nil, 0
    for k = 2, samples do
      local e = math.abs(measured[(k - 1) * 6 + p.axis] - command[(k - 2) * 6 + p.axis])
      max_error = math.max(max_error, e)
      if not bandwidth and e > p.tolerance then
        local t = (k - 2) * h
        bandwidth = p.f0 + (p.f1 - p.f0) * math.min(t, p.duration) / p.duration
      end
    end
    return { ok = true, bandwidth = bandwidth, max_error = max_error, samples = samples }
  end,
  evaluate = function(ctx, p, r)
    if not r.bandwidth then
      return true, ("follows up to %g Hz (max error %.3g rad)"):format(p.f1, r.max_error)
    end
    return r.bandwidth >= p.min_bandwidth, ("bandwidth %.2f Hz, max error %.3g rad"):format(r.bandwidth, r.max_error)
  end,
}

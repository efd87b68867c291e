-- Faults injected into a robot program at random ticks (run by tests/fault_injection.rs on
-- `morc --bus sim`): a PTP of the KR 16 through the EtherCAT master, recorded, with one fault
-- per run. Prints one line per run for the test to check:
--   run <i> <kind> inject=<tick> ticks=<ticks> outcome=<outcome> error=<r.error.kind> held=<°> samples=<n> file=<path> reason=<text>
-- arg: fails_at.fmu path, runs, seed.
local fmu_path, runs, seed = arg[1], tonumber(arg[2] or "10"), tonumber(arg[3] or "1")
local robot = require "robots.kr16"
morc.use_robot(robot)
local motion = require "stdlib.assemblies.motion"

-- A PTP watched by the monitor, recorded, with its position command coming from `command`
-- (the trajectory, or an injector on its way to the drives). 0.5 s: every fault falls in it.
local function ptp_assembly(name, target, command)
  local a = morc.assembly { name, duration = 0.5 }
  a:add("traj", robot:component "ptp", { target = target })
  robot:add(a, "mon", "monitor", { max_error = 2 })
  a:connect("robot.q", "traj.start")
  a:connect("traj.q", "mon.q_ref")
  a:connect("robot.q", "mon.q")
  a:connect("robot.qd", "mon.qd")
  a:connect("robot.tau", "mon.tau")
  a:connect(command, "robot.q_cmd")
  a:record { "robot.*", "traj.q" }
  return a
end
local T = morc.engine.period

-- A NaN into the robot's position command from `at` on; before, the command passes through.
local nan_at = morc.component {
  name = "nan_at", doc = "y = u until time at, then NaN",
  inputs = { "u[6]" }, outputs = { "y[6]" }, params = { at = 1e9 },
  step = function(self, inp, out, t)
    for i = 1, 6 do out.y[i] = (t >= self.at - 1e-9) and (0 / 0) or inp.u[i] end
  end,
}
-- A Lua error in a component's step from `at` on.
local error_at = morc.component {
  name = "error_at", doc = "errors at time at",
  inputs = { "u[6]" }, outputs = { "y" }, params = { at = 1e9 },
  step = function(self, inp, out, t)
    if t >= self.at - 1e-9 then error("injected Lua error") end
    out.y = inp.u[1]
  end,
}

local function position()
  local a = morc.assembly { "where", duration = T }
  a:add("p", "probe", { n = 6 })
  a:connect("robot.q", "p.u")
  local r = morc.engine:run(a)
  assert(r.ok, tostring(r.reason))
  return r.data["p.u"]
end

local kinds = { "lost_frames", "drive_fault", "lua_error", "fmu_error", "nan" }
math.randomseed(seed)
local home = { 0, -90, 90, 0, 0, 0 }
for i = 1, runs do
  local kind = kinds[(i - 1) % #kinds + 1]
  local at_tick = math.random(20, 300)
  local target = {}
  for j = 1, 6 do target[j] = home[j] + math.random(-20, 20) end
  -- The motion assembly (trajectory, monitor, recording); the injector sits on its path.
  local injected = kind == "nan" or kind == "fmu_error"
  local a = ptp_assembly("inject-" .. kind, target, injected and "inj.y" or "traj.q")
  local at = at_tick * T
  if kind == "nan" then
    a:add("inj", nan_at, { at = at })
    a:connect("traj.q", "inj.u")
  elseif kind == "fmu_error" then
    a:add("inj", "fmu", { path = fmu_path, fail_time = at })
    a:connect("traj.q", "inj.u")
  elseif kind == "lua_error" then
    a:add("inj", error_at, { at = at })
    a:connect("traj.q", "inj.u")
  elseif kind == "lost_frames" then
    morc.engine.bus:sim { inject = { fault = "lost_frames", frames = 3, after = at } }
  elseif kind == "drive_fault" then
    morc.engine.bus:sim { inject = { fault = "drive", position = 1 + (i % 6), after = at } }
  end
  local r = morc.engine:run(a)
  local ticks, outcome, reason = r.ticks, r.outcome, tostring(r.reason):gsub("\n", " ")
  -- Where the robot stopped, and whether it stays there (after a reset for bus faults).
  if morc.engine.bus and morc.engine.bus:faulted() then assert(morc.engine:reset_faults()) end
  local q1 = position()
  local hold = morc.assembly { "hold", duration = 0.2 }
  hold:add("p", "probe", { n = 6 })
  hold:connect("robot.q", "p.u")
  local hr = morc.engine:run(hold)
  assert(hr.ok, kind .. ": holding after the fault: " .. tostring(hr.reason))
  local q2 = position()
  local held = 0
  for j = 1, 6 do held = math.max(held, math.abs(math.deg(q2[j] - q1[j]))) end
  local file = r.recordings[1] or "none"
  local error_kind = r.error and r.error.kind or "none"
  print(("run %d %s inject=%d ticks=%d outcome=%s error=%s held=%.6f file=%s reason=%s"):format(i, kind, at_tick, ticks, outcome, error_kind, held, file, reason))
  -- Back home for the next run.
  local back = morc.engine:run(motion(robot, "ptp", { target = home }))
  assert(back.ok, tostring(back.reason))
end

-- The base guards every command, whoever wrote it (issue 39, item 1): a user's assembly wired
-- straight into robot.q_cmd faults naming the joint, the limit, the value and the component and
-- port, the robot brakes, and the joint passes its limit by no more than the braking distance
-- from the speed it was commanded. On the direct simulation and through the drives of the
-- virtual EtherCAT segment alike.
local T = require "morc.testing"
local kr16 = require "robots.kr16"
local motion = morc.lib.load("motion").skills

local HOME = { 0, -90, 90, 0, 45, 0 }

--- A user's component: the other joints at home, A2 (degrees, as the parameters say; ports are
--- radians) either `start` until `step_at` s and `to` after it, or from `start` accelerating at
--- `acc` °/s² until it moves at `speed` °/s (negative: downwards).
local A2 = morc.component {
  name = "a2_source",
  outputs = { "y[6]" },
  params = { start = -90.0, step_at = -1.0, to = 0.0, acc = 250.0, speed = 0.0 },
  step = function(self, inp, out, t)
    local home = { 0, -90, 90, 0, 45, 0 }
    local a2
    if self.step_at >= 0 then
      a2 = t < self.step_at and self.start or self.to
    else
      local sign = self.speed < 0 and -1 or 1
      local t1 = math.abs(self.speed) / self.acc
      if t < t1 then
        a2 = self.start + sign * 0.5 * self.acc * t * t
      else
        a2 = self.start + sign * 0.5 * self.acc * t1 * t1 + self.speed * (t - t1)
      end
    end
    for i = 1, 6 do out.y[i] = home[i] * math.pi / 180 end
    out.y[2] = a2 * math.pi / 180
  end,
}

--- Runs A2 as `params` say into robot.q_cmd for at most `duration` s; the run and where A2 stopped (°).
local function run(name, params, duration)
  local a = morc.assembly { name, duration = duration }
  a:add("src", A2, params)
  a:connect("src.y", "robot.q_cmd")
  local r = morc.engine:run(a)
  return r, kr16:state().q[2]
end

for _, engine in ipairs { { name = "direct simulation" }, { name = "virtual EtherCAT segment", bus = "sim" } } do
  local function start()
    morc.start_engine { robot = kr16, bus = engine.bus }
  end

  T.test(engine.name .. ": a step into q_cmd faults naming A2, the limit, the value and the component", function()
    start()
    local r, a2 = run("step", { step_at = 0.1, to = 60 }, 1.0)
    T.eq(r.ok, false)
    T.eq(r.outcome, "fault")
    for _, part in ipairs { "src", "q_cmd", "A2", "60.0°", "35.0°", "upper limit" } do
      assert(r.reason:find(part, 1, true), ("'%s' not in: %s"):format(part, r.reason))
    end
    assert(math.abs(a2 + 90) < 0.5, ("A2 moved to %.2f° on a refused step"):format(a2))
    -- The robot holds where it stopped and the next motion runs.
    local m = motion.ptp(HOME)
    T.eq(m.ok, true, m.reason)
  end)

  T.test(engine.name .. ": a ramp at 100°/s past A2's limit stops within the braking distance", function()
    start()
    local r, a2 = run("ramp", { speed = 100 }, 3.0)
    T.eq(r.ok, false)
    assert(r.reason:find("past its upper limit 35.0°", 1, true), r.reason)
    -- Braking from 100°/s at A2's 300°/s²: 16.7° (the direct simulation brakes so; the drives of
    -- the segment hold harder). The arm trails its command by the servo's following error
    -- (about 2.5° at 100°/s), so it stands near the limit when the command passes it.
    local braking = 100 * 100 / (2 * 300)
    assert(a2 > 30, ("A2 stopped at %.2f°, far before its limit: the ramp should have reached it"):format(a2))
    assert(a2 < 35 + braking + 1.0, ("A2 stopped at %.2f°, past 35° + braking distance %.1f°"):format(a2, braking))
    local back = motion.ptp(HOME)
    T.eq(back.ok, true, back.reason)
  end)

  T.test(engine.name .. ": too fast is refused naming the speed and the limit in °/s", function()
    start()
    -- 100°/s at once from a standing start: within the velocity limit, not the acceleration's.
    local r = run("fast", { speed = 100, acc = 1e9 }, 0.5)
    T.eq(r.ok, false)
    assert(r.reason:find("accelerates A2 at", 1, true) and r.reason:find("past its bound 5729.6°/s² (its torque limit 2500.0 N·m on its motor's inertia alone)", 1, true), r.reason)
    -- A smooth ramp to 200°/s: the velocity limit (156°/s).
    local r2 = run("fast2", { speed = 200 }, 2.0)
    T.eq(r2.ok, false)
    assert(r2.reason:find("moves A2 at", 1, true) and r2.reason:find("past its velocity limit 156.0°/s", 1, true), r2.reason)
    local back = motion.ptp(HOME)
    T.eq(back.ok, true, back.reason)
  end)

  T.test(engine.name .. ": a feed-forward that is not a number is refused naming the joint", function()
    start()
    local tau = morc.component {
      name = "tau",
      outputs = { "q[6]", "tau[6]" },
      step = function(self, inp, out, t)
        local home = { 0, -90, 90, 0, 45, 0 }
        for i = 1, 6 do out.q[i] = home[i] * math.pi / 180; out.tau[i] = 0 end
        if t > 0.01 then out.tau[3] = 0 / 0 end
      end,
    }
    local a = morc.assembly { "tau", duration = 0.1 }
    a:add("ff", tau)
    a:connect("ff.q", "robot.q_cmd")
    a:connect("ff.tau", "robot.tau_ff")
    local r = morc.engine:run(a)
    T.eq(r.ok, false)
    assert(r.reason:find("NaN", 1, true) and r.reason:find("robot.tau_ff[3]", 1, true), r.reason)
  end)
end

T.test("a robot standing outside its limits accepts only motion back towards them", function()
  -- Moved past A2's upper limit by hand (brakes released), as the start position says.
  morc.start_engine { robot = kr16, q0 = { 0, 40, 90, 0, 45, 0 } }
  local out = run("further", { start = 40, speed = 20 }, 0.3)
  T.eq(out.ok, false)
  assert(out.reason:find("A2 is at 40.0°, past its upper limit 35.0°", 1, true), out.reason)
  assert(out.reason:find("further out", 1, true), out.reason)
  -- Back towards the limit passes.
  local back, a2 = run("back", { start = 40, speed = -20 }, 0.3)
  T.eq(back.ok, true, back.reason)
  assert(a2 < 40, ("A2 at %.2f°"):format(a2))
end)

T.test("a swap refused in its first tick leaves no recording behind", function()
  morc.start_engine { robot = kr16, q0 = HOME }
  local dir = (os.getenv("CARGO_TARGET_TMPDIR") or "/tmp") .. "/guard_refused_swap"
  assert(os.execute("rm -rf '" .. dir .. "' && mkdir -p '" .. dir .. "'"))
  local hold = morc.assembly "hold"
  hold:add("src", A2, { start = -90.0 })
  hold:connect("src.y", "robot.q_cmd")
  morc.engine:start(hold)
  -- A2 30° away from where the running assembly holds it: the takeover check refuses it.
  local jump = morc.assembly "jump"
  jump:add("src", A2, { start = -60.0 })
  jump:connect("src.y", "robot.q_cmd")
  jump:record { "robot.q", folder = dir }
  local ok, err = pcall(morc.engine.swap, morc.engine, jump)
  T.eq(ok, false)
  assert(tostring(err):find("A2", 1, true), tostring(err))
  local ls = assert(io.popen("ls -A '" .. dir .. "'"))
  local left = ls:read("a")
  ls:close()
  T.eq(left, "", "the refused swap's recording is removed")
  assert(math.abs(kr16:state().q[2] + 90) < 0.5, "A2 held where it was")
end)

return T.summary()

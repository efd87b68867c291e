-- examples/stacker_cycle.lua — the dual-arm stacker at work, as in the admittance-control paper:
-- tiles come off a molding line on one side of each arm and are stacked on a packaging line on
-- the other; both arms work at the same time, each on its own (r:together runs both groups'
-- paths at once; the platform, which both share, stays put). For one minute of virtual time,
-- within every joint's limits; it counts the tiles stacked.
--
-- Each arm's cycle: swing over the molding line, down to the tile, up, swing over the stack,
-- down to the top of the stack (12 mm higher for every tile), up. The drives' 100 % limits are
-- the robot definition's (robots/stacker.lua; d2's and theta3's are estimated).
--
--   morc run examples/stacker_cycle.lua
local r = require "robots.stacker"
morc.use_robot(r, { q0 = r.home })

local MINUTE, ABOVE, PICK, STACK, TILE = 60, 600, 380, 250, 12
local home = r.home

--- One arm's path for as many whole cycles as fit in a minute, planned cycle by cycle from
--- home, and when each cycle's tile was put down (s).
local function cycles(group)
  local g = r[group]
  local platform = home[1]
  local moves, placed, at, t = {}, {}, home, 0
  for k = 1, 1000 do
    local stack = STACK + TILE * (k - 1)
    local cycle = {}
    for _, q in ipairs { { platform, ABOVE, -60 }, { platform, PICK, -60 }, { platform, ABOVE, -60 },
                         { platform, ABOVE, 60 }, { platform, stack, 60 }, { platform, ABOVE, 60 } } do
      cycle[#cycle + 1] = { "ptp", g:full(q, home) }
    end
    local down = r:plan(at, { table.unpack(cycle, 1, 5) })
    local whole = r:plan(at, cycle)
    assert(whole.ok, whole.reason)
    if t + whole.duration > MINUTE then break end
    placed[k], t, at = t + down.duration, t + whole.duration, whole["end"]
    for _, m in ipairs(cycle) do moves[#moves + 1] = { "ptp", g:part(m[2]) } end
  end
  return moves, placed
end

local left, left_placed = cycles("left")
local right, right_placed = cycles("right")
local res = r:together({ left = left, right = right }, { record = true, notes = "stacker cycle: both arms, one minute", settle = 0 })
assert(res.ok, res.reason)
local run = res.run
local stacks = 0
for _, t in ipairs(left_placed) do if t <= MINUTE then stacks = stacks + 1 end end
for _, t in ipairs(right_placed) do if t <= MINUTE then stacks = stacks + 1 end end
print(("left arm: %d tiles, %.2f s per cycle; right arm: %d tiles, %.2f s per cycle"):format(
  #left_placed, res.durations.left / #left_placed, #right_placed, res.durations.right / #right_placed))
local worst = 0
for _, e in ipairs(morc.units.from_si(run.data["mon.peak_error"], r)) do worst = math.max(worst, math.abs(e)) end
print(("peak following error %.3f (° / mm), recorded to %s, plotted to %s"):format(worst, run.recordings[1], plot(run, { "robot.q", "robot.tau" })))
print(("stacker: %d stacks per minute"):format(math.floor(stacks * 60 / math.max(res.duration, MINUTE) + 1e-9)))

-- examples/motion_tour.lua — a robot program: the simulated KUKA KR 16-2 draws a square with
-- rounded corners (LIN moves blended within 20 mm), an arc, and comes home, each command
-- checked before it moves and evaluated after. The blended square is recorded.
--
--   morc run examples/motion_tour.lua        (morc plot runs/<file>.h5 shows the recording)
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = kr16.home })
morc.lib.use "motion"                       -- ptp, lin, circ, home, path

print(ptp { 0, -80, 100, 0, 70, 0 })
local p = kr16:fk { 0, -80, 100, 0, 70, 0 } -- the tool pose there: { pos = {mm}, rpy = {°} }
local function at(dx, dy) return { pos = { p.pos[1] + dx, p.pos[2] + dy, p.pos[3] }, rpy = p.rpy } end

-- A 200 mm square; blend = 20 cuts each corner within ~20 mm without stopping.
local square = path({
  { "lin", at(0, 200), blend = 20 },
  { "lin", at(200, 200), blend = 20 },
  { "lin", at(200, 0), blend = 20 },
  { "lin", at(0, 0) },
}, { record = true, ramp = 0.05 })
print(square)

print(circ { via = at(100, -100).pos, to = at(200, 0) })
local far = lin(at(3000, 0))                 -- refused before anything moves: out of reach
print(far)
assert(not far.ok, "a point 3 m away cannot be reached")
print(home())

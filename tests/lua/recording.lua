-- Recording from a program: a:record { patterns… } attaches a recorder
-- to whatever matches; each run writes a new HDF5 file.
local T = require "morc.testing"
local engine = morc.engine
local dir = os.getenv("CARGO_TARGET_TMPDIR") or "/tmp"
morc.record_dir = dir .. "/morc-lua-recording"

local function tracking()
  local a = morc.assembly { "track", duration = 0.2 }
  a:add("ref", "sine", { n = 6, amplitude = 0.1, frequency = 2 })
  a:add("lp", "lowpass", { n = 6, fc = 20 })
  a:connect("ref.y", "lp.u")
  a:connect("lp.y", "robot.q_cmd")
  return a
end

T.test("patterns select signals; every run gets its own file", function()
  local a = tracking()
  a:record { "robot.q*", "lp.y", notes = "first test" }
  local r1 = engine:run(a)
  local r2 = engine:run(a)
  T.eq(r1.ok, true, r1.reason)
  T.eq(#r1.recordings, 1)
  assert(r1.recordings[1] ~= r2.recordings[1], "a new file per run")
  assert(r1.recordings[1]:find(morc.record_dir, 1, true) == 1, r1.recordings[1])
  T.eq(r1.data["rec.samples"], 200)
  T.eq(r1.data["rec.dropped"], 0)
  assert(io.open(r1.recordings[1], "rb"), "file exists")
  assert(tostring(r1):find("recorded " .. r1.recordings[1], 1, true), tostring(r1))
end)

T.test("decimation and an explicit path", function()
  local a = tracking()
  local path = morc.record_dir .. "/explicit.h5"
  os.remove(path)
  os.remove(morc.record_dir .. "/explicit-001.h5")
  a:record { "lp.y", path = path, decimation = 4, name = "slow_rec" }
  local r = engine:run(a)
  T.eq(r.recordings[1], path)
  T.eq(r.data["slow_rec.samples"], 50)
  -- The file is there now: the next run records next to it rather than replacing it.
  r = engine:run(a)
  T.eq(r.recordings[1], morc.record_dir .. "/explicit-001.h5")
end)

T.test("a pattern that matches nothing is an error naming it", function()
  local a = tracking()
  local line = debug.getinfo(1, "l").currentline + 1
  a:record { "robot.tau*" }
  T.raises(function() engine:check(a) end, "recording.lua:" .. line, "'robot.tau*' matches no signal", "robot.q")
end)

return T.summary()

-- The Lua API swept with wrong input (issue 39, item 6): every public function of the `morc`
-- table (and its sub-tables) and every method, field and metamethod of the objects a program
-- meets (robot, model, data, assembly, engine, run handle, bus, vectors, matrices, motion
-- objects, dynamic identification, F/T load, component kinds, …) is called with nothing, an
-- empty table, nil, NaN, a string, a negative number, infinity and nested empty tables. Each
-- may refuse, but no answer may be a panic in Rust (kind "internal", "internal error",
-- "panicked", a cargo registry path): every refusal names the call and what to give.
--
-- Calls that would block, open a network port or start a server thread are not made with
-- input that could succeed: SKIP lists each with its reason. Strings handed to functions that
-- take a path point into a scratch folder, so nothing is written outside it.

local T = require "morc.testing"
local kr16 = require "robots.kr16"

local scratch = os.tmpname()
os.remove(scratch)
os.execute("mkdir -p " .. scratch)
local STRING = scratch .. "/x"

-- What no refusal may say.
local PANIC = { "internal error", "panicked", ".cargo/registry", "This is a bug in morc", "RUST_BACKTRACE" }

-- The wrong inputs: each a list of arguments (n: how many, so nil counts).
local INPUTS = {
  { n = 0 },
  { n = 1, {} },
  { n = 1, nil },
  { n = 1, 0 / 0 },
  { n = 1, STRING },
  { n = 1, -1 },
  { n = 1, math.huge },
  { n = 1, { {} } },
  { n = 1, { 0 / 0, 0 / 0, 0 / 0, 0 / 0, 0 / 0, 0 / 0 } },
  { n = 2, {}, {} },
  { n = 3, 0 / 0, 0 / 0, 0 / 0 },
  { n = 1, { poses = {}, measured = {}, candidates = {}, points = {}, samples = {}, q = {}, n = 0 } },
}

-- Reviewed: calls not made, and why. "NAME" is a function of a table ("morc.live.start") or a
-- method of an object ("engine:run").
local SKIP = {
  ["morc.live.start"] = "serves the live view on a TCP port (tests/live_view.rs)",
  ["morc.live.wait_for_client"] = "waits for a browser to connect",
  ["morc.ros.start"] = "joins ROS 2 on the network (tests/ros_*.rs)",
  ["morc.ros.wait_for_subscribers"] = "waits for ROS 2 peers",
  ["morc.ros.follow_joint_trajectory"] = "serves MoveIt goals until cancelled, on ROS 2",
  ["morc.ros.trajectory_server"] = "offers a ROS 2 action on the network",
  ["morc.ros.topic_based_control"] = "serves ros2_control's topics on ROS 2 until idle",
  ["morc.sim.netft"] = "starts a UDP server thread (its own test: tests/netft.rs); its object is swept below",
  ["morc.catch_interrupt"] = "runs the function it is given: swept through the functions it is handed",
  ["morc.testing.test"] = "registers a test in this very file",
  ["morc.testing.summary"] = "ends this file's tests",
  ["morc.testing.eq"] = "raises an assertion failure by design",
  ["morc.testing.near"] = "raises an assertion failure by design",
  ["morc.testing.raises"] = "raises an assertion failure by design",
  ["morc.start_engine"] = "replaces the engine the objects here run on; swept last, on its own",
  ["run:wait"] = "waits for the run: swept after the run has ended",
}

local swept, calls, found = {}, 0, {}
-- The working folder before: the sweep writes nothing there (0/0 once became the file "-nan").
local folder_before = table.concat(morc.lib.files("."), "\n")

local function panic_text(err)
  local text = tostring(err)
  if type(err) == "userdata" then
    local ok, kind = pcall(function() return err.kind end)
    if ok and kind == "internal" then return text end
  end
  for _, p in ipairs(PANIC) do
    if text:find(p, 1, true) then return text end
  end
end

local function describe(input)
  local parts = {}
  for i = 1, input.n do
    local v = input[i]
    parts[i] = v ~= v and "0/0" or type(v) == "table" and "{…}" or type(v) == "string" and "\"…\"" or tostring(v)
  end
  return table.concat(parts, ", ")
end

-- Calls f with each wrong input (after `self` when it is a method); notes every panic.
local function sweep(name, f, self)
  if SKIP[name] then return end
  swept[#swept + 1] = name
  for _, input in ipairs(INPUTS) do
    calls = calls + 1
    local ok, err
    if self ~= nil then
      ok, err = pcall(f, self, table.unpack(input, 1, input.n))
    else
      ok, err = pcall(f, table.unpack(input, 1, input.n))
    end
    if not ok then
      local text = panic_text(err)
      if text then found[#found + 1] = ("%s(%s): %s"):format(name, describe(input), text:match("^[^\n]*")) end
    end
  end
end

-- The public functions of table `t` (named `prefix`), and of its plain sub-tables.
local function sweep_table(prefix, t, seen)
  seen = seen or {}
  if seen[t] then return end
  seen[t] = true
  local keys = {}
  for k in pairs(t) do
    if type(k) == "string" and not k:match("^_") then keys[#keys + 1] = k end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = t[k]
    if type(v) == "function" then
      sweep(prefix .. "." .. k, v)
    elseif type(v) == "table" and getmetatable(v) == nil then
      sweep_table(prefix .. "." .. k, v, seen)
    end
  end
end

-- The names an object answers to (the REPL's completion finds them the same way).
local function object_names(u)
  local names = {}
  local function from(t)
    for k in pairs(t) do
      if type(k) == "string" then names[k] = true end
    end
  end
  -- An __index function closes over the tables of fields and methods, or over another
  -- __index function that does (a model's adds its in-place forms in Lua).
  local function closed_over(f, depth)
    for i = 1, 20 do
      local n, value = debug.getupvalue(f, i)
      if n == nil then break end
      if type(value) == "table" then from(value) end
      if type(value) == "function" and depth < 3 then closed_over(value, depth + 1) end
    end
  end
  local mt = debug.getmetatable(u)
  if type(mt) ~= "table" then return {}, mt end
  if type(mt.__index) == "table" then from(mt.__index) end
  if type(mt.__index) == "function" then closed_over(mt.__index, 0) end
  local list = {}
  for k in pairs(names) do
    if not k:match("^__") then list[#list + 1] = k end
  end
  table.sort(list)
  return list, mt
end

-- Metamethods called with wrong input too (not __gc, __close, __metatable).
local META = { "__add", "__sub", "__mul", "__div", "__unm", "__len", "__eq", "__lt", "__le", "__concat", "__call", "__tostring", "__index", "__newindex" }

-- Every method, field and metamethod of object `u`, named `class`.
local function sweep_object(class, u)
  local names, mt = object_names(u)
  for _, k in ipairs(names) do
    local ok, v = pcall(function() return u[k] end)
    if not ok then
      local text = panic_text(v)
      if text then found[#found + 1] = ("%s.%s: %s"):format(class, k, text:match("^[^\n]*")) end
    elseif type(v) == "function" then
      sweep(class .. ":" .. k, v, u)
    end
  end
  for _, m in ipairs(META) do
    local f = type(mt) == "table" and rawget(mt, m)
    if type(f) == "function" then sweep(class .. " " .. m, f, u) end
  end
end

-- Output of help(), skills() and friends is not what this test reads.
local function quietly(f)
  local print_, write = print, io.write
  print, io.write = function() end, function() end
  local ok, err = pcall(f)
  print, io.write = print_, write
  if not ok then error(err, 0) end
end

T.test("objects: every method and field with wrong input answers without panic text", function()
  found = {}
  quietly(function()
    local a = morc.assembly { "sweep", duration = 0.01 }
    a:add("s", "sine", { n = 6, amplitude = 0 })
    a:add("p", "probe", { n = 6 })
    a:connect("s.y", "p.u")
    local model = kr16.model
    local objects = {
      { "robot", kr16 },
      { "model", model },
      { "data", morc.data { x = 1, v = { 1, 2 }, s = "text" } },
      { "assembly", a },
      { "engine", morc.engine },
      { "vec", morc.vec { 1, 2, 3 } },
      { "mat", morc.mat { { 1, 2 }, { 3, 4 } } },
      { "motion_profile", morc.motion.profile(1, 1, 1) },
      { "motion_spline", morc.motion.spline(2, { { 0, 0 }, { 1, 1 } }) },
      { "motion_timed", morc.motion.timed { { time = 0, q = { 0, 0 } }, { time = 1, q = { 1, 1 } } } },
      { "motion_fourier", morc.motion.fourier { omega = 1, q0 = { 0 }, a = { 0.1 }, b = { 0 } } },
      { "motion_path", morc.motion.line({ 0, 0, 0, 0, 0, 0 }, { 0.1, 0, 0, 0, 0, 0 }) },
      { "motion_sequence", morc.motion.sequence(kr16, { { "ptp", kr16.home } }) },
      { "dynid", morc.dynid.base(kr16) },
      { "ft_load", morc.ft.load { mass = 1, com = { 0, 0, 0.1 } } },
      { "component kind (Lua)", morc.component { name = "sweep_gain", inputs = { "u" }, outputs = { "y" }, step = function(self, i, o) o.y = i.u end } },
      { "component kind (robot)", kr16:component "ptp" },
    }
    local run = morc.engine:start(a)
    objects[#objects + 1] = { "run", run }
    for _, o in ipairs(objects) do sweep_object(o[1], o[2]) end
    -- The run has ended by now (or is cancelled): its wait() returns.
    run:cancel()
    run:wait()
    SKIP["run:wait"] = nil
    sweep("run:wait", run.wait, run)
    -- A simulated Net F/T (its own thread on 127.0.0.1, stopped with the state).
    sweep_object("sim_netft", morc.sim.netft { rate = 100 })
  end)
  T.eq(#found, 0, "panic text:\n" .. table.concat(found, "\n"))
end)

T.test("the morc table: every function with wrong input answers without panic text", function()
  found = {}
  quietly(function()
    for _, name in ipairs({ "help", "plot", "skills", "pcall" }) do sweep(name, _G[name]) end
    sweep_table("morc", morc)
    sweep_table("morc.testing", T)
  end)
  T.eq(#found, 0, "panic text:\n" .. table.concat(found, "\n"))
end)

-- Input of the right types that describes nothing, or nothing solvable: empty lists, zero
-- lengths, coinciding points, singular data. Each is refused naming the call and what to give,
-- or answered; never a panic. (The first two were nalgebra's panic until issue 39.)
T.test("degenerate input: empty poses, zero candidates, zero-length paths, singular data", function()
  found = {}
  local r = kr16
  local P = { 0.5, 0, 0.5, 0, 0, 0 }
  local R = morc.mat { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }
  local same = {}
  for i = 1, 40 do same[i] = r.home end
  local id = morc.dynid.base(r)
  local cases = {
    { "robot:calibrate with no poses", function() return r:calibrate { poses = {}, measured = {} } end },
    { "robot:measurement_poses with no candidates", function() return r:measurement_poses { candidates = {} } end },
    { "robot:calibrate with one pose", function() return r:calibrate { poses = { r.home }, measured = { { 0, 0, 0 } } } end },
    { "robot:measurement_poses from one pose 40 times", function() return r:measurement_poses { candidates = same, n = 30 } end },
    { "robot:measurement_poses with n = 0", function() return r:measurement_poses { candidates = same, n = 0 } end },
    { "robot:ik out of reach", function() return r:ik { 10000, 0, 0, 0, 0, 0 } end },
    { "robot:ik of NaN", function() return r:ik { 0 / 0, 0, 0, 0, 0, 0 } end },
    { "morc.motion.line of zero length", function() local p = morc.motion.line(P, P); return p:pose(0.5), p:pose(0 / 0) end },
    { "morc.motion.arc through coinciding points", function() return morc.motion.arc(P, { 0.5, 0, 0.5 }, P) end },
    { "morc.motion.profile of length 0", function() return morc.motion.profile(0, 1, 1):sample(0.5) end },
    { "motion_profile:stretched(0)", function() return morc.motion.profile(1, 1, 1):stretched(0) end },
    { "morc.motion.spline through one point twice", function() return morc.motion.spline(2, { { 0, 0 }, { 0, 0 } }):plan({ 0, 0 }, 1, 1) end },
    { "morc.motion.timed with no points", function() return morc.motion.timed {} end },
    { "morc.motion.fourier with no joints", function() return morc.motion.fourier { omega = 1, q0 = {}, a = {}, b = {} } end },
    { "morc.motion.sequence with no moves", function() return morc.motion.sequence(r, {}):plan(r.home) end },
    { "morc.motion.sequence, ptp to where it is", function() return morc.motion.sequence(r, { { "ptp", r.home } }):plan(r.home) end },
    { "mat:solve of a singular matrix", function() return morc.mat { { 0, 0 }, { 0, 0 } }:solve(morc.vec { 1, 1 }) end },
    { "a 0×0 matrix", function() local m = morc.mat(0, 0); return m:pinv(), m:norm(), m:t() end },
    { "morc.ft.identify from one orientation", function() local s = { rot = R, wrench = { 0, 0, -9.81, 0, 0, 0 } }; return morc.ft.identify { s, s, s } end },
    { "morc.ft.identify with no samples", function() return morc.ft.identify {} end },
    { "morc.dynid.base with 0 samples", function() return morc.dynid.base(r, { samples = 0 }) end },
    { "id:estimate of an empty recording", function() return id:estimate { q = {}, qd = {}, tau = {}, dt = 0.001 } end },
    { "id:excite with no evaluations", function() return id:excite { evaluations = 0, restarts = 0 } end },
    { "model:rnea of empty vectors", function() return r.model:rnea({}, {}, {}) end },
  }
  for _, c in ipairs(cases) do
    local ok, err = pcall(c[2])
    local text = not ok and panic_text(err)
    if text then found[#found + 1] = ("%s: %s"):format(c[1], text:match("^[^\n]*")) end
  end
  T.eq(#found, 0, "panic text:\n" .. table.concat(found, "\n"))
  -- The two of the issue say what to give.
  local _, err = pcall(function() return r:calibrate { poses = {}, measured = {} } end)
  assert(tostring(err):find("robot:calibrate: poses is empty: give poses = { q°, … } and measured", 1, true), tostring(err))
  _, err = pcall(function() return r:measurement_poses { candidates = {} } end)
  assert(tostring(err):find("robot:measurement_poses: candidates is empty: give candidates = { q°, … }", 1, true), tostring(err))
end)

T.test("on the simulated bus: the bus's methods, and start_engine itself, without panic text", function()
  found = {}
  quietly(function()
    morc.start_engine { bus = "sim", robot = kr16 }
    sweep_object("bus", morc.engine.bus)
    sweep_object("engine(bus)", morc.engine)
    SKIP["morc.start_engine"] = nil
    sweep("morc.start_engine", morc.start_engine)
  end)
  T.eq(#found, 0, "panic text:\n" .. table.concat(found, "\n"))
  -- The sweep reached what it is for.
  for _, name in ipairs({ "robot:calibrate", "robot:measurement_poses", "model:rnea", "engine:run", "morc.motion.spline", "morc.dynid.base", "bus:sim", "vec __add", "morc.start_engine" }) do
    local seen = false
    for _, s in ipairs(swept) do seen = seen or s == name end
    assert(seen, name .. " was not swept")
  end
  T.eq(table.concat(morc.lib.files("."), "\n"), folder_before, "files the sweep wrote in the working folder")
  print(("api_sweep: %d functions and methods, %d calls, %d skipped"):format(#swept, calls, (function() local n = 0 for _ in pairs(SKIP) do n = n + 1 end return n end)()))
end)

os.execute("rm -rf " .. scratch)
return T.summary()

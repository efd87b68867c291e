-- A robot file chooses its hardware (issue 28, item 3): drives in torque mode (cst) with their
-- motors' rated torque, the wrist's F/T sensor and the cell's safety PLC bound by their position
-- on the line; `--bus sim` (bus = "sim") runs it through the real master, the virtual segment's
-- devices placed where the robot file says.
local T = require "morc.testing"
local ur5 = require "robots.ur5"

--- The UR5 with every drive in `mode`, and `bus` as its robot file's bus = { … }; `parameters`
--- (if given) are every drive's own parameters.
local function ur5_with(mode, bus, parameters, ft)
  local joints = {}
  for i, j in ipairs(ur5.joints) do
    joints[i] = { j.name, drive = { slave = j.slave, gear = j.gear, counts = j.counts, mode = mode, rated_torque = 1.5, parameters = parameters }, limits = j.limits }
  end
  return morc.robot { name = "UR5 (" .. mode .. ")", model = ur5.model, joints = joints, home = ur5.home, bus = bus, ft = ft }
end

local robot = ur5_with("cst", { ft = { slave = 8, class = "ati_axia" }, safety = { slave = 9 } })

T.test("the drives' mode and rated torque read back", function()
  T.eq(robot.joints[1].mode, "cst")
  T.eq(robot.joints[3].rated_torque, 1.5)
  T.eq(ur5.joints[1].mode, "csp")
end)

T.test("the bus of a torque-driven robot takes tau_cmd and shows the sensor and the PLC where the file put them", function()
  morc.start_engine { bus = "sim", robot = robot }
  local engine = morc.engine
  T.eq(engine.inputs[1], "tau_cmd")
  local outputs = table.concat(engine.outputs, " ")
  assert(outputs:find("ft8", 1, true) and outputs:find("safety9", 1, true), outputs)
  -- Zero torque on top of the drives' hold: the arm stays where it is, the PLC permits motion.
  local a = morc.assembly { "torque", duration = 0.2 }
  a:add("tau", "sine", { n = 6, amplitude = 0 })
  a:connect("tau.y", "robot.tau_cmd")
  a:add("p", "probe", { n = 6 })
  a:connect("robot.ft8", "p.u")
  local r = engine:run(a)
  T.eq(r.ok, true, r.reason)
  -- The PLC found at slave 9 is the one the e-stop trips.
  engine.bus:sim { estop = true }
  local stopped = engine:run(a)
  T.eq(stopped.ok, false)
  assert(stopped.reason:find("device 9", 1, true) and stopped.reason:find("e-stop pressed", 1, true), stopped.reason)
  engine.bus:sim { estop = false }
  local ok, why = engine:reset_faults()
  T.eq(ok, true, why)
end)

T.test("the wrist's ft port reads the sensor the robot file places on the bus", function()
  local wristed = ur5_with("csp", { ft = { slave = 8 }, safety = { slave = 9 } }, nil, { frame = "tool0" })
  morc.start_engine { bus = "sim", robot = wristed }
  local outputs = " " .. table.concat(morc.engine.outputs, " ") .. " "
  for _, p in ipairs { " ft ", " enable ", " button ", " ft8 ", " safety9 " } do assert(outputs:find(p, 1, true), p .. " in " .. outputs) end
  local a = morc.assembly { "wrist", duration = 0.05 }
  a:add("wrist", "probe", { n = 6 }); a:connect("robot.ft", "wrist.u")
  a:add("slave8", "probe", { n = 6 }); a:connect("robot.ft8", "slave8.u")
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  local w, s8 = r.data["wrist.u"], r.data["slave8.u"]
  T.eq(#w, #s8)
  for k = 1, #w do T.eq(w[k], s8[k], "robot.ft is slave 8's wrench") end
  morc.start_engine {}
end)

T.test("a device bound by its identity is found wherever the line has it", function()
  -- The simulated cell's F/T sensor: morc's vendor id, its product code (`morc bus scan --sim`).
  local by_identity = ur5_with("csp", { ft = { vendor = 0x0DEF, product = 0x0F76 } }, nil, { frame = "tool0" })
  morc.start_engine { bus = "sim", robot = by_identity }
  local outputs = " " .. table.concat(morc.engine.outputs, " ") .. " "
  local position = outputs:match(" ft(%d+) ")
  assert(position and outputs:find(" ft ", 1, true), outputs)
  local a = morc.assembly { "wrist", duration = 0.05 }
  a:add("wrist", "probe", { n = 6 }); a:connect("robot.ft", "wrist.u")
  a:add("sensor", "probe", { n = 6 }); a:connect("robot.ft" .. position, "sensor.u")
  local r = morc.engine:run(a)
  T.eq(r.ok, true, r.reason)
  for k, x in ipairs(r.data["wrist.u"]) do T.eq(x, r.data["sensor.u"][k], "robot.ft is the identified sensor's wrench") end
  -- An identity no device on the line has: the bring-up says so.
  local missing = ur5_with("csp", { ft = { vendor = 0x0DEF, product = 0x1234 } }, nil, { frame = "tool0" })
  T.raises(function() morc.start_engine { bus = "sim", robot = missing } end, "", "no device on the line is vendor 0xDEF, product 0x1234")
  -- One the line has several times (the six drives): the bring-up asks for the position.
  local several = ur5_with("csp", { ft = { vendor = 0x0DEF, product = 0x0402 } }, nil, { frame = "tool0" })
  T.raises(function() morc.start_engine { bus = "sim", robot = several } end, "", "are all vendor 0xDEF, product 0x402: bind the one meant by its position (slave = …)")
  morc.start_engine {}
  T.raises(function() ur5_with("csp", { ft = { slave = 8, vendor = 0x0DEF, product = 0x0F76 } }) end, "", "give the device's position (slave = N) or its identity (vendor = 0x…, product = 0x…), one of the two")
  T.raises(function() ur5_with("csp", { ft = { vendor = 0x0DEF } }) end, "", "one of the two")
  T.raises(function() ur5_with("csp", { ft = { vendor = -1, product = 1 } }) end, "", "bus.ft: vendor must be the device's vendor id")
end)

T.test("the direct simulation says where a torque-driven robot runs", function()
  T.raises(function() morc.start_engine { robot = robot } end, "", "its drive runs in cst, which the direct simulation does not take; run it on the bus")
end)

T.test("wrong hardware in a robot file is an error naming it", function()
  T.raises(function() ur5_with("torque", nil) end, "", "unknown drive mode 'torque': use \"csp\"")
  T.raises(function() ur5_with("csp", { ft = { slave = 3 } }) end, "", "bus.ft: slave 3 is joint elbow_joint's drive")
  T.raises(function() ur5_with("csp", { ft = { slave = 8, class = "axia" } }) end, "", "unknown device class 'axia'")
  T.raises(function() ur5_with("csp", { plc = { slave = 8 } }) end, "", "unknown key 'plc' in the bus of robot")
  -- A class must fill its role: a generic device gives no wrist wrench, an F/T sensor no e-stop.
  T.raises(function() ur5_with("csp", { ft = { slave = 8, class = "generic" } }) end, "",
    "bus.ft: class \"generic\" is not a force/torque sensor; bus.ft takes \"ati_axia\"")
  T.raises(function() ur5_with("csp", { safety = { slave = 9, class = "ati_axia" } }) end, "",
    "bus.safety: class \"ati_axia\" is not a safety PLC; bus.safety takes \"safety_plc\"")
end)

T.test("a drive's own parameters go down over CoE when the bus comes up", function()
  -- Max torque (0x6072, per mille of the rated torque): every simulated drive has it.
  local limited = ur5_with("cst", nil, { { index = 0x6072, sub = 0, u16 = 1500 } })
  morc.start_engine { bus = "sim", robot = limited }
  T.eq(morc.engine.inputs[1], "tau_cmd")
  -- An object the drive does not have: the bring-up names the drive and the object.
  local vendor = ur5_with("csp", nil, { { index = 0x2381, sub = 1, i32 = -7 } })
  T.raises(function() morc.start_engine { bus = "sim", robot = vendor } end, "", "device 1 'MORC-402': SDO download 0x2381:01 = I32(-7) refused")
  morc.start_engine {}
end)

T.test("wrong drive parameters are errors naming the joint", function()
  T.raises(function() ur5_with("csp", nil, { { index = 0x6072, u16 = 70000 } }) end, "", "drive parameter 1 (0x6072:00): a u16 takes 0 to 65535, got 70000")
  T.raises(function() ur5_with("csp", nil, { { index = 0x6072, u16 = 1, i16 = 1 } }) end, "", "needs exactly one value, keyed by its type")
  T.raises(function() ur5_with("csp", nil, { { index = 0x6072, float = 1 } }) end, "", "unknown key 'float' in drive parameter 1 of robot 'UR5 (csp)', joint shoulder_pan_joint")
  T.raises(function() ur5_with("csp", nil, { { index = -1, u8 = 1 } }) end, "", "index must be an integer 0…0xFFFF, got -1")
  T.raises(function() ur5_with("csp", nil, 5) end, "", "the drive's parameters must be a list")
end)

return T.summary()

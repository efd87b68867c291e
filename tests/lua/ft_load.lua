-- The F/T sensor's load in Lua: identified from static poses, compensated in place at every step,
-- and a Net F/T (simulated, on 127.0.0.1) feeding a Lua component that removes the tool's weight.
local T = require "morc.testing"
local engine = morc.engine

-- The sensor frame's axes in the base frame: rotation about x by a, then about y by b.
local function rot(a, b)
  local ca, sa, cb, sb = math.cos(a), math.sin(a), math.cos(b), math.sin(b)
  return { { cb, sa * sb, ca * sb }, { 0, ca, -sa }, { -sb, sa * cb, ca * cb } }
end
local truth = morc.ft.load { mass = 1.25, com = { 0.01, -0.02, 0.07 }, bias = { 0.8, -0.4, 1.1, 0.02, -0.03, 0.01 } }
-- What the sensor reads with nothing touching the tool: the load's weight plus the bias.
local function reading(R, push)
  local w = truth:compensate(R, { 0, 0, 0, 0, 0, 0 })
  for i = 1, 6 do w[i] = (push and push[i] or 0) - w[i] end
  return w
end

T.test("the load and the bias come back from static poses", function()
  local samples = {}
  for i, p in ipairs { { 0, 0 }, { 0.7, 0 }, { 0, -0.8 }, { 1.2, 0.5 }, { -0.6, 1.4 } } do
    local R = rot(p[1], p[2])
    samples[i] = { rot = i % 2 == 0 and morc.mat(R) or R, wrench = reading(R) }
  end
  local load = morc.ft.identify(samples)
  T.near(load.mass, 1.25, 1e-9, "mass")
  T.near(load.com, { 0.01, -0.02, 0.07 }, 1e-9, "centre of mass (m)")
  T.near(load.bias, truth.bias, 1e-9, "bias")
  T.eq(load.residual.force < 1e-9 and load.residual.torque < 1e-9, true, "an exact fit")
  T.eq(truth.residual, nil, "a load made by hand has no fit")
  -- In place: a push of 10 N along x seen through the tool's weight.
  local out, R = morc.vec(6), rot(0.3, -0.4)
  load:compensate_to(out, R, reading(R, { 10, 0, 0, 0, 0, 0 }))
  T.near({ out[1], out[2], out[3], out[4], out[5], out[6] }, { 10, 0, 0, 0, 0, 0 }, 1e-9, "the push alone")
  local t = { 0, 0, 0, 0, 0, 0 }
  load:compensate_to(t, morc.mat(R), morc.vec(reading(R)))
  T.near(t, { 0, 0, 0, 0, 0, 0 }, 1e-9, "nothing touching")
end)

T.test("poses that cannot determine the load say which quantity and what to do", function()
  local R = rot(0.2, 0.1)
  local same = { { rot = R, wrench = reading(R) }, { rot = R, wrench = reading(R) }, { rot = R, wrench = reading(R) } }
  T.raises(function() morc.ft.identify(same) end, "ft_load.lua:", "cannot determine the mass", "tilt the sensor")
  T.raises(function() morc.ft.identify { same[1], same[2] } end, "at least 3 static poses", "got 2")
  T.raises(function() morc.ft.identify { same[1], { rot = R, wrench = { 1, 2 } }, same[3] } end, "samples[2].wrench has 2 entries, needs 6")
  T.raises(function() morc.ft.identify { same[1], { rot = { { 2, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, wrench = reading(R) }, same[3] } end, "samples[2]: the orientation is not a rotation matrix")
  T.raises(function() morc.ft.load { com = { 0, 0, 0 } } end, "morc.ft.load needs mass (kg)")
end)

T.test("a Lua component compensates the Net F/T's stream at every step", function()
  local sim = morc.sim.netft { rate = 7000 }
  local R = rot(0.5, 0.2)
  sim:set_load(reading(R, { 0, 3, -4, 0, 0, 0.5 }))
  local comp = morc.component {
    name = "ft_comp", inputs = { "w[6]" }, outputs = { "f[6]" },
    params = { mass = 0.0, com = { 0, 0, 0 }, bias = { 0, 0, 0, 0, 0, 0 }, a = 0.0, b = 0.0 },
    init = function(self)
      self.load = morc.ft.load { mass = self.mass, com = self.com, bias = self.bias }
      local ca, sa, cb, sb = math.cos(self.a), math.sin(self.a), math.cos(self.b), math.sin(self.b)
      self.rot = morc.mat { { cb, sa * sb, ca * sb }, { 0, ca, -sa }, { -sb, sa * cb, ca * cb } }
    end,
    step = function(self, inp, out) self.load:compensate_to(out.f, self.rot, inp.w) end,
  }
  local a = morc.assembly { "ft", duration = 0.001 }
  a:add("ft", "netft", { address = sim.address, timeout = 5 })
  a:add("c", comp, { mass = truth.mass, com = truth.com, bias = truth.bias, a = 0.5, b = 0.2 })
  a:add("p", "probe", { n = 6 })
  a:connect("ft.wrench", "c.w")
  a:connect("c.f", "p.u")
  local r = engine:run(a)
  T.eq(r.ok, true, r.reason)
  T.near(r.data["p.u"], { 0, 3, -4, 0, 0, 0.5 }, 1e-5, "the operator's push, the tool's weight and the bias removed")
  T.eq(r.data["ft.received"] >= 1, true, "records received")
  sim:stop()
end)

return T.summary()

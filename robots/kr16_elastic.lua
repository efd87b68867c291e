-- robots/kr16_elastic.lua — the KUKA KR 16-2 of robots/kr16.lua with elastic gears on A1–A3: the
-- drive trains of Spong's flexible-joint model (docs/robots.md, "Elastic drive trains"), as the
-- MoRC experiment's arm (examples/morc_experiment.lua).
--
-- STIFFNESS AND DAMPING ARE ESTIMATES, not identified and not from KUKA: no published
-- identification of the KR 16-2's gears was found. They are chosen for this payload class, the
-- motor–link mode sqrt(K·(1/B + 1/M)) of A1–A3 at 20–30 Hz with 16 kg at the flange (B the
-- reflected rotor inertia of robots/kr16.lua, M the link inertia the model gives), and a
-- damping ratio of a few per cent. Identify them on the real arm (the motor–link difference
-- against a tracker) before trusting model-based figures. The wrist axes stay rigid.
local kr16 = require "robots.kr16"

--- Gear stiffness (N·m/rad) and damping (N·m·s/rad) at the joint, A1–A3.
local ELASTIC = {
  { stiffness = 5.0e5, damping = 1000 },
  { stiffness = 5.0e5, damping = 1000 },
  { stiffness = 3.0e5, damping = 600 },
}

local joints = {}
for i, j in ipairs(kr16.joints) do
  local drive = { slave = j.slave, gear = j.gear, counts = j.counts, offset = j.offset, direction = j.direction,
                  armature = j.armature, viscous = j.viscous, coulomb = j.coulomb }
  if ELASTIC[i] then drive.stiffness, drive.damping = ELASTIC[i].stiffness, ELASTIC[i].damping end
  joints[i] = { j.name, drive = drive, limits = j.limits }
end

return morc.robot {
  name = "KUKA KR 16-2 (elastic A1–A3)",
  model = kr16.model,
  home = kr16.home,
  cartesian = kr16.cartesian,
  joints = joints,
}

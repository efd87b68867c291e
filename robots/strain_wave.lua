-- robots/strain_wave.lua — published torsional stiffness of strain-wave (Harmonic Drive) gears by
-- size, and the gear a joint of a given torque and ratio needs: where the elastic robots'
-- stiffness comes from when the arm's maker publishes none.
--
-- Source: Harmonic Drive AG, "Engineering Data AC Servo Actuators CHA", document 1018854
-- (12/2015 V01; the same figures in 8/2018 V03):
--   * K3, the torsional stiffness above the limit torque T2 where the curve is nearly linear, for
--     ratios > 50: section 3.3.5, tables 50.3 and 50.4;
--   * the maximum output torque Tmax of each size at each ratio: the actuator data tables of
--     section 3.3.2 (CHA-14A-E p. 12, CHA-17A p. 20, CHA-20A p. 34, CHA-25A p. 36, CHA-32A p. 38,
--     CHA-40A p. 40, CHA-50A p. 42, CHA-58A p. 44).
-- The CHA's gear is the CSG component set of the same size. K3 is the gear alone: a joint (bearings,
-- shafts, housing in series) is softer, and a cycloidal gear of the same torque, which large
-- industrial arms often carry, is typically stiffer. So a value chosen here is an ESTIMATE FOR THE
-- CLASS, never an identification of a particular arm.
local M = {}

--- The catalogue: per size, K3 (N·m/rad, ratio > 50) and Tmax (N·m) by ratio.
M.sizes = {
  { size = 14, k3 = 7.1e3, tmax = { [30] = 9, [50] = 18, [80] = 23, [100] = 28 } },
  { size = 17, k3 = 16e3,  tmax = { [30] = 16, [50] = 34, [80] = 43, [100] = 54, [120] = 54 } },
  { size = 20, k3 = 29e3,  tmax = { [30] = 27, [50] = 56, [80] = 74, [100] = 82, [120] = 87, [160] = 92 } },
  { size = 25, k3 = 57e3,  tmax = { [30] = 50, [50] = 98, [80] = 137, [100] = 157, [120] = 167, [160] = 176 } },
  { size = 32, k3 = 120e3, tmax = { [30] = 100, [50] = 216, [80] = 304, [100] = 333, [120] = 353, [160] = 372 } },
  { size = 40, k3 = 230e3, tmax = { [50] = 402, [80] = 519, [100] = 568, [120] = 617, [160] = 647 } },
  { size = 50, k3 = 440e3, tmax = { [50] = 715, [80] = 941, [100] = 980, [120] = 1080, [160] = 1180 } },
  { size = 58, k3 = 710e3, tmax = { [50] = 1020, [80] = 1480, [100] = 1590, [120] = 1720, [160] = 1840 } },
}

-- The catalogued ratio nearest `ratio` among those a size lists.
local function nearest_ratio(tmax, ratio)
  local best
  for r in pairs(tmax) do
    if not best or math.abs(r - ratio) < math.abs(best - ratio) or (math.abs(r - ratio) == math.abs(best - ratio) and r > best) then best = r end
  end
  return best
end

--- The gear a joint needs: the smallest size whose maximum output torque, at the catalogued ratio
--- nearest `ratio`, reaches `torque` (N·m). Returns its K3 (N·m/rad), its size, and whether
--- `torque` is beyond the catalogue (then the largest size's K3, a lower bound for the class).
function M.stiffness_for(torque, ratio)
  assert(type(torque) == "number" and torque > 0, "strain_wave.stiffness_for: torque (N·m) must be a positive number")
  assert(type(ratio) == "number" and ratio > 50, "strain_wave.stiffness_for: K3 is catalogued for ratios above 50, got " .. tostring(ratio))
  for _, s in ipairs(M.sizes) do
    if s.tmax[nearest_ratio(s.tmax, ratio)] >= torque then return s.k3, s.size, false end
  end
  local largest = M.sizes[#M.sizes]
  return largest.k3, largest.size, true
end

--- Damping (N·m·s/rad) for a gear of stiffness `k` driven by a motor of reflected inertia
--- `armature` (kg·m²): D = 2·ζ·√(K·B), ζ = 0.1 against a locked link. The catalogue gives no
--- damping; ζ = 0.1 is an estimate (strain-wave gears' hysteresis loss is of that order).
function M.damping_for(k, armature)
  return 2 * 0.1 * math.sqrt(k * armature)
end

--- `rigid` (a robot) with the catalogue's elastic gears on its first `axes` joints, named `name`:
--- each gear's stiffness for the joint's torque limit and ratio (`stiffness_for`), its damping
--- ζ = 0.1 (`damping_for`). `armature(joint, size)`, if given, is the motor inertia (kg·m²) of an
--- elastic joint where the rigid robot has none (an elastic gear needs one).
function M.with_elastic_gears(rigid, name, axes, armature)
  local joints = {}
  for i, j in ipairs(rigid.joints) do
    local drive = { slave = j.slave, gear = j.gear, counts = j.counts, offset = j.offset, direction = j.direction,
                    armature = j.armature, viscous = j.viscous, coulomb = j.coulomb }
    if i <= axes then
      local k, size = M.stiffness_for(j.limits.torque, j.gear)
      if armature then drive.armature = armature(j, size) end
      drive.stiffness, drive.damping = k, M.damping_for(k, drive.armature)
    end
    joints[i] = { j.name, drive = drive, limits = j.limits }
  end
  return morc.robot { name = name, model = rigid.model, home = rigid.home, cartesian = rigid.cartesian, joints = joints }
end

return M

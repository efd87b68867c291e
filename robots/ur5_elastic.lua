-- robots/ur5_elastic.lua — the UR5 of robots/ur5.lua with its strain-wave gears elastic, all six
-- joints (Spong's flexible-joint model; docs/robots.md, "Elastic drive trains").
--
-- UR joints carry 101:1 strain-wave gears. The URDF's torque limits (150 N·m for the base,
-- shoulder and elbow, 28 N·m for the wrists) are the maximum output torques Harmonic Drive's
-- catalogue gives at 100:1 for sizes 25 (157 N·m) and 14 (28 N·m), so the gears are taken to be of
-- those sizes. STIFFNESS, ARMATURE AND DAMPING ARE ESTIMATES FOR THE CLASS, not identified and not
-- from Universal Robots:
--   * stiffness: K3 of those sizes (robots/strain_wave.lua; Harmonic Drive's CHA engineering
--     data, document 1018854, section 3.3.5): 5.7·10⁴ and 7.1·10³ N·m/rad;
--   * armature (the motor's inertia seen at the joint, which the elastic model needs and the URDF
--     does not give): the catalogue's actuator of the same size and ratio, its output-side moment
--     of inertia without brake (same document: CHA-25A with M512P, table 36.2, 4.4 kg·m²; CHA-14A
--     with resolver, table 14.1, 0.347 kg·m²), scaled from 100:1 to 101:1; UR's own motors may
--     be lighter;
--   * damping: ζ = 0.1 of the motor against a locked link.
-- Identify them on the real arm (the motor–link difference against a tracker) before trusting
-- model-based figures.
local ur5 = require "robots.ur5"
local strain_wave = require "robots.strain_wave"

-- Output-side inertia (kg·m²) at 100:1 of the catalogue's actuator per gear size.
local ACTUATOR_INERTIA_AT_100 = { [25] = 4.4, [14] = 0.347 }

return strain_wave.with_elastic_gears(ur5, "UR5 (elastic)", 6, function(j, size) return ACTUATOR_INERTIA_AT_100[size] * (j.gear / 100) ^ 2 end)

-- robots/kr16_elastic.lua — the KUKA KR 16-2 of robots/kr16.lua with elastic gears on A1–A3: the
-- drive trains of Spong's flexible-joint model (docs/robots.md, "Elastic drive trains"), as the
-- MoRC experiment's arm (examples/morc_experiment.lua).
--
-- STIFFNESS AND DAMPING ARE ESTIMATES FOR THE CLASS, not identified and not from KUKA, which
-- publishes neither its gears nor their stiffness. Each is the catalogue stiffness K3 of the
-- strain-wave gear the joint's torque limit and ratio need (robots/strain_wave.lua: Harmonic Drive's
-- CHA engineering data, document 1018854): A3 (1500 N·m at 121:1) needs the largest size, 58
-- (1720 N·m at 120:1), K3 = 7.1·10⁵ N·m/rad; A1 and A2 (2000 and 2500 N·m) are beyond the
-- catalogue, so its largest K3 is a lower bound for them. Damping: ζ = 0.1 of the motor against
-- a locked link (strain_wave.damping_for). Identify both on the real arm (the motor–link difference
-- against a tracker, morc.dynid.stiffness) before trusting model-based figures. The wrist axes
-- stay rigid (their tiny link inertias would need ~50 substeps per period; docs/robots.md).
local kr16 = require "robots.kr16"
local strain_wave = require "robots.strain_wave"

return strain_wave.with_elastic_gears(kr16, "KUKA KR 16-2 (elastic A1–A3)", 3)

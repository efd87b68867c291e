-- robots/rx130l_elastic.lua — the Stäubli RX130L of robots/rx130l.lua with elastic gears on J1–J3
-- (Spong's flexible-joint model; docs/robots.md, "Elastic drive trains").
--
-- STIFFNESS AND DAMPING ARE ESTIMATES FOR THE CLASS, not identified and not from Stäubli, which
-- publishes no gear stiffness. Each is the catalogue stiffness K3 of the strain-wave gear the
-- joint's torque limit and ratio need (robots/strain_wave.lua: Harmonic Drive's CHA engineering
-- data, document 1018854): J1 (1500 N·m at 130:1) and J3 (1000 N·m at 100:1) need size 58,
-- K3 = 7.1·10⁵ N·m/rad; J2 (2200 N·m) is beyond the catalogue, so its largest K3 is a lower
-- bound. The torque limits themselves are estimates (robots/rx130l.lua). Damping: ζ = 0.1 of the
-- motor against a locked link. Identify both on the real arm before trusting model-based figures.
-- The wrist axes stay rigid.
local rx = require "robots.rx130l"
local strain_wave = require "robots.strain_wave"

return strain_wave.with_elastic_gears(rx, "Stäubli RX130L (elastic J1–J3)", 3)

-- robots/ur5.lua — Universal Robots UR5, model from its URDF (see ur5/PROVENANCE.md).
-- Position, velocity and torque limits come from the URDF; accelerations are ours
-- (the URDF has none). Drive mapping: UR joints have 101:1 harmonic drives.
local function joint(name, slave, acc)
  return { name, drive = { slave = slave, gear = 101, counts = 2^19 }, limits = { acc = acc } }
end

return morc.robot {
  name = "UR5",
  model = morc.model.urdf "ur5/ur5_robot.urdf",
  joints = {
    joint("shoulder_pan_joint", 1, 480),
    joint("shoulder_lift_joint", 2, 480),
    joint("elbow_joint", 3, 480),
    joint("wrist_1_joint", 4, 800),
    joint("wrist_2_joint", 5, 800),
    joint("wrist_3_joint", 6, 800),
  },
  -- Elbow up, tool pointing down (q = 0 is the stretched, singular arm).
  home = { 0, -90, 90, -90, -90, 0 },
}

-- stdlib/assemblies/base_inputs.lua — whether the engine's base takes an input (the simulated
-- robot takes q_cmd, qd_ff and tau_ff; EtherCAT drives in CSP take q_cmd): the assemblies that
-- drive a robot connect what it takes.
return function(name)
  for _, input in ipairs(morc.engine.inputs) do
    if input == name then return true end
  end
  return false
end

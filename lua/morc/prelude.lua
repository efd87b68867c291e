-- The Lua half of the `morc` module: documentation and help.
-- Loaded by the runtime right after the Rust half is installed.

local morc = morc
local docs = setmetatable({}, { __mode = "k" })

--- Attaches a doc string to a function (or any value) so `help` can show it.
function morc.doc(value, text)
  docs[value] = text
  return value
end

--- The doc string attached to a value, or nil.
function morc.doc_of(value)
  return docs[value]
end

--- Shows the documentation of a function, component kind or object.
function help(x)
  if x == nil then
    print([[morc — a robot controller you program in Lua.
  help(f)              documentation of a function, e.g. help(morc.assembly)
  morc.components()    native component kinds; help("gain") shows one
  morc.assembly "name" describe an assembly: a:add(...), a:connect(...)
  morc.engine:run(a)   run it; the result says how it went
  skills()             the loaded skills; help(skill) shows one, skill { … } runs it
  morc.lib.load "name" load a library of skills (morc.lib.list() shows them)]])
    return
  end
  if type(x) == "string" then
    local ok, info = pcall(morc.kind, x)
    if ok then
      local lines = { ("%s — %s"):format(info.name, info.doc) }
      for _, p in ipairs(info.params) do
        lines[#lines + 1] = ("  param  %-12s = %-10s %s"):format(p.name, tostring(p.default), p.doc)
      end
      for _, p in ipairs(info.inputs) do
        lines[#lines + 1] = ("  input  %-12s %-10s %s%s"):format(p.name, p.type, p.doc, p.required and " (required)" or "")
      end
      for _, p in ipairs(info.outputs) do
        lines[#lines + 1] = ("  output %-12s %-10s %s"):format(p.name, p.type, p.doc)
      end
      print(table.concat(lines, "\n"))
      return
    end
  end
  local text = docs[x]
  if text then
    print(text)
  else
    print(("no documentation for %s"):format(tostring(x)))
  end
end

morc.doc(help, "help(x) — shows the documentation of a function, a component kind (by name) or an object.")
morc.doc(morc.doc, "morc.doc(value, text) — attaches a doc string that help(value) shows; returns value.")
morc.doc(morc.doc_of, "morc.doc_of(value) — the doc string attached to value, or nil.")
morc.doc(morc.assembly, [[morc.assembly "name" or morc.assembly { "name", duration = s, overrun = "warn"|"fault" }
Describes an assembly: components on one clock, connected by name.
  a:add(name, kind, { every = k | period = s, param = value, … })  kind: a name (see morc.components()), morc.component{…},
                                                                     morc.fmu(path), or "fmu" with path = "file.fmu"
     interpolate = { "u", … }                                        those inputs, when fed by a slower component, follow the
                                                                     line between its last two samples (one of its periods late)
                                                                     instead of holding the last one
  a:connect("from.port", "to.port" [, { delay = true }])            same-rate connections take effect in the same tick
  a.duration = s                                                     stop after s seconds (else when a component finishes)
Run it with morc.engine:run(a [, { data = d, duration = s }]).]])
morc.doc(morc.data, [[morc.data { key = value, … } — Assembly Data: typed values (numbers, vectors, strings, booleans)
handed to an assembly when it starts (a key "component.param" overrides that parameter) and filled with the
components' results ("component.key") when it ends. Index it like a table.]])
morc.doc(morc.fmu, [[morc.fmu(path) — a component kind made from an FMU file (FMI 2.0 or 3.0, co-simulation or
model exchange): a:add("ctl", morc.fmu "pid.fmu", { kp = 2 }). Parameters are the FMU's by name (Assembly Data
"ctl.kp" sets them too), plus interface = "cs"|"me", me_solver = "euler"|"rk4", me_substeps = n, fmu_logging.
The FMU's sample time is the component's (every/period). kind:info() is morc.fmu_info of it.]])
morc.doc(morc.fmu_info, [[morc.fmu_info(path) — what an FMU declares: name, doc, fmi_version, co_simulation,
model_exchange, default_experiment { start, stop, step, tolerance } and variables, a list of
{ name, causality, type, variability, unit, doc, start, value_reference, dimensions }.]])
morc.doc(morc.components, "morc.components() — the native component kinds, as a list of { name, doc }.")
morc.doc(morc.kind, "morc.kind(name) — a component kind's documentation, inputs, outputs and parameters.")
morc.doc(morc.component, [[morc.component { name, doc, inputs = { "u", "q[6]", "n:integer" }, outputs = { … },
                params = { k = 1 }, init = function(self, out) … end,
                step = function(self, inp, out, t) … end, terminate = function(self) return { … } end }
A component written in Lua, for prototyping. It runs in a Lua state of its own on a thread of its own, so its
functions cannot use local variables from outside them: pass values as params (self.k). A step may return a
string to end the assembly with that reason; terminate may return a table of results for Assembly Data.
Each step is a hand-off between threads: fine at modest rates, see `morc bench lua` for the jitter.]])
morc.doc(morc.engine, [[morc.engine — the engine that cycles the robot and runs assemblies.
  engine:run(a [, { duration = s, data = d, overrun = "warn"|"fault" }])  runs a and returns its result when it ends
  engine:start(a [, opts])   starts a and returns at once a handle: h:wait() → result, h:cancel(), h:status()
  engine:cancel()            ends the running assembly; the robot holds
  engine:check(a)            validates a without running it
  engine.period, engine.clock, engine:time(), engine:tick()]])

morc.doc(morc.robot, [[morc.robot { name, model = morc.model.urdf "file" | morc.model.dh { … },
             joints = { { "A1", drive = { slave, gear, counts, offset, direction, armature, viscous, coulomb },
                          limits = { pos = { lo°, hi° }, vel = °/s, acc = °/s², torque = N·m } }, … },
             tool = { xyz = { mm }, rpy = { ° } }, payload = { mass = kg, com = { mm }, inertia } }
A robot definition (degrees and millimetres; ports and native parameters are SI). Errors name the file:line and the joint.
  r:reachable(q°) → true, or false and why        r:fk(q°) → { pos = {mm}, rpy = {°} }
  r:with_payload { mass, com, inertia } → a new robot      r:add(a, name, "ptp"|"rnea"|"monitor", params) → a
See robots/kr16.lua and robots/ur5.lua.]])
morc.doc(morc.start_engine, [[morc.start_engine { robot = r, q0 = { ° }, clock = "virtual"|"wall", period = s }
Restarts morc.engine in place (the old one stops): on a simulated robot r (forward dynamics, servo drives) starting at q0,
or, without a robot, on the default simulated axes.]])
morc.doc(morc.use_robot, "morc.use_robot(r [, { q0 = { ° }, clock, period }]) — morc.start_engine with robot = r: programs then move the simulated r.")

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
  morc.components()    component kinds; help("gain") shows one
  morc.assembly "name" describe an assembly: a:add(...), a:connect(...)
  morc.engine:run(a)   run it; the result says how it went
  skills()             the loaded skills; help(skill) shows one, skill { … } runs it
  morc.lib.load "name" load a library of skills (morc.lib.list() shows them)]])
    return
  end
  if type(x) == "string" then
    local ok, info = pcall(morc.kind, x)
    if ok then
      -- A parameter's value as it would be written in a script (a list as { 1, 2, 3 }).
      local function show(v)
        if type(v) == "string" then return ("%q"):format(v) end
        if type(v) ~= "table" then return tostring(v) end
        local items = {}
        for i, e in ipairs(v) do items[i] = show(e) end
        -- A record (a list or record parameter's default): its fields by name.
        if #items == 0 then
          local keys = {}
          for k in pairs(v) do if type(k) == "string" then keys[#keys + 1] = k end end
          table.sort(keys)
          for _, k in ipairs(keys) do items[#items + 1] = k .. " = " .. show(v[k]) end
        end
        return "{ " .. table.concat(items, ", ") .. " }"
      end
      -- "[N]", "[x, y, z: N]", "[Fx…: N, N·m]": a port's unit and its elements' names.
      local function unit(p)
        local u = p.unit ~= "" and p.unit or nil
        if p.elements then return ("[%s%s]"):format(table.concat(p.elements, ", "), u and (": " .. u) or "") end
        return u and ("[" .. u .. "]") or ""
      end
      local function line(what, p, text)
        local u = unit(p)
        return ("  %-6s %-12s %-10s %s%s"):format(what, p.name, p.type, u ~= "" and (u .. " ") or "", text)
      end
      local lines = { ("%s — %s"):format(info.name, info.doc) }
      if info.origin ~= "native" then lines[#lines + 1] = "  from   " .. info.origin end
      for _, p in ipairs(info.params) do
        local u = p.unit ~= "" and (" " .. p.unit) or ""
        lines[#lines + 1] = ("  param  %-12s = %-10s %s"):format(p.name, show(p.default) .. u, p.doc)
      end
      for _, p in ipairs(info.inputs) do
        lines[#lines + 1] = line("input", p, p.doc .. (p.required and " (required)" or ""))
      end
      for _, p in ipairs(info.outputs) do
        lines[#lines + 1] = line("output", p, p.doc)
      end
      print(table.concat(lines, "\n"))
      return
    end
  end
  local text = docs[x]
  if not text and type(x) == "userdata" then
    -- Objects made anew on each access (engine.bus) carry their doc in a __doc field.
    local ok, d = pcall(function() return x.__doc end)
    text = ok and type(d) == "string" and d or nil
  end
  if text then
    print(text)
  else
    print(("no documentation for %s"):format(tostring(x)))
  end
end

morc.doc(help, "help(x?: any) — shows the documentation of a function, a component kind (by name) or an object.")
morc.doc(morc.doc, "morc.doc(value: any, text: string) → any — attaches a doc string that help(value) shows; returns value.")
morc.doc(morc.doc_of, "morc.doc_of(value: any) → string? — the doc string attached to value, or nil.")
morc.doc(morc.assembly, [[morc.assembly "name" or morc.assembly { "name", duration = s, overrun = "warn"|"fault" }
morc.assembly(name_or_spec: string|table) → assembly
Describes an assembly: components on one clock, connected by name.
  a:add(name, kind, { every = k | period = s, param = value, … })  kind: a name (see morc.components()), morc.component{…},
                                                                     morc.fmu(path), or "fmu" with path = "file.fmu"
     interpolate = { "u", … }                                        those inputs, when fed by a slower component, follow the
                                                                     line between its last two samples (one of its periods late)
                                                                     instead of holding the last one
  a:connect("from.port", "to.port" [, { delay = true }])            same-rate connections take effect in the same tick
  a:record { "robot.q", "pid.*", every = k, path = "f.h5" | folder = "dir", format = "mcap", notes = "…" }  records those signals of each run (HDF5, or MCAP: format or a .mcap path; MCAP holds ROS 2 messages, with /joint_states, /tf and /robot_description of the engine's robot)
  a:publish { "robot.q", "ff.tau", rate = 100 }                      sends those signals to the live view (morc.live.start, morc --live)
  a.duration = s                                                     stop after s seconds (else when a component finishes)
  morc.assembly { "where", internal = true }                         a run a library makes for itself (reading where the robot
                                                                     is): not the "last run" of the operator page or /morc/run
Run it with morc.engine:run(a [, { data = d, duration = s }]). Its types:
  assembly:add(name: string, kind: string|kind|fmu_kind, params?: table) → assembly
  assembly:connect(from: string, to: string, opts?: { delay?: boolean }) → assembly
  assembly:record(signals: table) → assembly
  assembly:components() → { name: string, kind: string, every: integer, period: number }[]
  assembly.name: string   assembly.duration: number?   assembly.overrun: "warn"|"fault"]])
morc.doc(morc.data, [[morc.data { key = value, … } — Assembly Data: typed values (numbers, vectors, strings, booleans)
handed to an assembly when it starts (a key "component.param" overrides that parameter) and filled with the
components' results ("component.key") when it ends. Index it like a table.
  morc.data(values?: table) → data   data[string]: number|number[]|boolean|string]])
morc.doc(morc.fmu, [[morc.fmu(path: string) → fmu_kind — a component kind made from an FMU file (FMI 2.0 or 3.0, co-simulation or
model exchange): a:add("ctl", morc.fmu "pid.fmu", { kp = 2 }). Parameters are the FMU's by name (Assembly Data
"ctl.kp" sets them too), plus interface = "cs"|"me", me_solver = "euler"|"rk4", me_substeps = n, me_events = "locate"|"step_end", fmu_logging.
The FMU's sample time is the component's (every/period). kind:info() is morc.fmu_info of it.
  fmu_kind:info() → fmu_info   fmu_kind.name: string   fmu_kind.doc: string   fmu_kind.path: string]])
morc.doc(morc.fmu_info, [[morc.fmu_info(path: string) → fmu_info — what an FMU declares: name, doc, fmi_version, co_simulation,
model_exchange, default_experiment { start, stop, step, tolerance } and variables, a list of
{ name, causality, type, variability, unit, doc, start, value_reference, dimensions }.
Types:
  fmu_info.name: string   fmu_info.doc: string   fmu_info.fmi_version: string   fmu_info.generation_tool: string
  fmu_info.co_simulation: boolean   fmu_info.model_exchange: boolean   fmu_info.variables: fmu_variable[]
  fmu_info.default_experiment: { start?: number, stop?: number, step?: number, tolerance?: number }
  fmu_variable.name: string   fmu_variable.causality: string   fmu_variable.type: string   fmu_variable.variability: string
  fmu_variable.dimensions?: integer[]   fmu_variable.unit: string   fmu_variable.doc: string   fmu_variable.start: string?
  fmu_variable.value_reference: integer]])
morc.doc(morc.components, [[morc.components() → { name: string, doc: string, origin: string }[] — the component kinds known by name:
the native kinds (origin "native"), then those added with morc.register, in the order they were added.]])
morc.doc(morc.kind, [[morc.kind(name: string) → kind_info — a component kind's documentation, origin, inputs, outputs and parameters.
  kind_info.name: string   kind_info.doc: string   kind_info.origin: string   kind_info.params: kind_param[]
  kind_info.inputs: kind_port[]   kind_info.outputs: kind_port[]
  kind_port.name: string   kind_port.type: string   kind_port.unit: string   kind_port.doc: string   kind_port.required: boolean
  kind_param.name: string   kind_param.default: any   kind_param.unit: string   kind_param.doc: string]])
morc.doc(morc.register, [[morc.register(kind: kind|fmu_kind|userdata, name?: string) → kind|fmu_kind|userdata, string — adds a kind made with morc.component{…}, morc.fmu(path) or
robot:component "ptp" to the kinds known by name, so a:add(x, name, …) and help(name) find it; returns kind, name.
The name defaults to the kind's own (ROBOT.kind for a robot's). Names are unique: taking a name already
registered is an error naming both origins. In a library the name is LIBRARY.name (the prefix is added), so a
library's components/*.lua, loaded with the library, add e.g. "mylib.filter".
  kind.name: string   kind.doc: string   (robot:component's kinds are plain userdata)]])
morc.doc(morc.component, [[morc.component { name, doc, inputs = { "u", "q[6]", "n:integer" }, outputs = { … },
                params = { k = 1 }, init = function(self, out) … end,
                step = function(self, inp, out, t) … end, terminate = function(self) return { … } end,
                migrate = function(self, old) … end }
A controller, observer or planner written in Lua, stepped at its rate on the engine's own thread for that rate (the
bus rate included): each stepping thread has a Lua state of its own, with memory from a pool of its own (size per
assembly: morc.assembly { …, memory = MB }, default 8) and its collector run in the slack after each tick.
Define it in a module (a library's components/x.lua, or a file loaded with require) that returns it: the engine's
state loads that module by name, so the functions may use the module's locals, helpers and requires, and an edited
module runs from the next prepared assembly (reload in the REPL). Defined in a program's own chunk, the functions
travel as bytecode and may not use locals from outside them: pass values as params (self.k).
A port may declare its unit, as parameters of skills do, and name a vector's elements (recordings keep both and
plots label their axes and lines with them): { "f[3]", unit = "N", elements = { "x", "y", "z" }, doc = "…" };
unit may list one per element ({ "N", "N", "N", "N·m", "N·m", "N·m" }): a plot gives each unit its own axis.
Ports are preallocated: inp.q and out.y are tables of numbers reused every step (write out.y[i] = … in place).
self holds the parameters, the instance's name (self.name) and its sample period in seconds (self.period).
A parameter declared morc.ROBOT takes a robot: params = { robot = morc.ROBOT }, a:add(name, kind, { robot = r }) hands it r
(default: the robot on the engine), and self.robot is r in the component's state, read-only, its model shared rather than
built again (self.robot.model:frame_jacobian_to(J, q, "tool0"), self.robot.joints, .groups, .dof); morc.MODEL takes a model
(or a robot's). A robot module's name ("robots.ur5") is taken too.
A step may return a string to end the assembly with that reason; an error faults the component with file:line and
traceback; print goes through a queue to the console; terminate may return a table of results for Assembly Data.
On a swap (reload, engine:swap) time t goes on, and an instance takes over from the old one of its name and kind:
after init, at the tick boundary, the old self crosses as data (numbers, strings, booleans, tables; functions and
userdata stay behind) and without migrate each of its entries but name and the parameters replaces the new one's;
with migrate(self, old) that function decides (old: the copy). Another kind starts from its init.
Types:
  morc.component(def: component_def) → kind
  component_def.name: string   component_def.doc?: string   component_def.inputs?: (string|port_def)[]   component_def.outputs?: (string|port_def)[]
  port_def.unit?: string|string[]   port_def.elements?: string[]   port_def.doc?: string   (its declaration first: { "f[3]", … })
  component_def.params?: table<string, number|boolean|string|number[]|userdata>
  component_def.init?: fun(self: table, out: table<string, any>)
  component_def.step: fun(self: table, inp: table<string, any>, out: table<string, any>, t: number): string?
  component_def.terminate?: fun(self: table): table?
  component_def.migrate?: fun(self: table, old: table)]])
if morc.engine then morc.doc(morc.engine, [[morc.engine: engine — the engine that cycles the robot and runs assemblies.
  engine:run(a [, { duration = s, data = d, overrun = "warn"|"fault" }])  runs a and returns its result when it ends
  engine:start(a [, opts])   starts a and returns at once a handle: h:wait() → result, h:cancel(), h:status()
  engine:swap(a, opts)       replaces the run started with engine:start by a (a and opts optional: the same
                             assembly prepared afresh, its Lua modules read again) at a tick boundary, no cycle
                             missed; returns the replaced run's result and the new run's handle
  engine:cancel()            ends the running assembly; the robot holds
  engine:check(a)            validates a without running it
  engine:reset_faults()      clears latched bus faults (drive faults, a device out of OP, the safety PLC after an e-stop is
                             released, …) and switches the drives on again: true, or false and what still faults
  engine.bus                 the EtherCAT bus under the engine, or nil: help(engine.bus)
  engine.period, engine.clock, engine.base, engine:time(), engine:tick()
A run's result r: r.ok, r.outcome ("finished"|"fault"|"cancelled"), r.reason (text), r.data, r.recordings, tostring(r) the
report; after a fault r.error is the fault as an error value (help(pcall)): r.error.kind "bus" (a drive, a device, the
safety PLC), "robot" (the simulated arm), "fmi", "lua" (a Lua component), "record", "component" or "assembly".
Types:
  engine:run(a: assembly, opts?: { duration?: number, data?: data, overrun?: "warn"|"fault" }) → run_result
  engine:start(a: assembly, opts?: { duration?: number, data?: data, overrun?: "warn"|"fault" }) → run_handle
  engine:swap(a?: assembly, opts?: { duration?: number, data?: data, overrun?: "warn"|"fault" }) → run_result, run_handle
  engine:cancel()   engine:check(a: assembly) → boolean   engine:reset_faults() → boolean, string?
  engine:time() → number   engine:tick() → integer   engine.period: number   engine.clock: string   engine.base: string
  engine.bus: bus?   engine.inputs: string[]   engine.outputs: string[]   engine.description: string
  run_handle:wait() → run_result   run_handle:cancel()   run_handle:status() → "running"|"finished"|"faulted"|"cancelled"|"done"
  run_result.ok: boolean   run_result.outcome: "finished"|"fault"|"cancelled"   run_result.reason: string
  run_result.data: data   run_result.recordings: string[]   run_result.error: error_value?]]) end

morc.doc(morc.robot, [[morc.robot { name, model = morc.model.urdf "file" | morc.model.dh { … } | morc.model.build { … },
             joints = { { "A1", drive = { slave, gear, counts, offset, direction, mode = "csp"|"csv"|"cst", rated_torque = N·m,
                                          parameters = { { index, sub, u16 = value }, … }, armature, viscous, coulomb, stiffness, damping },
                          limits = { pos = { lo°, hi° }, vel = °/s, acc = °/s², torque = N·m } }, … },
             tool = { xyz = { mm }, rpy = { ° } }, payload = { mass = kg, com = { mm }, inertia },
             home = { ° }, cartesian = { vel = mm/s, acc = mm/s², rot_vel = °/s, rot_acc = °/s² },
             bus = { ft = { slave = N, class = "ati_axia" }, safety = { slave = N, class = "safety_plc" } } }
A robot definition (degrees and millimetres; ports and native parameters are SI). Errors name the file:line and the joint.
  r:reachable(q°) → true, or false and why        r:fk(q° [, "frame"]) → { pos = {mm}, rpy = {°} } of the tool (or the frame)
  r.model → the robot's model in SI units (help(morc.model)): r.model:rnea(q, v, a), r.model:frame_jacobian(q, "tool0"), …
  r:ik(pose [, seed°]) → q° nearest to seed (closed form for spherical wrists, else damped least squares), or nil and why
  r:plan(start°, moves [, { vel_scale, acc_scale, ramp }]) → { ok, reason, duration, singularity, end } without moving
  r:with_payload { mass, com, inertia } → a new robot      r:with_tool { xyz, rpy } → a new robot
  r:set_payload { mass, com, inertia }  changes the payload of r now, also under a running engine (nil: none)
  r:change_tool { xyz, rpy, mass, com, inertia }  cuts r's tool off and connects this one now, geometry and mass (kg; com mm
    and inertia kg·m² in the flange's frame): a running plant and feed-forward carry it from their next step
  r:state(): where r is and what it does, from the engine's last tick (lock-free; fine in a loop while a motion runs),
    { q°, qd°/s, tau, tool = { pos = {mm}, rpy = {°}, frame }, commanded = { q_cmd°, … }, holding, stopping (braking to a
      standstill after a fault or Ctrl-C: qd says how fast it still moves), override %, paused,
      command = { name, elapsed s, progress 0–1, override % } while one runs, faults = { text, … }, io = { other ports }, time, tick }
  r:override([%]): the speed override of r's motions (0–100; a running one changes smoothly within the
    acceleration limits)      r:pause() stops the running motion on its path; r:resume() goes on
  r:jog { joint = i | axis = "x"|"y"|"z"|"a"|"b"|"c", frame = "base"|"tool", step = ° or mm | time = s, dir = ±1, speed = % }:
    jogs as on a pendant (an increment, or moving for a time) within the limits, the tool at most 250 mm/s; stops
    by itself before a joint limit or near a singularity and says so; returns { ok, reason, stopped?, q, tool }
  r:calibrate { poses = { q°, … }, measured = { { x, y, z } mm, … } }: geometric calibration from measured tool positions:
    { robot = the calibrated robot (its FK and IK use it), rms_before, rms_after (mm), identified, dropped = { names },
      errors = { [name] = mm or ° }, observability }     r:perturbed { seed, length = mm, angle = ° }: a "true" robot to simulate one
  r:save_calibration(path, result): result's errors as a Lua file (never replacing one: NAME-001… beside it) → the path written;
    r:calibrated(errors): r with those errors in its model (r:calibrated(dofile(path).errors) at a program's start)
  r:measurement_poses { candidates = { q°, … }, n = 30, index = "O1"…"O5" }: the n poses to measure, by remove-and-replace on the
    observability index: { poses, chosen, index, linear_scan_index, ratio, sweeps }; every candidate within the joint limits,
    n at least what the fit of the parameters they identify needs (an error names the candidate, joint and value, or the n needed)
  In the REPL, `jog` alone is the jog mode (wall clock): q/a w/s e/d r/f t/g y/h move axis 1…6 while held, m switches
    joints / base / tool, +/− the speed, i the increment, Esc returns to the prompt.
  r.groups → { left = { joints = { 1, 2, 3 }, names, tool = "frame" }, … } from the definition's groups = { left = { joints = { "J1", … },
    tool = "frame" } }; r.left → the group as an object: g:fk(q°), g:ptp(qg°), g:full(qg°), g:part(q°) (stdlib/motion/group.lua)
  r.ft → { frame, joints = { i, … }, names } of the wrist F/T sensor (joints: those that move it) (definition: ft = { frame, sim = { load = { mass, com = {mm} }, bias = {N, N·m}, noise = { N, N·m } } });
    the simulated robot then has ports ft (N, N·m, raw), enable and button (the guiding handle) and hand (the script's segment)
  r:sim_hand { { push = { N }, time = s }, { tour = { {mm}, … }, stiffness = N/m, damping, max_force = N, tolerance = mm, dwell = s, time = s },
    { release = true, enable = bool, time = s }, … }: the simulated operator's hand on the tool, from the plant's next step; returns its
    longest duration (s), as r:sim_hand_duration() does later. A tour pulls the tool to each point in turn and presses the
    teach button there.   r.origin → where the definition is (file:line)
  r:add(a, name, kind, params) → a       a:add(name, r:component(kind), params) → a
kinds: ptp { target = q° }, lin { target = pose }, circ { via = {mm}, target = pose }, spline { points = { q°, … } },
  path { moves = { { "ptp", q° }, { "lin", pose, blend = mm, speed = % }, { "circ", via, pose }, { "spline", q1, q2, … } } },
  rnea, monitor { max_error = °, tolerance = ° (mm for a prismatic joint; one for all joints or one per joint) }; trajectories take vel_scale, acc_scale, ramp (s: jerk limit),
  filter (Hz: Bessel reference filter), settle (s), lin_vel (mm/s), lin_acc, rot_vel (°/s), rot_acc.
A pose is { x, y, z, a, b, c } (mm, ° roll-pitch-yaw) or { pos = { mm }, rpy = { ° } }; units = "rad" takes SI. Parameters convert
by the unit each declares (help("kr16.ptp")): rad → °, m → mm and their rates, rad|m per joint (° or mm), m, rad a pose (morc.units).
r.name, r.dof, r.joints, r.home, r.cartesian, r.payload, r.components. See robots/*.lua and docs/robots.md.
Types:
  morc.robot(def: table) → robot
  robot:reachable(q: number[]) → boolean, string?   robot:fk(q: number[], frame?: string) → pose
  robot:ik(pose: pose|number[], seed?: number[], opts?: { units?: "rad" }) → number[]?, string?
  robot:plan(start: number[], moves: table, opts?: { vel_scale?: number, acc_scale?: number, ramp?: number }) → plan
  robot:with_payload(payload: table) → robot   robot:with_tool(tool: { xyz?: number[], rpy?: number[] }) → robot
  robot:sim_hand(script: table[]) → number   robot:sim_hand_duration() → number   robot.groups: table<string, table>   robot.ft: table?
  robot.origin: string
  robot:set_payload(payload?: table)   robot:set_tool(tool: { xyz?: number[], rpy?: number[] })
  robot:change_tool(tool: { xyz?: number[], rpy?: number[], mass?: number, com?: number[], inertia?: number[] })
  robot:state() → robot_state   robot:override(percent?: number) → number   robot:pause()   robot:resume()
  robot:calibrate(data: { poses: number[][], measured: number[][] }) → table   robot:measurement_poses(opts: { candidates: number[][], n?: integer, index?: string }) → table
  robot:perturbed(opts?: { seed?: number, length?: number, angle?: number }) → robot
  robot:calibrated(errors: table) → robot   robot:save_calibration(path: string, result: table) → string
  robot:jog(jog: { joint?: integer, axis?: string, frame?: "base"|"tool", step?: number, time?: number, dir?: number, speed?: number }) → table
  robot_state.q: number[]   robot_state.qd: number[]   robot_state.tau: number[]   robot_state.tool: table?   robot_state.commanded: table
  robot_state.holding: boolean   robot_state.stopping: boolean   robot_state.override: number   robot_state.paused: boolean   robot_state.command: table?
  robot_state.faults: string[]   robot_state.io: table   robot_state.time: number   robot_state.tick: integer   robot_state.payload: number?
  robot:add(a: assembly, name: string, kind: string, params?: table) → assembly   robot:component(kind: string) → userdata
  robot.name: string   robot.dof: integer   robot.joints: table[]   robot.home: number[]   robot.cartesian: table
  robot.payload: number?   robot.components: table<string, string>   robot.model: model
  pose.pos: number[]   pose.rpy: number[]
  plan.ok: boolean   plan.reason: string?   plan.duration: number?   plan.singularity: boolean?   plan.end: number[]?]])
morc.doc(morc.model.build, [[morc.model.build { name, { "J1", parent = "universe", type = "revolute"|"prismatic" (mm), axis = { x, y, z }, xyz = { mm }, rpy = { ° },
    mass = kg, com = { mm }, inertia = { ixx, iyy, izz, ixy, ixz, iyz } }, …, frames = { { "tool", parent = "J3", xyz, rpy } } }
morc.model.build(def: table) → model — a model composed from primitives: revolute joints placed in their parent joint's frame (default: the joint before), each
carrying its body. A tree is fine (two arms on one platform): see robots/stacker.lua.]])
morc.doc(morc.model.dh, [[morc.model.dh { name, convention = "standard"|"modified", { a = mm, alpha = °, d = mm, offset = °, flip = bool,
    mass = kg, com = { mm }, inertia = { … } }, … } — a serial arm from its DH table.
morc.model.dh(def: table) → model]])
morc.doc(morc.model.urdf, [[morc.model.urdf "file.urdf" — a model from URDF (path relative to the script, the working directory or morc's home).
morc.model.urdf(path: string) → model   model.joints: string[]   model.name: string   model.dof: integer]])
morc.doc(morc.start_engine, [[morc.start_engine { robot = r, q0 = { ° }, clock = "virtual"|"wall", period = s }
morc.start_engine(opts: { robot?: robot, q0?: number[], bus?: string|false, drives?: integer, clock?: "virtual"|"wall", period?: number })
morc.start_engine { bus = "sim" | "eth1", drives = 6, clock, period }
Restarts morc.engine in place (the old one stops): on a simulated robot r (forward dynamics, servo drives) starting at q0,
without a robot on the default simulated axes, or on the EtherCAT bus through the real master: "sim" is the simulated
cell (coupler, drives, digital and analog terminals, safety PLC, force/torque sensor), anything else a network interface.
On the bus, robot.q / robot.q_cmd are the drives and each device has its ports (robot.ain9, robot.ft12, …): see
`morc bus scan --sim` and engine.bus.
morc.start_engine { bus = "sim" | "eth1", robot = r, q0 } — the robot's joints on the bus: "sim" makes each simulated
drive move one joint of the simulated arm; both scale counts ⇄ joint angles by r's drive mapping (robot.q in rad).
With a robot and no bus given, the bus the program was started on (`morc --bus …`, morc.bus) is used; bus = false
forces the direct simulation.]])
morc.doc(morc.unknown_key, "morc.unknown_key(key: string, known: string[], place: string) → string — the message for a key morc does not know: \"unknown key 'sped' in ptp's options; did you mean 'speed'?\" (place with its preposition: \"in ptp's options\"), the nearest known key when one is close, else the known ones.")
morc.doc(morc.use_robot, "morc.use_robot(r: robot, opts?: { q0?: number[], clock?: \"virtual\"|\"wall\", period?: number }) — morc.start_engine with robot = r: programs then move the simulated r (morc.current_robot = r).")
morc.doc(pcall, [[pcall(f, ...) → true, f's results | false, err   (Lua's own; how morc's errors look to it)
An error raised by morc is a value with a kind, so a program can react to what went wrong:
  err.kind     "bus" (bring-up, a device, the simulated segment), "robot" (robot file, limits, payload, tool), "model"
               (URDF, DH table, inertias), "record" (recording, plot), "fmi" (an FMU), "assembly" (unknown port, type
               mismatch), "engine" (busy), "component", "library" (a library beyond its grants), "lua" (a wrong argument),
               "interrupted" (Ctrl-C: see morc.catch_interrupt), "internal" (a bug in morc: a panic in the call named)
  err.message  the message, with the file:line it is about, without the traceback
  tostring(err), err:find(…), err:match(…), "…" .. err   the text as before (message and traceback)
An error Lua code raises itself (error "text") stays the text: its err.kind is nil.
  local ok, err = pcall(morc.start_engine, { bus = "eth1", robot = r })
  if not ok and err.kind == "bus" then print("no bus: " .. err.message) end
  error_value.kind: string   error_value.message: string]])

morc.doc(morc.catch_interrupt, [[morc.catch_interrupt(f, ...) → true, f's results | false, message
morc.catch_interrupt(f: function|skill, ...: any) → boolean, any
Calls f(...) (a function or a skill). Ctrl-C stops the robot (it holds) and interrupts the Lua code at the line it is on;
the interruption stays until a command ends (the REPL) or the program ends (morc run, exit 130), so no pcall carries a
program on to its next motion. Only catch_interrupt takes it: when Ctrl-C came during f it returns false and the message,
and the program goes on (new motions may start). Other errors pass through.
  local ok, err = morc.catch_interrupt(lin, target)
  if not ok then print("stopped by the operator: " .. err); home() end]])

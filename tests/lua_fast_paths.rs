//! The fast paths of the calls a real-time controller makes (crates/morc-lua/src/fast.rs) give
//! the same results, bit for bit, and the same errors as mlua's methods they stand in front of:
//! the same Lua cases run in a state with the fast paths and in one where they are taken out
//! again (the original `__index`/`__newindex`/`__len` restored from the fast closures'
//! first upvalue), and every line of the two transcripts must be equal.

use mlua::Lua;

fn state() -> Lua {
    let engine = morc_lua::start_engine(morc_kernel::EngineConfig::default()).unwrap();
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, engine).unwrap();
    lua
}

/// Takes the fast paths out of a state: mlua's own metamethods back in the metatables.
const SLOW: &str = r#"
local model = require("robots.ur5").model
for _, x in ipairs { morc.vec(1), morc.mat(1, 1), model } do
  local mt = debug.getmetatable(x)
  for _, k in ipairs { "__index", "__newindex", "__len" } do
    if mt[k] then mt[k] = select(2, debug.getupvalue(mt[k], 1)) end
  end
end
"#;

/// Whether a vector's first user value holds the pointer the fast paths keep there.
const ACTIVE: &str = r#"
local v = morc.vec(2)
v:axpy(1, { 1, 1 })
return type(debug.getuservalue(v, 1)) == "userdata"
"#;

/// The cases: each runs on fresh objects; its line is what it returned and what it left in
/// the objects, or its error's message.
const CASES: &str = r##"
local model = require("robots.ur5").model
local function fresh()
  local o = {
    v = morc.vec { 1.5, -2.25, 3.125 },
    w = morc.vec { 0.1, 0.2, 0.3 },
    y6 = morc.vec { 0.3, -0.2, 0.1, 0.7, -0.9, 0.4 },
    A = morc.mat { { 1, 2, 0.5, -1, 0.3, 2 }, { 0.1, -0.7, 3, 0.2, 1.1, -0.4 }, { 2.5, 0.3, -1.2, 0.8, 0.6, 1.9 } },
    B = morc.mat(6, 3), S = morc.mat { { 1, 2 }, { 2, 4 } }, S2 = morc.mat(2, 2),
    M = morc.mat(6, 6), J = morc.mat(6, 6), J5 = morc.mat(6, 5), pos = morc.vec(3), pos4 = morc.vec(4),
    rot = morc.mat(3, 3), rot2 = morc.mat(2, 3), tau = morc.vec(6), tau5 = morc.vec(5),
    q = { 0.3, -1.1, 1.4, -0.5, 0.9, 0.2 }, qv = morc.vec { 0.3, -1.1, 1.4, -0.5, 0.9, 0.2 },
    qd = { 0.1, -0.2, 0.3, -0.4, 0.5, -0.6 }, qdd = morc.vec { 1, 0.5, -0.5, 0.25, -1, 2 },
    big = morc.vec(100), bigt = {},
    t3 = { 7, 7, 7 }, t5 = { 9, 9, 9, 9, 9 }, rows = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } },
  }
  for i = 1, 100 do o.bigt[i] = i / 7 end
  return o
end
local function show(x, depth)
  depth = depth or 0
  if type(x) == "number" then
    return math.type(x) == "integer" and ("%d"):format(x) or ("%.17g"):format(x)
  elseif type(x) == "table" then
    if depth > 2 then return "{…}" end
    local parts = {}
    for i = 1, #x do parts[#parts + 1] = show(x[i], depth + 1) end
    return "{" .. table.concat(parts, ",") .. "}"
  elseif type(x) == "userdata" then
    local ok, s = pcall(tostring, x)
    return ok and s or "<userdata>"
  end
  return tostring(x)
end
local cases = {
  -- v[i], v[i] = x, #v, v.n
  { "v[1]", function(o) return o.v[1] end },
  { "v[3]", function(o) return o.v[3] end },
  { "v[2.0]", function(o) return o.v[2.0] end },
  { "v[0]", function(o) return o.v[0] end },
  { "v[4]", function(o) return o.v[4] end },
  { "v[-1]", function(o) return o.v[-1] end },
  { "v[1.5]", function(o) return o.v[1.5] end },
  { "v[inf]", function(o) return o.v[math.huge] end },
  { "v[nan]", function(o) return o.v[0 / 0] end },
  { "v['1']", function(o) return o.v["1"] end },
  { "v[true]", function(o) return o.v[true] end },
  { "v.n", function(o) return o.v.n end },
  { "v.foo", function(o) return o.v.foo end },
  { "#v", function(o) return #o.v end },
  { "v.norm", function(o) return o.v:norm() end },
  { "v[1] = 2", function(o) o.v[1] = 2 end },
  { "v[3.0] = 2.5", function(o) o.v[3.0] = 2.5 end },
  { "v[4] = 1", function(o) o.v[4] = 1 end },
  { "v[0] = 1", function(o) o.v[0] = 1 end },
  { "v[1.5] = 1", function(o) o.v[1.5] = 1 end },
  { "v[1] = 'x'", function(o) o.v[1] = "x" end },
  { "v[1] = '2'", function(o) o.v[1] = "2" end },
  { "v[1] = nil", function(o) o.v[1] = nil end },
  { "v.x = 1", function(o) o.v.x = 1 end },
  -- v:totable(t), v:copy, v:axpy
  { "v:totable(t)", function(o) return o.v:totable(o.t3) end },
  { "v:totable(t5)", function(o) return o.v:totable(o.t5) end },
  { "v:totable()", function(o) return o.v:totable() end },
  { "v:totable('x')", function(o) return o.v:totable("x") end },
  { "v:copy(t)", function(o) o.v:copy({ 4, 5, 6 }) end },
  { "v:copy(w)", function(o) o.v:copy(o.w) end },
  { "v:copy(v)", function(o) o.v:copy(o.v) end },
  { "v:copy(short)", function(o) o.v:copy({ 1, 2 }) end },
  { "v:copy(bad entry)", function(o) o.v:copy({ 1, "x", 3 }) end },
  { "v:copy(A)", function(o) o.v:copy(o.A) end },
  { "v:axpy(2, t)", function(o) o.v:axpy(2, { 0.5, 0.25, 0.125 }) end },
  { "v:axpy(0.3, w)", function(o) o.v:axpy(0.3, o.w) end },
  { "v:axpy('2', t)", function(o) o.v:axpy("2", { 1, 1, 1 }) end },
  { "v:axpy(nil, t)", function(o) o.v:axpy(nil, { 1, 1, 1 }) end },
  { "v:axpy(1, v)", function(o) o.v:axpy(1, o.v) end },
  { "v:axpy(1, short)", function(o) o.v:axpy(1, { 1, 2 }) end },
  { "v:axpy(1, bad)", function(o) o.v:axpy(1, { 1, 2, "x" }) end },
  { "v:axpy(1, bad2)", function(o) o.v:axpy(1, { 1, 2, "3" }) end },
  { "big:axpy(0.1, bigt)", function(o) o.big:axpy(0.1, o.bigt) end },
  { "big:copy(bigt)", function(o) o.big:copy(o.bigt) end },
  -- y:gemv, y:gemv_t
  { "v:gemv(A, t)", function(o) o.v:gemv(o.A, { 1, 2, 3, 4, 5, 6 }) end },
  { "v:gemv(A, y6)", function(o) o.v:gemv(o.A, o.y6) end },
  { "v:gemv(A, t, 2, 0.5)", function(o) o.v:gemv(o.A, { 1, 2, 3, 4, 5, 6 }, 2, 0.5) end },
  { "v:gemv(A, y6, -1, 1)", function(o) o.v:gemv(o.A, o.y6, -1, 1) end },
  { "v:gemv(A, t, 0.3, 0.7)", function(o) o.v:gemv(o.A, { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6 }, 0.3, 0.7) end },
  { "v:gemv(A, t, nil, 1)", function(o) o.v:gemv(o.A, { 1, 2, 3, 4, 5, 6 }, nil, 1) end },
  { "v:gemv(A, t, '2')", function(o) o.v:gemv(o.A, { 1, 2, 3, 4, 5, 6 }, "2") end },
  { "y6:gemv_t(A, t)", function(o) o.y6:gemv_t(o.A, { 1, 2, 3 }) end },
  { "y6:gemv_t(A, v, 0.3, 0.7)", function(o) o.y6:gemv_t(o.A, o.v, 0.3, 0.7) end },
  { "y6:gemv_t(A, t6)", function(o) o.y6:gemv_t(o.A, { 1, 2, 3, 4, 5, 6 }) end },
  { "v:gemv(A, v)", function(o) o.v:gemv(o.A, o.v) end },
  { "v:gemv(w, t)", function(o) o.v:gemv(o.w, { 1, 2, 3 }) end },
  { "v:gemv(A, short)", function(o) o.v:gemv(o.A, { 1, 2, 3 }) end },
  { "v:gemv(A, bad)", function(o) o.v:gemv(o.A, { 1, 2, 3, "x", 5, 6 }) end },
  { "w:gemv(A, v) size", function(o) o.w:gemv(o.A, o.v) end },
  -- M:get, M:set, M.rows, M.cols, M:totable
  { "A:get(2, 3)", function(o) return o.A:get(2, 3) end },
  { "A:get(2.0, 3)", function(o) return o.A:get(2.0, 3) end },
  { "A:get(0, 1)", function(o) return o.A:get(0, 1) end },
  { "A:get(1, 7)", function(o) return o.A:get(1, 7) end },
  { "A:get(1.5, 1)", function(o) return o.A:get(1.5, 1) end },
  { "A:get('1', 1)", function(o) return o.A:get("1", 1) end },
  { "A:get(1)", function(o) return o.A:get(1) end },
  { "A:set(1, 2, 5)", function(o) o.A:set(1, 2, 5) end },
  { "A:set(3, 6, -0.5)", function(o) o.A:set(3, 6, -0.5) end },
  { "A:set(1, 2, '5')", function(o) o.A:set(1, 2, "5") end },
  { "A:set(1, 2)", function(o) o.A:set(1, 2) end },
  { "A:set(4, 2, 1)", function(o) o.A:set(4, 2, 1) end },
  { "A.rows, A.cols", function(o) return o.A.rows, o.A.cols end },
  { "A.foo", function(o) return o.A.foo end },
  { "A[1]", function(o) return o.A[1] end },
  { "A:t()", function(o) return o.A:t() end },
  { "rot:totable(rows)", function(o) o.rot:set(2, 3, 1.25); return o.rot:totable(o.rows) end },
  { "A:totable(rows)", function(o) return o.A:totable({ {}, {}, {} }) end },
  { "A:totable(missing row)", function(o) local t = { {}, {} }; local ok, e = pcall(o.A.totable, o.A, t); return t, ok, ok or e.message end },
  { "A:totable(not rows)", function(o) return o.A:totable({ 1, 2, 3 }) end },
  { "A:totable()", function(o) return o.A:totable() end },
  -- A:pinv_to
  { "A:pinv_to(B, 0.01)", function(o) o.A:pinv_to(o.B, 0.01) end },
  { "A:pinv_to(B)", function(o) o.A:pinv_to(o.B) end },
  { "A:pinv_to(B, -1)", function(o) o.A:pinv_to(o.B, -1) end },
  { "A:pinv_to(B, nan)", function(o) o.A:pinv_to(o.B, 0 / 0) end },
  { "A:pinv_to(B, '0.01')", function(o) o.A:pinv_to(o.B, "0.01") end },
  { "A:pinv_to(M)", function(o) o.A:pinv_to(o.M, 0.01) end },
  { "S:pinv_to(S)", function(o) o.S:pinv_to(o.S, 0.01) end },
  { "A:pinv_to(v)", function(o) o.A:pinv_to(o.v, 0.01) end },
  { "S:pinv_to(S2) singular", function(o) o.S:pinv_to(o.S2) end },
  { "S:pinv_to(S2, 0.1)", function(o) o.S:pinv_to(o.S2, 0.1) end },
  -- the model's in-place forms
  { "rnea_to(tau, q, qd, qdd)", function(o) model:rnea_to(o.tau, o.q, o.qd, o.qdd) end },
  { "rnea_to(tau, qv, qv, qv)", function(o) model:rnea_to(o.tau, o.qv, o.qv, o.qv) end },
  { "rnea_to(qv, qv, qd, qdd)", function(o) model:rnea_to(o.qv, o.qv, o.qd, o.qdd) end },
  { "rnea_to(tau5, …)", function(o) model:rnea_to(o.tau5, o.q, o.qd, o.qdd) end },
  { "rnea_to(table, …)", function(o) model:rnea_to({}, o.q, o.qd, o.qdd) end },
  { "rnea_to(tau, short q)", function(o) model:rnea_to(o.tau, { 1, 2 }, o.qd, o.qdd) end },
  { "rnea_to(tau, q, bad v)", function(o) model:rnea_to(o.tau, o.q, { 1, 2, 3, 4, 5, "x" }, o.qdd) end },
  { "rnea_to(tau, q, qd)", function(o) model:rnea_to(o.tau, o.q, o.qd) end },
  { "gravity_to(tau, q)", function(o) model:gravity_to(o.tau, o.q) end },
  { "gravity_to(tau, qv)", function(o) model:gravity_to(o.tau, o.qv) end },
  { "gravity_to(M, q)", function(o) model:gravity_to(o.M, o.q) end },
  { "nle_to(tau, q, qd)", function(o) model:nle_to(o.tau, o.q, o.qd) end },
  { "aba_to(tau, q, qd, qdd)", function(o) model:aba_to(o.tau, o.q, o.qd, o.qdd) end },
  { "aba_to(tau, q, qd, tau)", function(o) model:aba_to(o.tau, o.q, o.qd, o.tau) end },
  { "friction_to(tau, qd)", function(o) model:friction_to(o.tau, o.qd) end },
  { "friction_to(tau, qv)", function(o) model:friction_to(o.tau, o.qv) end },
  { "friction_to(tau5, qd)", function(o) model:friction_to(o.tau5, o.qd) end },
  { "friction_to(tau, short v)", function(o) model:friction_to(o.tau, { 1, 2 }) end },
  { "crba_to(M, q)", function(o) model:crba_to(o.M, o.q) end },
  { "crba_to(J5, q)", function(o) model:crba_to(o.J5, o.q) end },
  { "crba_to(tau, q)", function(o) model:crba_to(o.tau, o.q) end },
  { "frame_jacobian_to(J, q, tool0)", function(o) model:frame_jacobian_to(o.J, o.q, "tool0") end },
  { "frame_jacobian_to(J, qv, tool0, local)", function(o) model:frame_jacobian_to(o.J, o.qv, "tool0", "local") end },
  { "frame_jacobian_to(J, q, wrist_3_link, world)", function(o) model:frame_jacobian_to(o.J, o.q, "wrist_3_link", "world") end },
  { "frame_jacobian_to(J, q, tool0, nil)", function(o) model:frame_jacobian_to(o.J, o.q, "tool0", nil) end },
  { "frame_jacobian_to(J, q, tool0, bad)", function(o) model:frame_jacobian_to(o.J, o.q, "tool0", "sideways") end },
  { "frame_jacobian_to(J, q, tool0, 5)", function(o) model:frame_jacobian_to(o.J, o.q, "tool0", 5) end },
  { "frame_jacobian_to(J, q, nope)", function(o) model:frame_jacobian_to(o.J, o.q, "nope") end },
  { "frame_jacobian_to(J, q, 3)", function(o) model:frame_jacobian_to(o.J, o.q, 3) end },
  { "frame_jacobian_to(J5, q, tool0)", function(o) model:frame_jacobian_to(o.J5, o.q, "tool0") end },
  { "frame_jacobian_to(J, short q, tool0)", function(o) model:frame_jacobian_to(o.J, { 1 }, "tool0") end },
  { "frame_placement_to(pos, rot, q, tool0)", function(o) model:frame_placement_to(o.pos, o.rot, o.q, "tool0") end },
  { "frame_placement_to(pos, rot, qv, wrist_2_link)", function(o) model:frame_placement_to(o.pos, o.rot, o.qv, "wrist_2_link") end },
  { "frame_placement_to(pos4, …)", function(o) model:frame_placement_to(o.pos4, o.rot, o.q, "tool0") end },
  { "frame_placement_to(pos, rot2, …)", function(o) model:frame_placement_to(o.pos, o.rot2, o.q, "tool0") end },
  { "frame_placement_to(rot, pos, …)", function(o) model:frame_placement_to(o.rot, o.pos, o.q, "tool0") end },
  { "frame_placement_to(pos, rot, q, nope)", function(o) model:frame_placement_to(o.pos, o.rot, o.q, "nope") end },
  { "frame_placement_to(pos, rot, q)", function(o) model:frame_placement_to(o.pos, o.rot, o.q) end },
  { "model.nv, model.name", function(o) return model.nv, model.name end },
  { "model:frames()", function(o) return #model:frames() end },
  { "model.foo", function(o) return model.foo end },
  -- a method called on the wrong type
  { "v.axpy(A, 1, t)", function(o) o.v.axpy(o.A, 1, { 1, 2, 3 }) end },
  { "A.get(v, 1, 1)", function(o) return o.A.get(o.v, 1, 1) end },
  { "model.rnea_to(v, …)", function(o) model.rnea_to(o.v, o.tau, o.q, o.qd, o.qdd) end },
}
local lines = {}
for _, case in ipairs(cases) do
  local o = fresh()
  local r = table.pack(pcall(case[2], o))
  local line
  if r[1] then
    local parts = {}
    for i = 2, r.n do parts[#parts + 1] = show(r[i]) end
    local names = {}
    for k in pairs(o) do names[#names + 1] = k end
    table.sort(names)
    local state = {}
    for _, k in ipairs(names) do
      local x = o[k]
      if type(x) == "userdata" then x = x.rows and x:totable() or x:totable() end
      state[#state + 1] = k .. "=" .. show(x)
    end
    line = "ok " .. table.concat(parts, " ") .. " | " .. table.concat(state, " ")
  else
    local e = r[2]
    line = "error " .. (type(e) == "userdata" and e.message or tostring(e))
  end
  lines[#lines + 1] = case[1] .. " -> " .. line
end
return lines
"##;

fn transcript(lua: &Lua) -> Vec<String> {
    lua.load(CASES).set_name("@cases.lua").eval().unwrap()
}

#[test]
fn fast_paths_give_the_results_and_errors_of_mluas_methods() {
    let fast = state();
    assert!(fast.load(ACTIVE).eval::<bool>().unwrap(), "the fast paths are not installed (a vector's first user value holds no pointer after v:axpy)");
    let slow = state();
    slow.load(SLOW).exec().unwrap();
    assert!(!slow.load(ACTIVE).eval::<bool>().unwrap(), "the fast paths were not taken out of the reference state");

    let (got, expected) = (transcript(&fast), transcript(&slow));
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e, "fast path (left) and mlua's method (right) differ");
    }
    // The cases do exercise both outcomes, on every type.
    let errors = expected.iter().filter(|l| l.contains(" -> error ")).count();
    assert!(errors >= 50 && expected.len() - errors >= 50, "{errors} errors of {} cases:\n{}", expected.len(), expected.join("\n"));
}

/// `morc bench lua-calls` prints the cost of each kind of call a controller makes, measured in a
/// stepping thread's Lua state. Not timed: only that every call ran and printed is checked.
#[test]
fn bench_lua_calls_prints_every_call() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_morc"))
        .env_remove("MORC_PATH")
        .env_remove("MORC_LIB")
        .args(["--no-rt", "bench", "lua-calls"])
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && !stderr.contains("morc bench lua-calls:"), "{stdout}{stderr}");
    for call in ["model:frame_jacobian_to(J, q, \"tool0\")", "model:rnea_to(tau, q, v, a)", "J:pinv_to(Jp, 0.01)", "rot:totable(rows)", "qd:gemv(Jp, w)", "v[i] = x", "pose.error_to (plain Lua)"] {
        let line = stdout.lines().find(|l| l.starts_with(call)).unwrap_or_else(|| panic!("no '{call}' in:\n{stdout}"));
        let ns: f64 = line.trim_end_matches("ns").split_whitespace().last().and_then(|x| x.parse().ok()).unwrap_or_else(|| panic!("no time in '{line}'"));
        assert!(ns > 0.0, "{line}");
    }
}

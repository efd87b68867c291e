//! The model and linear algebra from Lua (issue 17, item 3): every model function called from
//! Lua agrees with Pinocchio 4.1.0's answers for the UR5 (tests/data/reference) to 1e-9, the
//! joint torque regressor reproduces RNEA and, when Pinocchio is importable, equals its
//! computeJointTorqueRegressor; the three Jacobian reference frames match Pinocchio's; bad
//! input is refused with messages that say what to pass.

use std::path::PathBuf;

mod pinocchio_peer;

use mlua::Lua;
use serde_json::Value as Json;

fn reference_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference/dynamics")
}

fn urdf() -> String {
    let path = reference_dir().join("ur5_robot.urdf");
    assert!(path.exists(), "reference URDF missing: {}", path.display());
    path.display().to_string()
}

fn state() -> Lua {
    let engine = morc_lua::start_engine(morc_kernel::EngineConfig::default()).unwrap();
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, engine).unwrap();
    lua.globals().set("URDF", urdf()).unwrap();
    lua
}

fn numbers(value: &Json) -> Vec<f64> {
    value.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

/// Rows of a JSON matrix, flattened row-major.
fn rows(value: &Json) -> Vec<f64> {
    value.as_array().expect("rows").iter().flat_map(numbers).collect()
}

fn max_error(got: &[f64], expected: &[f64], what: &str) -> f64 {
    assert_eq!(got.len(), expected.len(), "{what}: length");
    got.iter().zip(expected).map(|(g, e)| (g - e).abs() / e.abs().max(1.0)).fold(0.0, f64::max)
}

/// Lua that flattens a morc vector or matrix (row-major) into a table, for comparison.
const FLAT: &str = r#"
function flat(x)
  local out = {}
  if x.rows then
    for i = 1, x.rows do for j = 1, x.cols do out[#out + 1] = x:get(i, j) end end
  else
    for i = 1, #x do out[#out + 1] = x[i] end
  end
  return out
end
"#;

#[test]
fn ur5_from_lua_matches_pinocchio() {
    let lua = state();
    lua.load(FLAT).exec().unwrap();
    let text = std::fs::read_to_string(reference_dir().join("ur5_reference.json")).unwrap();
    let reference: Json = serde_json::from_str(&text).unwrap();
    lua.load(
        r#"
        m = morc.model(URDF)
        tau, g, h, ddq = morc.vec(6), morc.vec(6), morc.vec(6), morc.vec(6)
        M, J = morc.mat(6, 6), morc.mat(6, 6)
        pos, rot = morc.vec(3), morc.mat(3, 3)
    "#,
    )
    .exec()
    .unwrap();
    let nq: usize = lua.load("m.nq").eval().unwrap();
    assert_eq!(nq, 6);
    let samples = reference["samples"].as_array().unwrap();
    let mut worst: Vec<(&str, f64)> = Vec::new();
    let mut note = |name: &'static str, e: f64| match worst.iter_mut().find(|(n, _)| *n == name) {
        Some(w) => w.1 = w.1.max(e),
        None => worst.push((name, e)),
    };
    for s in samples {
        let g = lua.globals();
        for key in ["q", "v", "a", "aba_tau"] {
            g.set(key, numbers(&s[key])).unwrap();
        }
        // Each quantity both ways: the allocating form and the in-place one.
        let get = |code: &str| -> Vec<f64> { lua.load(code).eval().unwrap_or_else(|e| panic!("{code}: {e}")) };
        let ee = |code: &str| get(code);
        for (name, code, expected) in [
            ("rnea", "flat(m:rnea(q, v, a))", numbers(&s["tau"])),
            ("rnea_to", "m:rnea_to(tau, morc.vec(q), v, a); return flat(tau)", numbers(&s["tau"])),
            ("gravity", "flat(m:gravity(q))", numbers(&s["gravity"])),
            ("gravity_to", "m:gravity_to(g, q); return flat(g)", numbers(&s["gravity"])),
            ("nle", "flat(m:nle(q, v))", numbers(&s["nle"])),
            ("nle_to", "m:nle_to(h, q, v); return flat(h)", numbers(&s["nle"])),
            ("crba", "flat(m:crba(q))", rows(&s["mass_matrix"])),
            ("crba_to", "m:crba_to(M, q); return flat(M)", rows(&s["mass_matrix"])),
            ("aba", "flat(m:aba(q, v, aba_tau))", numbers(&s["aba_ddq"])),
            ("aba_to", "m:aba_to(ddq, q, v, aba_tau); return flat(ddq)", numbers(&s["aba_ddq"])),
            ("frame_jacobian", "flat(m:frame_jacobian(q, 'tool0'))", rows(&s["ee_jacobian_lwa"])),
            ("frame_jacobian_to", "m:frame_jacobian_to(J, q, 'tool0', 'local_world_aligned'); return flat(J)", rows(&s["ee_jacobian_lwa"])),
        ] {
            note(name, max_error(&ee(code), &expected, name));
        }
        let placement = rows(&s["ee_placement"]);
        let expected_pos = [placement[3], placement[7], placement[11]];
        let expected_rot: Vec<f64> = (0..3).flat_map(|i| placement[4 * i..4 * i + 3].to_vec()).collect();
        note("frame_placement.pos", max_error(&get("flat(m:frame_placement(q, 'tool0').pos)"), &expected_pos, "pos"));
        note("frame_placement.rot", max_error(&get("flat(m:frame_placement(q, 'tool0').rot)"), &expected_rot, "rot"));
        note("frame_placement_to", max_error(&get("m:frame_placement_to(pos, rot, q, 'tool0'); return flat(pos)"), &expected_pos, "pos"));
        note("frame_placement_to.rot", max_error(&get("flat(rot)"), &expected_rot, "rot"));
        // Y·π = rnea, computed in Lua with the vector operations.
        let tau = numbers(&s["tau"]);
        note("regressor Y·π", max_error(&get("flat(m:joint_torque_regressor(q, v, a) * m:dynamic_parameters())"), &tau, "Y·π"));
    }
    for (name, e) in &worst {
        println!("{name:<24} max error/max(1,|ref|) {e:.3e}");
        assert!(*e <= 1e-9, "{name}: error {e:.3e} exceeds 1e-9");
    }
    assert_eq!(worst.len(), 17);
}

/// Pinocchio answers the same questions at test time, when its Python package is installed
/// (`scripts/setup --test` installs `pin`): the Jacobian in all three reference frames and the
/// joint torque regressor. Without it the test says so and checks the regressor's shape only.
#[test]
fn jacobian_frames_and_regressor_match_pinocchio_at_test_time() {
    let lua = state();
    lua.load(FLAT).exec().unwrap();
    let q = [0.3, -1.1, 1.4, -0.5, 0.9, 0.2];
    let (v, a) = ([0.1, -0.2, 0.3, -0.4, 0.5, -0.6], [1.0, 0.5, -0.5, 0.25, -1.0, 2.0]);
    lua.globals().set("q", q.to_vec()).unwrap();
    lua.globals().set("v", v.to_vec()).unwrap();
    lua.globals().set("a", a.to_vec()).unwrap();
    lua.load("m = morc.model(URDF)").exec().unwrap();
    let y: Vec<f64> = lua.load("Y = m:joint_torque_regressor(q, v, a); assert(Y.rows == 6 and Y.cols == 60); return flat(Y)").eval().unwrap();
    let ours: Vec<Vec<f64>> = ["local_world_aligned", "local", "world"].iter().map(|rf| lua.load(format!("flat(m:frame_jacobian(q, 'tool0', '{rf}'))")).eval().unwrap()).collect();
    let script = format!(
        r#"
import json, numpy as np, pinocchio as pin
m = pin.buildModelFromUrdf({urdf:?}); d = m.createData()
q, v, a = np.array({q:?}), np.array({v:?}), np.array({a:?})
f = m.getFrameId("tool0")
pin.computeJointJacobians(m, d, q); pin.updateFramePlacements(m, d)
out = {{"jacobians": [pin.getFrameJacobian(m, d, f, rf).tolist() for rf in (pin.LOCAL_WORLD_ALIGNED, pin.LOCAL, pin.WORLD)],
       "regressor": pin.computeJointTorqueRegressor(m, d, q, v, a).tolist()}}
print(json.dumps(out))
"#,
        urdf = urdf()
    );
    let Some(output) = pinocchio_peer::run(&script) else { return };
    let theirs: Json = serde_json::from_slice(&output).unwrap();
    for (i, name) in ["local_world_aligned", "local", "world"].iter().enumerate() {
        let e = max_error(&ours[i], &rows(&theirs["jacobians"][i]), name);
        println!("jacobian {name:<20} max error {e:.3e}");
        assert!(e <= 1e-9, "{name}: {e:.3e}");
    }
    let e = max_error(&y, &rows(&theirs["regressor"]), "regressor");
    println!("joint torque regressor      max error {e:.3e}");
    assert!(e <= 1e-9, "regressor: {e:.3e}");
}

/// On a URDF with `<dynamics damping friction>` (the xArm7), `m:rnea`, `m:nle`, `m:aba` and
/// their `_to` forms are Pinocchio's rigid-body algorithms (the damping is not in them), and
/// `m:friction(v)` / `m:friction_to` are the drives' `damping·v + friction·sign(v)` as Pinocchio
/// reads them from the same URDF.
#[test]
fn damped_urdf_from_lua_is_pinocchio_and_friction_is_apart() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/xarm7.urdf").display().to_string();
    let lua = state();
    lua.load(FLAT).exec().unwrap();
    let (q, v, a) = ([0.3, -0.6, 0.4, 0.9, -0.5, 1.1, 0.2], [0.5, -1.0, 0.0, 0.8, -0.3, 1.2, -0.7], [1.0, -0.5, 2.0, 0.3, -1.5, 0.6, 0.9]);
    let tau = [3.0, -20.0, 4.0, 8.0, -1.0, 0.5, 0.2];
    for (name, x) in [("q", &q), ("v", &v), ("a", &a), ("tau_in", &tau)] {
        lua.globals().set(name, x.to_vec()).unwrap();
    }
    lua.load(format!("m = morc.model({path:?}); out = morc.vec(7)")).exec().unwrap();
    let get = |code: &str| -> Vec<f64> { lua.load(code).eval().unwrap() };
    let ours = [
        ("rnea", get("flat(m:rnea(q, v, a))"), get("m:rnea_to(out, q, v, a); return flat(out)")),
        ("nle", get("flat(m:nle(q, v))"), get("m:nle_to(out, q, v); return flat(out)")),
        ("aba", get("flat(m:aba(q, v, tau_in))"), get("m:aba_to(out, q, v, tau_in); return flat(out)")),
        ("friction", get("flat(m:friction(v))"), get("m:friction_to(out, morc.vec(v)); return flat(out)")),
    ];
    let script = format!(
        r#"
import json, numpy as np, pinocchio as pin
m = pin.buildModelFromUrdf({path:?}); d = m.createData()
q, v, a, tau = np.array({q:?}), np.array({v:?}), np.array({a:?}), np.array({tau:?})
print(json.dumps({{"rnea": pin.rnea(m, d, q, v, a).tolist(), "nle": pin.nonLinearEffects(m, d, q, v).tolist(),
                  "aba": pin.aba(m, d, q, v, tau).tolist(), "friction": (m.damping * v + m.friction * np.sign(v)).tolist()}}))
"#
    );
    let Some(output) = pinocchio_peer::run(&script) else { return };
    let theirs: Json = serde_json::from_slice(&output).unwrap();
    for (name, allocating, in_place) in &ours {
        let expected = numbers(&theirs[*name]);
        let e = max_error(allocating, &expected, name).max(max_error(in_place, &expected, name));
        println!("xarm7 from Lua vs Pinocchio: {name:<8} max error {e:.3e}");
        assert!(e <= 1e-9, "{name}: {e:.3e}");
    }
    // The joint at rest (v[3] = 0) carries no Coulomb torque.
    assert_eq!(ours[3].1[2], 0.0);
    let refused = lua.load("m:friction({ 1, 2 })").exec().unwrap_err().to_string();
    assert!(refused.contains("model:friction(v): v has 2 entries, the model's nv is 7"), "{refused}");
}

/// The linear algebra: operators, in-place forms, solves and pseudo-inverses against their
/// definitions.
#[test]
fn vectors_and_matrices() {
    let lua = state();
    lua.load(
        r#"
        local v = morc.vec { 1, 2, 3 }
        assert(#v == 3 and v.n == 3 and v[2] == 2)
        v[2] = 5; assert(v[2] == 5)
        local w = v + { 1, 1, 1 }; assert(w[3] == 4)
        assert((v - w)[1] == -1 and (2 * v)[2] == 10 and (v * 2)[2] == 10 and (-v)[1] == -1)
        assert(math.abs(v:norm() - math.sqrt(1 + 25 + 9)) < 1e-15 and v:dot(w) == 2 + 30 + 12)
        local A = morc.mat { { 2, 1, 0 }, { 1, 3, 1 }, { 0, 1, 4 } }
        assert(A.rows == 3 and A.cols == 3 and A:get(2, 3) == 1)
        local y = morc.vec(3)
        y:gemv(A, v); local Av = A * v
        for i = 1, 3 do assert(y[i] == Av[i]) end
        y:gemv(A, { 1, 5, 3 }, 2, 1)   -- y = 2 A v + y = 3 A v
        for i = 1, 3 do assert(math.abs(y[i] - 3 * Av[i]) < 1e-12) end
        y:gemv_t(A, v); local Atv = A:t() * v
        for i = 1, 3 do assert(y[i] == Atv[i]) end
        y:copy(v); y:axpy(2, v); y:scale(0.5)
        for i = 1, 3 do assert(math.abs(y[i] - 1.5 * v[i]) < 1e-15) end
        local x = morc.vec(3)
        A:solve_to(x, v)
        local r = A * x - v; assert(r:norm() < 1e-14)
        assert((A:solve(v) - x):norm() == 0)
        local C = morc.mat(3, 3); C:gemm(A, A); local AA = A * A
        for i = 1, 3 do for j = 1, 3 do assert(C:get(i, j) == AA:get(i, j)) end end
        -- A 2×3 Jacobian: the undamped pseudo-inverse is a right inverse, the damped one shrinks.
        local Jw = morc.mat { { 1, 2, 0.5 }, { -1, 0.3, 2 } }
        local P = morc.mat(3, 2)
        Jw:pinv_to(P, 0)
        local I2 = Jw * P
        for i = 1, 2 do for j = 1, 2 do assert(math.abs(I2:get(i, j) - (i == j and 1 or 0)) < 1e-12) end end
        local Pd = Jw:pinv(0.1)
        assert(Pd.rows == 3 and Pd.cols == 2 and Pd:norm() < P:norm())
        local E = morc.eye(3); assert(E:get(1, 1) == 1 and E:get(1, 2) == 0)
        assert(morc.zeros(4).n == 4 and morc.zeros(2, 5).cols == 5)
        assert(tostring(v):find("vec(3)", 1, true) and tostring(A):find("mat(3×3)", 1, true))
        assert(#v:totable() == 3 and A:totable()[3][3] == 4)
    "#,
    )
    .exec()
    .unwrap();
}

fn error_of(lua: &Lua, code: &str) -> String {
    match lua.load(code).exec() {
        Ok(()) => panic!("no error from: {code}"),
        Err(e) => e.to_string(),
    }
}

/// Wrong sizes, unknown frames and non-numbers: errors that name the call, both sizes and
/// what to pass.
#[test]
fn bad_input_is_refused_clearly() {
    let lua = state();
    lua.load("m = morc.model(URDF); tau = morc.vec(6); J = morc.mat(6, 6); q = { 0, 0, 0, 0, 0, 0 }").exec().unwrap();
    let cases: [(&str, &[&str]); 14] = [
        ("m:rnea({ 1, 2 }, q, q)", &["model:rnea(q, v, a): q has 2 entries, the model's nq is 6"]),
        ("m:rnea_to(morc.vec(5), q, q, q)", &["model:rnea_to(tau, q, v, a): tau", "5 entries, needs 6"]),
        ("m:crba_to(morc.mat(6, 5), q)", &["model:crba_to(M, q): M", "6×5, needs 6×6"]),
        ("m:frame_jacobian(q, 'nope')", &["has no frame 'nope'", "its frames: universe", "tool0"]),
        ("m:frame_jacobian(q, 'tool0', 'global')", &["reference frame \"global\" is unknown", "\"local\""]),
        ("m:gravity({ 0, 0, 'x', 0, 0, 0 })", &["model:gravity(q): q[3] must be a number, got a string"]),
        ("m:gravity(42)", &["model:gravity(q): q must be a morc vector or a table of numbers"]),
        ("local v = morc.vec(3); return v[4]", &["v[i]: index 4 is out of range 1..3"]),
        ("local v = morc.vec(3); v[0] = 1", &["index 0 is out of range 1..3"]),
        ("local v = morc.vec(3); v[1] = 'a'", &["v[1] = x: x must be a number, got a string"]),
        ("morc.vec(3):gemv(morc.mat(3, 4), morc.vec(3))", &["y:gemv(A, x): A is 3×4, so x needs 4 entries and y 3; x has 3, y has 3"]),
        ("morc.mat(2, 3):solve_to(morc.vec(3), { 1, 2 })", &["A:solve_to(x, b): A is 2×3; solve needs a square matrix"]),
        ("local A = morc.mat(2, 2); A:pinv_to(morc.mat(2, 2), 0)", &["rank deficient", "give a damping > 0"]),
        ("local y = morc.vec(3); y:gemv(morc.eye(3), y)", &["y:gemv(A, x): x: the vector is being written by this same call"]),
    ];
    for (code, needles) in cases {
        let e = error_of(&lua, code);
        for n in needles {
            assert!(e.contains(n), "{code}: expected {n:?} in: {e}");
        }
    }
    let e = error_of(&lua, "morc.mat { { 1, 2 }, { 3 } }");
    assert!(e.contains("row 2 has 1 entries, row 1 has 2"), "{e}");
}

/// `robot.model` is the robot's model with one workspace, and `robot:fk(q, "frame")` picks the
/// frame (degrees and mm, as robots speak), agreeing with the model's SI placement.
#[test]
fn robot_model_and_fk_by_frame() {
    let lua = state();
    let ok: bool = lua
        .load(
            r#"
        local r = require "robots.ur5"
        local m = r.model
        assert(rawequal(m, r.model), "robot.model is the same userdata each time")
        assert(m.nq == 6)
        local qdeg = { 10, -80, 90, -30, 45, 20 }
        local q = {}
        for i = 1, 6 do q[i] = math.rad(qdeg[i]) end
        local tool = r:fk(qdeg)
        local wrist = r:fk(qdeg, "wrist_2_link")
        local p = m:frame_placement(q, "wrist_2_link").pos
        for i = 1, 3 do assert(math.abs(wrist.pos[i] - 1000 * p[i]) < 1e-9, "wrist pos") end
        assert(math.abs(tool.pos[1] - wrist.pos[1]) > 1e-3, "the tool is elsewhere")
        local ok, err = pcall(r.fk, r, qdeg, "elbow")
        assert(not ok and tostring(err):find("no frame 'elbow'", 1, true), tostring(err))
        return true
    "#,
        )
        .eval()
        .unwrap();
    assert!(ok);
}

/// Mimic joints (a gripper's fingers, as on the Franka Panda) load as Pinocchio 3's
/// `buildModel(…, mimic=True)` makes them: no coordinate of their own, and the dynamics are
/// the full model's projected through G (q_full = Gᵀq + offset): tau = G tau_full,
/// M = G M_full Gᵀ, J = J_full Gᵀ. Checked against the same URDF without its mimic tags, and
/// against Pinocchio when it is importable.
#[test]
fn mimic_joints_follow_their_masters() {
    use nalgebra::{DMatrix, DVector};
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/mimic_gripper.urdf");
    let text = std::fs::read_to_string(&path).unwrap();
    let lua = state();
    lua.load(FLAT).exec().unwrap();
    lua.globals().set("MIMIC", path.display().to_string()).unwrap();
    let (q, v, a) = ([0.3, -0.4, 0.02], [0.1, 0.2, -0.3], [0.5, -1.0, 2.0]);
    lua.globals().set("q", q.to_vec()).unwrap();
    lua.globals().set("v", v.to_vec()).unwrap();
    lua.globals().set("a", a.to_vec()).unwrap();
    lua.load("m = morc.model(MIMIC); assert(m.nq == 3 and m.nv == 3, m.nq)").exec().unwrap();
    let refused = error_of(&lua, "morc.robot { name = 'g', model = m, joints = {} }");
    assert!(refused.contains("mimic joints (finger_joint2, thumb_joint)"), "{refused}");
    let get = |code: &str| -> Vec<f64> { lua.load(code).eval().unwrap_or_else(|e| panic!("{code}: {e}")) };
    let tau = get("flat(m:rnea(q, v, a))");
    let mass = get("flat(m:crba(q))");
    let jac = get("flat(m:frame_jacobian(q, 'tcp'))");
    let ddq = get("flat(m:aba(q, v, m:rnea(q, v, a)))");
    assert!(max_error(&ddq, &a, "aba(rnea)") < 1e-9, "aba(rnea(q, v, a)) = {ddq:?}, not a");
    let y_pi = get("flat(m:joint_torque_regressor(q, v, a) * m:dynamic_parameters())");
    assert!(max_error(&y_pi, &tau, "Y·π") < 1e-12);

    // The same arm with independent finger and thumb joints.
    let unmimicked: String = text.lines().filter(|l| !l.contains("<mimic")).collect::<Vec<_>>().join("\n");
    let full = morc_model::parse_urdf(&unmimicked, "unmimicked").unwrap();
    let mimic = morc_model::load_urdf(&path).unwrap();
    assert_eq!((full.nv(), mimic.nv(), mimic.njoints()), (5, 3, 6));
    let mut g = DMatrix::zeros(3, 5);
    let mut q_full = DVector::zeros(5);
    for j in 1..mimic.njoints() {
        let (s, o) = mimic.mimic(j).map_or((1.0, 0.0), |m| (m.multiplier, m.offset));
        g[(mimic.idx_v(j), full.idx_v(j))] = s;
        q_full[full.idx_v(j)] = s * q[mimic.idx_v(j)] + o;
    }
    let (v_full, a_full) = (g.transpose() * DVector::from_row_slice(&v), g.transpose() * DVector::from_row_slice(&a));
    let mut data = morc_model::Data::new(&full);
    let tau_full = morc_model::rnea(&full, &mut data, q_full.as_slice(), v_full.as_slice(), a_full.as_slice()).clone();
    assert!(max_error(&tau, (&g * tau_full).as_slice(), "tau = G tau_full") < 1e-12, "tau");
    let m_full = morc_model::crba(&full, &mut data, q_full.as_slice()).clone();
    let m_proj = &g * m_full * g.transpose();
    assert!(max_error(&mass, m_proj.transpose().as_slice(), "M") < 1e-12, "M");
    let tcp = full.frame_index("tcp").unwrap();
    let j_full = morc_model::compute_frame_jacobian(&full, &mut data, q_full.as_slice(), tcp).clone();
    let j_proj = j_full * g.transpose();
    let j_rows: Vec<f64> = (0..6).flat_map(|r| (0..3).map(move |c| (r, c))).map(|(r, c)| j_proj[(r, c)]).collect();
    assert!(max_error(&jac, &j_rows, "J") < 1e-12, "J");
    // Written back out, the mimic tags survive.
    let again = morc_model::parse_urdf(&morc_model::to_urdf(&mimic), "round trip").unwrap();
    assert_eq!(again.nv(), 3);
    assert_eq!(again.mimic(5).map(|m| (m.multiplier, m.offset)), Some((-0.5, 0.1)));

    let script = format!(
        r#"
import json, numpy as np, pinocchio as pin
m = pin.buildModelFromUrdf({path:?}, mimic=True); d = m.createData()
q, v, a = np.array({q:?}), np.array({v:?}), np.array({a:?})
tau = pin.rnea(m, d, q, v, a)
M = pin.crba(m, d, q); M = np.triu(M) + np.triu(M, 1).T
pin.computeJointJacobians(m, d, q); pin.updateFramePlacements(m, d)
J = pin.getFrameJacobian(m, d, m.getFrameId("tcp"), pin.LOCAL_WORLD_ALIGNED)
print(json.dumps({{"nq": m.nq, "tau": tau.tolist(), "M": M.tolist(), "J": J.tolist()}}))
"#,
        path = path.display().to_string()
    );
    let Some(output) = pinocchio_peer::run(&script) else { return };
    let theirs: Json = serde_json::from_slice(&output).unwrap();
    assert_eq!(theirs["nq"], 3);
    for (name, ours, key) in [("tau", &tau, "tau"), ("M", &mass, "M"), ("J", &jac, "J")] {
        let expected = if key == "tau" { numbers(&theirs[key]) } else { rows(&theirs[key]) };
        let e = max_error(ours, &expected, name);
        println!("mimic model vs Pinocchio mimic=True: {name:<4} max error {e:.3e}");
        assert!(e <= 1e-9, "{name}: {e:.3e}");
    }
}

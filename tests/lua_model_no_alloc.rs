//! A Lua loop calling the model's `_to` forms, the in-place linear algebra and `v[i]` get/set
//! allocates nothing from the Rust allocator once warm (issue 17, item 3). Lua's own memory
//! comes from the Rust allocator too (mlua), so this counts the Lua side as well.
//! A single test in its own binary, counting this thread's allocations only.

use morc_test_support::alloc::{allocations_during, assert_allocated_no_more, control_allocation, CountingAllocator};
use std::path::PathBuf;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const SETUP: &str = r#"
local m = morc.model(URDF)
local q, v, a = morc.vec { 0.3, -1.1, 1.4, -0.5, 0.9, 0.2 }, morc.vec { 0.1, -0.2, 0.3, -0.4, 0.5, -0.6 }, morc.vec { 1, 0.5, -0.5, 0.25, -1, 2 }
local qt = { 0.3, -1.1, 1.4, -0.5, 0.9, 0.2 }
local tau, g, ddq, x, y = morc.vec(6), morc.vec(6), morc.vec(6), morc.vec(6), morc.vec(6)
local M, J, P, C, Y = morc.mat(6, 6), morc.mat(6, 6), morc.mat(6, 6), morc.mat(6, 6), morc.mat(6, 60)
local J3, P3 = morc.mat(3, 6), morc.mat(6, 3)
local pos, rot = morc.vec(3), morc.mat(3, 3)
-- A model with mimic joints: its forward dynamics take the dense path.
local g3 = morc.model(MIMIC)
local q3, t3, d3, M3 = { 0.3, -0.4, 0.02 }, morc.vec(3), morc.vec(3), morc.mat(3, 3)
function step(n)
  for _ = 1, n do
    m:rnea_to(tau, q, v, a)
    m:rnea_to(tau, qt, v, a)
    m:gravity_to(g, q)
    m:nle_to(g, qt, v)
    m:aba_to(ddq, q, v, tau)
    m:friction_to(g, v)
    m:friction_to(g, qt)
    m:crba_to(M, q)
    m:frame_jacobian_to(J, q, "tool0")
    m:frame_jacobian_to(C, q, "tool0", "local")
    m:frame_jacobian_to(C, q, "wrist_3_link", "world")
    m:frame_placement_to(pos, rot, q, "tool0")
    m:joint_torque_regressor_to(Y, q, v, a)
    J:pinv_to(P, 0.01)
    for i = 1, 3 do for j = 1, 6 do J3:set(i, j, J:get(i, j)) end end
    J3:pinv_to(P3, 0.01)
    M:solve_to(x, tau)
    y:gemv(J, x)
    y:gemv(P, qt, 1, 0.5)
    y:gemv_t(J, x)
    C:gemm(J, P)
    y:copy(x)
    y:axpy(0.5, x)
    y:scale(0.9)
    for i = 1, #y do y[i] = y[i] + x[i] * 0.001 end
    J:set(1, 1, y.n + J.rows + J.cols + J:get(1, 1))
    g3:rnea_to(t3, q3, q3, q3)
    g3:aba_to(d3, q3, q3, t3)
    g3:crba_to(M3, q3)
  end
  return y[1]
end
"#;

#[test]
fn lua_model_loop_allocates_nothing_when_warm() {
    let urdf = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference/dynamics/ur5_robot.urdf");
    assert!(urdf.exists(), "reference URDF missing: {}", urdf.display());
    let engine = morc_lua::start_engine(morc_kernel::EngineConfig::default()).unwrap();
    let lua = morc_lua::new_state().unwrap();
    morc_lua::install(&lua, engine).unwrap();
    lua.globals().set("URDF", urdf.display().to_string()).unwrap();
    lua.globals().set("MIMIC", urdf.parent().unwrap().join("../../mimic_gripper.urdf").display().to_string()).unwrap();
    lua.load(SETUP).exec().unwrap();
    let step: mlua::Function = lua.globals().get("step").unwrap();
    // Warm up: workspaces sized on first use, Lua's and mlua's internal stacks grown.
    for _ in 0..3 {
        step.call::<f64>(100).unwrap();
    }
    // What one call from Rust costs by itself (argument and result passing), to tell it
    // apart from the loop: the loop of 1000 must cost no more than the empty one.
    let empty = allocations_during(|| {
        step.call::<f64>(0).unwrap();
    });
    let count = allocations_during(|| {
        control_allocation();
        let y = step.call::<f64>(1000).unwrap();
        assert!(y.is_finite());
    });
    assert_allocated_no_more("1000 iterations of the Lua loop of model _to forms and in-place linear algebra", count, empty);
}

//! Fast paths for the calls a real-time controller makes every step: `v[i]`, `v[i] = x`, `#v`,
//! `v.n`, `M.rows`, `M.cols`, `M:get`, `M:set`, `v:totable(t)`, `M:totable(rows)`, `y:copy`,
//! `y:axpy`, `y:gemv`, `y:gemv_t`, `A:pinv_to` and the model's `rnea_to`, `gravity_to`,
//! `nle_to`, `aba_to`, `friction_to`, `crba_to`, `frame_jacobian_to` and `frame_placement_to`.
//!
//! A call through mlua costs 0.3–1 µs of machinery (its lock, a protected call per table access,
//! the userdata borrow, the error wrapper) around maths that takes 0.1–0.5 µs. These are
//! `lua_CFunction`s on Lua's C API, put in front of mlua's in the same metatables (`__index`
//! gives them for the methods' names), so the Lua surface and its documentation are unchanged.
//! Each handles only the case where every argument is right (types by metatable, sizes,
//! no aliasing): anything else — a wrong argument, a size mismatch, an allocating form — is
//! forwarded with the same arguments to mlua's method, before anything the caller can see has
//! changed (or, for `M:totable`, after writing what mlua's method writes again), which raises
//! the same error as ever or does the rest of the work. So errors keep their wording (a
//! traceback shows one more `[C]` frame), and no error is raised from here.
//!
//! A userdata's Rust value is found through its first user value, a light userdata pointing at
//! it, set on the first fast call (mlua keeps the value at a fixed place on the heap for the
//! userdata's life; no morc code sets user values on vectors, matrices or models). The value
//! is accessed without mlua's borrow flag: a Lua call runs these only while no Rust code holds
//! a borrow of one (morc's methods on these types hold theirs only while they run, and call no
//! Lua meanwhile). Lua code can reach that user value only through the debug library
//! (`debug.setuservalue`), which can break any invariant of the state anyway.

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use mlua::{ffi, AnyUserData, Function, LightUserData, Lua, ObjectLike, Table, Value};
use nalgebra::{DMatrix, DVector};

use crate::linalg::{gemv_entries, gemv_vec, LuaMat, LuaVec};
use crate::model::LuaModel;
use morc_model::ReferenceFrame;

// The upvalues of every fast closure.
/// What the closure stands in front of: mlua's method, `__index`, `__newindex` or `__len`.
const ORIG: c_int = 1;
/// The metatables of morc vectors, matrices and models (the type check).
const VEC_MT: c_int = 2;
const MAT_MT: c_int = 3;
const MODEL_MT: c_int = 4;
/// Functions giving a userdata's Rust value as a light userdata (or nil), by type.
const VEC_PTR: c_int = 5;
const MAT_PTR: c_int = 6;
const MODEL_PTR: c_int = 7;
/// `__index`: the fast methods by name, and the fields (their [`Field`] code).
const FAST: c_int = 8;
const UPVALUES: c_int = 8;

/// The most entries a table read as a vector may have on the fast path (copied to the C stack);
/// longer ones go through mlua.
const MAX_TABLE: usize = 64;

#[derive(Clone, Copy)]
enum Kind {
    Vec,
    Mat,
    Model,
}

impl Kind {
    fn metatable(self) -> c_int {
        match self {
            Kind::Vec => VEC_MT,
            Kind::Mat => MAT_MT,
            Kind::Model => MODEL_MT,
        }
    }
    fn resolver(self) -> c_int {
        match self {
            Kind::Vec => VEC_PTR,
            Kind::Mat => MAT_PTR,
            Kind::Model => MODEL_PTR,
        }
    }
}

/// Fields read by `__index` without a call: `v.n`, `M.rows`, `M.cols`.
#[derive(Clone, Copy)]
enum Field {
    N = 1,
    Rows = 2,
    Cols = 3,
}

type Fast = unsafe fn(*mut ffi::lua_State) -> Option<c_int>;

/// The Rust value of the userdata at `idx` (an argument, > 0) if it is of `kind`.
///
/// # Safety
/// Called from a fast closure (its upvalues set by [`install`]).
unsafe fn ud<T>(l: *mut ffi::lua_State, idx: c_int, kind: Kind) -> Option<*mut T> {
    if ffi::lua_type(l, idx) != ffi::LUA_TUSERDATA || ffi::lua_getmetatable(l, idx) == 0 {
        return None;
    }
    let ours = ffi::lua_rawequal(l, -1, ffi::lua_upvalueindex(kind.metatable())) != 0;
    ffi::lua_pop(l, 1);
    if !ours {
        return None;
    }
    let mut p = std::ptr::null_mut();
    if ffi::lua_getiuservalue(l, idx, 1) == ffi::LUA_TLIGHTUSERDATA {
        p = ffi::lua_touserdata(l, -1);
        ffi::lua_pop(l, 1);
    } else {
        ffi::lua_pop(l, 1);
        // First fast call on this userdata: mlua finds the value (nil if it is borrowed).
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(kind.resolver()));
        ffi::lua_pushvalue(l, idx);
        ffi::lua_call(l, 1, 1);
        if ffi::lua_type(l, -1) == ffi::LUA_TLIGHTUSERDATA {
            p = ffi::lua_touserdata(l, -1);
            ffi::lua_setiuservalue(l, idx, 1);
        } else {
            ffi::lua_pop(l, 1);
        }
    }
    (!p.is_null()).then_some(p as *mut T)
}

/// Whether arguments `a` and `b` are the same userdata (a destination also read).
unsafe fn same(l: *mut ffi::lua_State, a: c_int, b: c_int) -> bool {
    let p = ffi::lua_touserdata(l, a);
    !p.is_null() && p == ffi::lua_touserdata(l, b)
}

/// A number argument (integer or float; no string coercion).
unsafe fn number(l: *mut ffi::lua_State, idx: c_int) -> Option<f64> {
    (ffi::lua_type(l, idx) == ffi::LUA_TNUMBER).then(|| ffi::lua_tonumberx(l, idx, std::ptr::null_mut()))
}

/// An optional number argument: `default` when absent or nil.
unsafe fn optional(l: *mut ffi::lua_State, idx: c_int, default: f64) -> Option<f64> {
    match ffi::lua_type(l, idx) {
        ffi::LUA_TNONE | ffi::LUA_TNIL => Some(default),
        _ => number(l, idx),
    }
}

/// A 1-based index in `1..=n` as a 0-based one (a whole number, as `linalg::index` takes).
unsafe fn index(l: *mut ffi::lua_State, idx: c_int, n: usize) -> Option<usize> {
    if ffi::lua_type(l, idx) != ffi::LUA_TNUMBER {
        return None;
    }
    let i = if ffi::lua_isinteger(l, idx) != 0 {
        ffi::lua_tointegerx(l, idx, std::ptr::null_mut())
    } else {
        let x = ffi::lua_tonumberx(l, idx, std::ptr::null_mut());
        if x.fract() != 0.0 {
            return None;
        }
        x as i64
    };
    (i >= 1 && i as u64 <= n as u64).then(|| i as usize - 1)
}

/// Copies a vector argument (a morc vector or a table of numbers) of exactly `out.len()` entries.
unsafe fn read(l: *mut ffi::lua_State, idx: c_int, out: &mut [f64]) -> bool {
    match ffi::lua_type(l, idx) {
        ffi::LUA_TTABLE => {
            if ffi::lua_rawlen(l, idx) != out.len() {
                return false;
            }
            for (i, x) in out.iter_mut().enumerate() {
                let ty = ffi::lua_rawgeti(l, idx, i as ffi::lua_Integer + 1);
                *x = ffi::lua_tonumberx(l, -1, std::ptr::null_mut());
                ffi::lua_pop(l, 1);
                if ty != ffi::LUA_TNUMBER {
                    return false;
                }
            }
            true
        }
        _ => match ud::<LuaVec>(l, idx, Kind::Vec) {
            Some(v) if (*v).0.len() == out.len() => {
                out.copy_from_slice((*v).0.as_slice());
                true
            }
            _ => false,
        },
    }
}

/// A vector argument: a morc vector's entries, or a table's copied into `buf`.
unsafe fn entries(l: *mut ffi::lua_State, idx: c_int, buf: &mut [f64; MAX_TABLE]) -> Option<&[f64]> {
    if ffi::lua_type(l, idx) == ffi::LUA_TTABLE {
        let n = ffi::lua_rawlen(l, idx);
        return (n <= MAX_TABLE && read(l, idx, &mut buf[..n])).then(|| &buf[..n]);
    }
    ud::<LuaVec>(l, idx, Kind::Vec).map(|v| (*v).0.as_slice())
}

/// Calls what the closure stands in front of with the closure's arguments, returning all its
/// results: the slow path, with mlua's checks and messages.
unsafe fn forward(l: *mut ffi::lua_State) -> c_int {
    let n = ffi::lua_gettop(l);
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(ORIG));
    ffi::lua_insert(l, 1);
    ffi::lua_call(l, n, ffi::LUA_MULTRET);
    ffi::lua_gettop(l)
}

/// Runs `fast`; when it declines, restores the arguments and forwards them.
///
/// # Safety
/// `l` runs a fast closure. A Lua error may only come out of `forward`'s call or, out of memory,
/// from a table write or the first call's resolver; `fast` keeps no value with a destructor
/// alive across those, so the longjmp skips no destructor.
#[inline(always)]
unsafe fn run(l: *mut ffi::lua_State, fast: Fast) -> c_int {
    let top = ffi::lua_gettop(l);
    if let Some(n) = fast(l) {
        return n;
    }
    ffi::lua_settop(l, top);
    forward(l)
}

/// A fast closure `$name` whose fast path is `$body` (`None`: forward to mlua).
macro_rules! entry {
    ($name:ident, |$l:ident| $body:expr) => {
        unsafe extern "C-unwind" fn $name($l: *mut ffi::lua_State) -> c_int {
            unsafe fn fast($l: *mut ffi::lua_State) -> Option<c_int> {
                $body
            }
            // SAFETY: installed as a closure with the upvalues `run` needs (see `install`).
            unsafe { run($l, fast) }
        }
    };
}

/// `__index` of all three types: fast methods and fields by name, then (vectors) `v[i]`.
unsafe fn index_fast(l: *mut ffi::lua_State, kind: Kind) -> Option<c_int> {
    match ffi::lua_type(l, 2) {
        ffi::LUA_TSTRING => {
            ffi::lua_pushvalue(l, 2);
            match ffi::lua_rawget(l, ffi::lua_upvalueindex(FAST)) {
                ffi::LUA_TFUNCTION => Some(1),
                ffi::LUA_TNUMBER => {
                    let code = ffi::lua_tointegerx(l, -1, std::ptr::null_mut());
                    ffi::lua_pop(l, 1);
                    let n = match (kind, code) {
                        (Kind::Vec, c) if c == Field::N as i64 => (*ud::<LuaVec>(l, 1, kind)?).0.len(),
                        (Kind::Mat, c) if c == Field::Rows as i64 => (*ud::<LuaMat>(l, 1, kind)?).m.nrows(),
                        (Kind::Mat, c) if c == Field::Cols as i64 => (*ud::<LuaMat>(l, 1, kind)?).m.ncols(),
                        _ => return None,
                    };
                    ffi::lua_pushinteger(l, n as ffi::lua_Integer);
                    Some(1)
                }
                _ => None,
            }
        }
        ffi::LUA_TNUMBER if matches!(kind, Kind::Vec) => {
            let v = &(*ud::<LuaVec>(l, 1, kind)?).0;
            ffi::lua_pushnumber(l, v[index(l, 2, v.len())?]);
            Some(1)
        }
        _ => None,
    }
}

/// Forwards `__index` to mlua's (a function, or the methods table itself).
unsafe fn index_slow(l: *mut ffi::lua_State) -> c_int {
    ffi::lua_settop(l, 2);
    if ffi::lua_type(l, ffi::lua_upvalueindex(ORIG)) == ffi::LUA_TTABLE {
        ffi::lua_pushvalue(l, 2);
        ffi::lua_gettable(l, ffi::lua_upvalueindex(ORIG));
        return 1;
    }
    forward(l)
}

unsafe extern "C-unwind" fn vec_index(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: installed as `__index` with the upvalues of a fast closure.
    unsafe { index_fast(l, Kind::Vec).unwrap_or_else(|| index_slow(l)) }
}

unsafe extern "C-unwind" fn mat_index(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: as vec_index.
    unsafe { index_fast(l, Kind::Mat).unwrap_or_else(|| index_slow(l)) }
}

unsafe extern "C-unwind" fn model_index(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: as vec_index.
    unsafe { index_fast(l, Kind::Model).unwrap_or_else(|| index_slow(l)) }
}

entry!(vec_newindex, |l| {
    let v = &mut (*ud::<LuaVec>(l, 1, Kind::Vec)?).0;
    let i = index(l, 2, v.len())?;
    v[i] = number(l, 3)?;
    Some(0)
});

entry!(vec_len, |l| {
    ffi::lua_pushinteger(l, (*ud::<LuaVec>(l, 1, Kind::Vec)?).0.len() as ffi::lua_Integer);
    Some(1)
});

entry!(vec_totable, |l| {
    let v = &(*ud::<LuaVec>(l, 1, Kind::Vec)?).0;
    // Without a table it allocates one: mlua's.
    if ffi::lua_type(l, 2) != ffi::LUA_TTABLE {
        return None;
    }
    for (i, x) in v.iter().enumerate() {
        ffi::lua_pushnumber(l, *x);
        ffi::lua_rawseti(l, 2, i as ffi::lua_Integer + 1);
    }
    ffi::lua_pushvalue(l, 2);
    Some(1)
});

/// The destination vector `y` (argument 1) and a source `x` (argument `x`) of its size that is
/// not `y` itself.
unsafe fn y_and_x(l: *mut ffi::lua_State, x: c_int, buf: &mut [f64; MAX_TABLE]) -> Option<(&mut DVector<f64>, &[f64])> {
    let y = ud::<LuaVec>(l, 1, Kind::Vec)?;
    if same(l, 1, x) {
        return None;
    }
    let x = entries(l, x, buf)?;
    let y = &mut (*y).0;
    (x.len() == y.len()).then_some((y, x))
}

entry!(vec_copy, |l| {
    let mut buf = [0.0; MAX_TABLE];
    let (y, x) = y_and_x(l, 2, &mut buf)?;
    y.as_mut_slice().copy_from_slice(x);
    Some(0)
});

entry!(vec_axpy, |l| {
    let a = number(l, 2)?;
    let mut buf = [0.0; MAX_TABLE];
    let (y, x) = y_and_x(l, 3, &mut buf)?;
    // As mlua's method does it, entry by entry (the same bits).
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
    Some(0)
});

/// `y:gemv(A, x [, alpha, beta])` and `y:gemv_t`.
unsafe fn gemv(l: *mut ffi::lua_State, transpose: bool) -> Option<c_int> {
    let y = ud::<LuaVec>(l, 1, Kind::Vec)?;
    let a = &(*ud::<LuaMat>(l, 2, Kind::Mat)?).m;
    let (alpha, beta) = (optional(l, 4, 1.0)?, optional(l, 5, 0.0)?);
    if same(l, 1, 3) {
        return None;
    }
    let (rows, cols) = if transpose { (a.ncols(), a.nrows()) } else { a.shape() };
    if ffi::lua_type(l, 3) == ffi::LUA_TTABLE {
        let mut buf = [0.0; MAX_TABLE];
        let x = entries(l, 3, &mut buf)?;
        let y = &mut (*y).0;
        if x.len() != cols || y.len() != rows {
            return None;
        }
        // The table path of mlua's method, so both give the same bits.
        gemv_entries(y, a, |j| Ok(x[j]), alpha, beta, transpose).ok()?;
    } else {
        let x = &(*ud::<LuaVec>(l, 3, Kind::Vec)?).0;
        let y = &mut (*y).0;
        if x.len() != cols || y.len() != rows {
            return None;
        }
        gemv_vec(y, a, x, alpha, beta, transpose);
    }
    Some(0)
}

entry!(vec_gemv, |l| gemv(l, false));
entry!(vec_gemv_t, |l| gemv(l, true));

entry!(mat_get, |l| {
    let m = &(*ud::<LuaMat>(l, 1, Kind::Mat)?).m;
    let (i, j) = (index(l, 2, m.nrows())?, index(l, 3, m.ncols())?);
    ffi::lua_pushnumber(l, m[(i, j)]);
    Some(1)
});

entry!(mat_set, |l| {
    let m = &mut (*ud::<LuaMat>(l, 1, Kind::Mat)?).m;
    let (i, j) = (index(l, 2, m.nrows())?, index(l, 3, m.ncols())?);
    m[(i, j)] = number(l, 4)?;
    Some(0)
});

entry!(mat_totable, |l| {
    let m = &(*ud::<LuaMat>(l, 1, Kind::Mat)?).m;
    if ffi::lua_type(l, 2) != ffi::LUA_TTABLE {
        return None;
    }
    for (i, r) in m.row_iter().enumerate() {
        // A missing row: mlua's method names it (after writing the rows before it, as here).
        if ffi::lua_rawgeti(l, 2, i as ffi::lua_Integer + 1) != ffi::LUA_TTABLE {
            return None;
        }
        for (j, x) in r.iter().enumerate() {
            ffi::lua_pushnumber(l, *x);
            ffi::lua_rawseti(l, -2, j as ffi::lua_Integer + 1);
        }
        ffi::lua_pop(l, 1);
    }
    ffi::lua_pushvalue(l, 2);
    Some(1)
});

entry!(mat_pinv_to, |l| {
    let a = ud::<LuaMat>(l, 1, Kind::Mat)?;
    let b = ud::<LuaMat>(l, 2, Kind::Mat)?;
    let damping = optional(l, 3, 0.0)?;
    if same(l, 1, 2) || (*b).m.shape() != ((*a).m.ncols(), (*a).m.nrows()) || !(damping >= 0.0 && damping.is_finite()) {
        return None;
    }
    // Rank deficient: computed again by mlua's method, which raises the error.
    (*a).pinv_into(&mut (*b).m, damping, "A:pinv_to(B, damping)").is_ok().then_some(0)
});

/// Reads the model's inputs: q from argument `q`, and v and a (or tau) from `v` and `a` when given.
unsafe fn inputs(l: *mut ffi::lua_State, m: *mut LuaModel, q: c_int, v: Option<c_int>, a: Option<c_int>) -> Option<()> {
    let (qs, vs, as_) = (*m).inputs_mut();
    (read(l, q, qs) && v.is_none_or(|v| read(l, v, vs)) && a.is_none_or(|a| read(l, a, as_))).then_some(())
}

/// Copies `src` into the morc vector argument `idx` if it is one of the same size.
unsafe fn write_vec(l: *mut ffi::lua_State, idx: c_int, src: &DVector<f64>) -> Option<c_int> {
    let out = &mut (*ud::<LuaVec>(l, idx, Kind::Vec)?).0;
    (out.len() == src.len()).then(|| out.copy_from(src))?;
    Some(0)
}

/// Whether argument `idx` is a morc matrix of `rows`×`cols` (checked before computing, as
/// the model's workspace result is borrowed while it is written).
unsafe fn mat_of(l: *mut ffi::lua_State, idx: c_int, rows: usize, cols: usize) -> Option<*mut LuaMat> {
    let out = ud::<LuaMat>(l, idx, Kind::Mat)?;
    ((*out).m.shape() == (rows, cols)).then_some(out)
}

/// A frame argument: the index of the model's frame of that name.
unsafe fn frame(l: *mut ffi::lua_State, idx: c_int, m: *mut LuaModel) -> Option<morc_model::FrameIndex> {
    if ffi::lua_type(l, idx) != ffi::LUA_TSTRING {
        return None;
    }
    let mut len = 0;
    let p = ffi::lua_tolstring(l, idx, &mut len);
    (*m).frame_index(std::slice::from_raw_parts(p as *const u8, len))
}

entry!(model_rnea_to, |l| {
    let m = ud::<LuaModel>(l, 1, Kind::Model)?;
    inputs(l, m, 3, Some(4), Some(5))?;
    write_vec(l, 2, (*m).rnea_at())
});

entry!(model_gravity_to, |l| {
    let m = ud::<LuaModel>(l, 1, Kind::Model)?;
    inputs(l, m, 3, None, None)?;
    write_vec(l, 2, (*m).gravity_at())
});

entry!(model_nle_to, |l| {
    let m = ud::<LuaModel>(l, 1, Kind::Model)?;
    inputs(l, m, 3, Some(4), None)?;
    write_vec(l, 2, (*m).nle_at())
});

entry!(model_aba_to, |l| {
    let m = ud::<LuaModel>(l, 1, Kind::Model)?;
    inputs(l, m, 3, Some(4), Some(5))?;
    write_vec(l, 2, (*m).aba_at())
});

entry!(model_friction_to, |l| {
    let m = ud::<LuaModel>(l, 1, Kind::Model)?;
    let (_, v, _) = (*m).inputs_mut();
    read(l, 3, v).then_some(())?;
    write_vec(l, 2, (*m).friction_at())
});

entry!(model_crba_to, |l| {
    let m = ud::<LuaModel>(l, 1, Kind::Model)?;
    let nv = (*m).model.nv();
    let out = mat_of(l, 2, nv, nv)?;
    inputs(l, m, 3, None, None)?;
    (*out).m.copy_from((*m).crba_at());
    Some(0)
});

entry!(model_frame_jacobian_to, |l| {
    let m = ud::<LuaModel>(l, 1, Kind::Model)?;
    let out = mat_of(l, 2, 6, (*m).model.nv())?;
    inputs(l, m, 3, None, None)?;
    let f = frame(l, 4, m)?;
    let reference = match ffi::lua_type(l, 5) {
        ffi::LUA_TNONE | ffi::LUA_TNIL => ReferenceFrame::LocalWorldAligned,
        ffi::LUA_TSTRING => {
            let mut len = 0;
            let p = ffi::lua_tolstring(l, 5, &mut len);
            ReferenceFrame::from_name(std::str::from_utf8(std::slice::from_raw_parts(p as *const u8, len)).ok()?)?
        }
        _ => return None,
    };
    (*out).m.copy_from((*m).jacobian(f, reference));
    Some(0)
});

entry!(model_frame_placement_to, |l| {
    let m = ud::<LuaModel>(l, 1, Kind::Model)?;
    let pos = ud::<LuaVec>(l, 2, Kind::Vec)?;
    let rot = mat_of(l, 3, 3, 3)?;
    if (*pos).0.len() != 3 {
        return None;
    }
    // q may be pos itself (refused by its size, after reading it): no reference to pos is
    // held while q is read.
    inputs(l, m, 4, None, None)?;
    let p = (*m).placement_at_q(frame(l, 5, m)?);
    (*pos).0.as_mut_slice().copy_from_slice(p.translation.as_slice());
    (*rot).m.copy_from(&p.rotation);
    Some(0)
});

/// The metatable of a userdata.
fn metatable(lua: &Lua, ud: &AnyUserData) -> mlua::Result<Table> {
    // SAFETY: pushes the metatable of the argument (a userdata of ours: it has one).
    unsafe {
        lua.exec_raw(ud, |l| {
            ffi::lua_getmetatable(l, -1);
            ffi::lua_remove(l, -2);
        })
    }
}

/// A function giving the Rust value of a `T` userdata as a light userdata, or nil while it is
/// borrowed.
fn resolver<T: 'static>(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(|_, ud: AnyUserData| Ok(ud.borrow_mut::<T>().ok().map(|mut r| LightUserData(&mut *r as *mut T as *mut c_void))))
}

/// Puts the fast paths in front of mlua's in the metatables of morc vectors, matrices and
/// models of `lua` (after their types are registered: `linalg::register`, `model::register`).
pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let samples = [
        lua.create_userdata(LuaVec(DVector::zeros(0)))?,
        lua.create_userdata(LuaMat::new(DMatrix::zeros(0, 0)))?,
        lua.create_userdata(LuaModel::new(Arc::new(morc_model::ModelBuilder::new("fast paths").build())))?,
    ];
    let mts = [metatable(lua, &samples[0])?, metatable(lua, &samples[1])?, metatable(lua, &samples[2])?];
    let resolvers = [resolver::<LuaVec>(lua)?, resolver::<LuaMat>(lua)?, resolver::<LuaModel>(lua)?];
    let closure = |orig: Value, fast: Value, f: ffi::lua_CFunction| -> mlua::Result<Function> {
        let upvalues = (orig, mts[0].clone(), mts[1].clone(), mts[2].clone(), resolvers[0].clone(), resolvers[1].clone(), resolvers[2].clone(), fast);
        // SAFETY: pops the upvalues pushed as arguments into a new C closure.
        unsafe { lua.exec_raw(upvalues, |l| ffi::lua_pushcclosure(l, f, UPVALUES)) }
    };
    type Methods<'a> = &'a [(&'a str, ffi::lua_CFunction)];
    type Fields<'a> = &'a [(&'a str, Field)];
    let vec: Methods = &[("totable", vec_totable), ("copy", vec_copy), ("axpy", vec_axpy), ("gemv", vec_gemv), ("gemv_t", vec_gemv_t)];
    let mat: Methods = &[("get", mat_get), ("set", mat_set), ("totable", mat_totable), ("pinv_to", mat_pinv_to)];
    let model: Methods = &[
        ("rnea_to", model_rnea_to),
        ("gravity_to", model_gravity_to),
        ("nle_to", model_nle_to),
        ("aba_to", model_aba_to),
        ("friction_to", model_friction_to),
        ("crba_to", model_crba_to),
        ("frame_jacobian_to", model_frame_jacobian_to),
        ("frame_placement_to", model_frame_placement_to),
    ];
    let types: [(Methods, Fields, ffi::lua_CFunction); 3] = [(vec, &[("n", Field::N)], vec_index), (mat, &[("rows", Field::Rows), ("cols", Field::Cols)], mat_index), (model, &[], model_index)];
    for (i, (methods, fields, index)) in types.into_iter().enumerate() {
        let fast = lua.create_table()?;
        for (name, f) in methods {
            let slow: Function = samples[i].get(*name)?;
            fast.raw_set(*name, closure(Value::Function(slow), Value::Nil, *f)?)?;
        }
        for (name, code) in fields {
            fast.raw_set(*name, *code as i64)?;
        }
        let mt = &mts[i];
        mt.raw_set("__index", closure(mt.raw_get("__index")?, Value::Table(fast), index)?)?;
        if i == 0 {
            mt.raw_set("__newindex", closure(mt.raw_get("__newindex")?, Value::Nil, vec_newindex)?)?;
            mt.raw_set("__len", closure(mt.raw_get("__len")?, Value::Nil, vec_len)?)?;
        }
    }
    Ok(())
}

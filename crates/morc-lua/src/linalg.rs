//! morc vectors and matrices in Lua (`morc.vec`, `morc.mat`), backed by nalgebra's
//! `DVector<f64>` / `DMatrix<f64>`. Indices are 1-based as Lua's. The operators and methods
//! that return a new value allocate; the in-place forms (`y:gemv`, `C:gemm`, `y:copy`,
//! `y:axpy`, `y:scale`, `A:pinv_to`, `A:solve_to`, `v[i] = x`) write into preallocated
//! storage and allocate nothing, for the real-time path. Workspaces the decompositions need
//! are kept in the matrix that is decomposed, sized on first use.

use std::fmt::Display;

use mlua::{AnyUserData, Lua, MetaMethod, Table, UserData, UserDataFields, UserDataMethods, UserDataRef, UserDataRefMut, Value};
use nalgebra::{DMatrix, DVector};

use morc_model::{lu_factor, lu_solve, DampedPinv};

/// A column vector of reals: `morc.vec(n)` or `morc.vec { … }`.
#[derive(Clone, Debug)]
pub struct LuaVec(pub DVector<f64>);

/// A matrix of reals: `morc.mat(rows, cols)` or `morc.mat { { … }, … }`, with the workspace
/// its solves and pseudo-inverses reuse.
#[derive(Clone, Debug)]
pub struct LuaMat {
    /// The matrix.
    pub m: DMatrix<f64>,
    work: Workspace,
}

/// What `solve_to` and `pinv_to` factorise into, kept between calls.
#[derive(Clone, Debug, Default)]
struct Workspace {
    /// `solve_to`: the square matrix factorised in place (LU), and its pivots.
    lu: DMatrix<f64>,
    pivots: Vec<usize>,
    /// `pinv_to`'s workspace.
    pinv: DampedPinv,
}

impl LuaMat {
    /// A matrix with an empty workspace.
    pub fn new(m: DMatrix<f64>) -> Self {
        LuaMat { m, work: Workspace::default() }
    }

    /// `A:pinv_to(B, damping)`: A's damped pseudo-inverse into `b`, in A's workspace.
    pub(crate) fn pinv_into(&mut self, b: &mut DMatrix<f64>, damping: f64, what: &str) -> mlua::Result<()> {
        pinv_into(&self.m, &mut self.work, b, damping, what)
    }
}

/// An argument named in an error, `"call: name"`, formatted only when an error is raised (so
/// the real-time path builds no strings).
#[derive(Clone, Copy)]
pub(crate) struct Arg<'a>(pub &'a str, pub &'a str);

impl std::fmt::Display for Arg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.0, self.1)
    }
}

fn err(message: String) -> mlua::Error {
    mlua::Error::runtime(message)
}

/// A number from a Lua value (integer or float; no string coercion).
pub(crate) fn real(v: &Value, what: impl FnOnce() -> String) -> mlua::Result<f64> {
    match v {
        Value::Integer(i) => Ok(*i as f64),
        Value::Number(x) => Ok(*x),
        other => Err(err(format!("{} must be a number, got a {}", what(), other.type_name()))),
    }
}

/// A 1-based index in `1..=n` from a Lua key.
fn index(key: &Value, n: usize, what: &str) -> mlua::Result<usize> {
    let i = match key {
        Value::Integer(i) => *i,
        Value::Number(x) if x.fract() == 0.0 => *x as i64,
        other => return Err(err(format!("{what}: index must be a whole number, got {}", describe(other)))),
    };
    if i < 1 || i as u64 > n as u64 {
        return Err(err(format!("{what}: index {i} is out of range 1..{n}")));
    }
    Ok(i as usize - 1)
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{}\"", s.to_string_lossy()),
        Value::Number(x) => x.to_string(),
        other => format!("a {}", other.type_name()),
    }
}

/// Where a vector is read: a morc vector or a Lua table of numbers.
pub(crate) enum VecIn {
    /// A morc vector, borrowed.
    Vec(UserDataRef<LuaVec>),
    /// A sequence of numbers.
    Table(Table),
}

impl VecIn {
    /// Reads `v`, naming `what` (e.g. "model:rnea(q, v, a): q") in the error.
    pub(crate) fn of(v: &Value, what: impl Display + Copy) -> mlua::Result<VecIn> {
        match v {
            Value::Table(t) => Ok(VecIn::Table(t.clone())),
            Value::UserData(ud) if ud.is::<LuaVec>() => {
                ud.borrow::<LuaVec>().map(VecIn::Vec).map_err(|_| err(format!("{what}: the vector is being written by this same call (pass a different vector)")))
            }
            other => Err(err(format!("{what} must be a morc vector or a table of numbers, got {}", describe(other)))),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            VecIn::Vec(v) => v.0.len(),
            VecIn::Table(t) => t.raw_len(),
        }
    }

    /// Element `i` (0-based).
    pub(crate) fn get(&self, i: usize, what: impl Display + Copy) -> mlua::Result<f64> {
        match self {
            VecIn::Vec(v) => Ok(v.0[i]),
            VecIn::Table(t) => real(&t.raw_get::<Value>(i + 1)?, || format!("{what}[{}]", i + 1)),
        }
    }

    /// Copies into `out`, which must have the same length.
    pub(crate) fn copy_to(&self, out: &mut [f64], what: impl Display + Copy) -> mlua::Result<()> {
        if self.len() != out.len() {
            return Err(err(format!("{what} has {} entries, needs {}", self.len(), out.len())));
        }
        match self {
            VecIn::Vec(v) => out.copy_from_slice(v.0.as_slice()),
            VecIn::Table(_) => {
                for (i, x) in out.iter_mut().enumerate() {
                    *x = self.get(i, what)?;
                }
            }
        }
        Ok(())
    }

    /// A new vector with the same entries.
    pub(crate) fn to_vector(&self, what: impl Display + Copy) -> mlua::Result<DVector<f64>> {
        let mut out = DVector::zeros(self.len());
        self.copy_to(out.as_mut_slice(), what)?;
        Ok(out)
    }
}

/// Borrows a morc matrix argument.
pub(crate) fn mat_in(v: &Value, what: impl Display + Copy) -> mlua::Result<UserDataRef<LuaMat>> {
    match v {
        Value::UserData(ud) if ud.is::<LuaMat>() => ud.borrow::<LuaMat>().map_err(|_| err(format!("{what}: the matrix is being written by this same call (pass a different matrix)"))),
        other => Err(err(format!("{what} must be a morc matrix (morc.mat), got {}", describe(other)))),
    }
}

/// Whether two Lua values are the same object (so one borrow must serve both).
fn same(a: &Value, b: &Value) -> bool {
    a.to_pointer() == b.to_pointer() && !a.to_pointer().is_null()
}

/// Borrows a morc vector to write into.
pub(crate) fn vec_out(v: &Value, what: impl Display + Copy) -> mlua::Result<UserDataRefMut<LuaVec>> {
    match v {
        Value::UserData(ud) if ud.is::<LuaVec>() => ud.borrow_mut::<LuaVec>().map_err(|_| err(format!("{what}: the destination vector is also read by this call (pass a different vector)"))),
        other => Err(err(format!("{what} must be a morc vector (morc.vec(n)) to write into, got {}", describe(other)))),
    }
}

/// Borrows a morc matrix to write into.
pub(crate) fn mat_out(v: &Value, what: impl Display + Copy) -> mlua::Result<UserDataRefMut<LuaMat>> {
    match v {
        Value::UserData(ud) if ud.is::<LuaMat>() => ud.borrow_mut::<LuaMat>().map_err(|_| err(format!("{what}: the destination matrix is also read by this call (pass a different matrix)"))),
        other => Err(err(format!("{what} must be a morc matrix (morc.mat(rows, cols)) to write into, got {}", describe(other)))),
    }
}

fn shape(m: &DMatrix<f64>) -> String {
    format!("{}×{}", m.nrows(), m.ncols())
}

/// `B = Aᵀ (A Aᵀ + λ² I)⁻¹` (rows ≤ columns) or `(Aᵀ A + λ² I)⁻¹ Aᵀ` (rows > columns) into
/// `b` (cols × rows), with the workspace `work`; allocates only when the workspace is resized.
fn pinv_into(a: &DMatrix<f64>, work: &mut Workspace, b: &mut DMatrix<f64>, damping: f64, what: &str) -> mlua::Result<()> {
    let (m, n) = a.shape();
    if b.shape() != (n, m) {
        return Err(err(format!("{what}: A is {m}×{n}, so B must be {n}×{m}, is {}", shape(b))));
    }
    if !(damping >= 0.0 && damping.is_finite()) {
        return Err(err(format!("{what}: damping must be a finite number ≥ 0, is {damping}")));
    }
    work.pinv.compute(a, b, damping).map_err(|_| {
        let normal = if m <= n { "A Aᵀ" } else { "Aᵀ A" };
        err(format!("{what}: A is rank deficient (the {normal}{} is singular): give a damping > 0", if damping > 0.0 { " + λ² I" } else { "" }))
    })
}

/// `x = A⁻¹ b` for square A, into `x` (its length n), factorising into `work`.
fn solve_into(a: &DMatrix<f64>, work: &mut Workspace, x: &mut [f64], b: &VecIn, what: &str) -> mlua::Result<()> {
    let (m, n) = a.shape();
    if m != n {
        return Err(err(format!("{what}: A is {m}×{n}; solve needs a square matrix (use A:pinv(damping) for least squares)")));
    }
    if b.len() != n || x.len() != n {
        return Err(err(format!("{what}: A is {n}×{n}, so b and x need {n} entries; b has {}, x has {}", b.len(), x.len())));
    }
    if work.lu.shape() != (n, n) {
        work.lu = DMatrix::zeros(n, n);
        work.pivots = vec![0; n];
    }
    work.lu.copy_from(a);
    lu_factor(&mut work.lu, &mut work.pivots).map_err(|k| err(format!("{what}: A is singular (no pivot in column {}): no unique solution", k + 1)))?;
    b.copy_to(x, Arg(what, "b"))?;
    lu_solve(&work.lu, &work.pivots, x);
    Ok(())
}

fn optional(v: &Option<f64>, default: f64) -> f64 {
    v.unwrap_or(default)
}

/// `y = alpha·A·x + beta·y` (or Aᵀ with `transpose`), x a vector or a table; allocates nothing.
fn gemv(y: &mut DVector<f64>, a: &DMatrix<f64>, x: &VecIn, alpha: f64, beta: f64, transpose: bool, what: &str) -> mlua::Result<()> {
    let (rows, cols) = if transpose { (a.ncols(), a.nrows()) } else { a.shape() };
    if x.len() != cols || y.len() != rows {
        let at = if transpose { "Aᵀ" } else { "A" };
        return Err(err(format!("{what}: {at} is {rows}×{cols}, so x needs {cols} entries and y {rows}; x has {}, y has {}", x.len(), y.len())));
    }
    match x {
        VecIn::Vec(x) => {
            gemv_vec(y, a, &x.0, alpha, beta, transpose);
            Ok(())
        }
        VecIn::Table(_) => gemv_entries(y, a, |j| x.get(j, Arg(what, "x")), alpha, beta, transpose),
    }
}

/// [`gemv`] with x a morc vector (sizes checked by the caller).
pub(crate) fn gemv_vec(y: &mut DVector<f64>, a: &DMatrix<f64>, x: &DVector<f64>, alpha: f64, beta: f64, transpose: bool) {
    if transpose {
        y.gemv_tr(alpha, a, x, beta)
    } else {
        y.gemv(alpha, a, x, beta)
    }
}

/// [`gemv`] with x read entry by entry (a table; sizes checked by the caller): column by
/// column, so that the fast path (crate::fast) and this one give the same bits.
pub(crate) fn gemv_entries(y: &mut DVector<f64>, a: &DMatrix<f64>, mut x: impl FnMut(usize) -> mlua::Result<f64>, alpha: f64, beta: f64, transpose: bool) -> mlua::Result<()> {
    let cols = if transpose { a.nrows() } else { a.ncols() };
    if beta == 0.0 {
        y.fill(0.0);
    } else {
        *y *= beta;
    }
    for j in 0..cols {
        let xj = alpha * x(j)?;
        if transpose {
            for (i, yi) in y.iter_mut().enumerate() {
                *yi += a[(j, i)] * xj;
            }
        } else {
            y.axpy(xj, &a.column(j), 1.0);
        }
    }
    Ok(())
}

/// `c = alpha·a·b + beta·c`, column by column: nalgebra's `gemm` goes through matrixmultiply,
/// which allocates packing buffers per call.
fn gemm(c: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>, alpha: f64, beta: f64) {
    for j in 0..c.ncols() {
        let mut cj = c.column_mut(j);
        if beta == 0.0 {
            cj.fill(0.0);
        } else {
            cj *= beta;
        }
        for k in 0..a.ncols() {
            cj.axpy(alpha * b[(k, j)], &a.column(k), 1.0);
        }
    }
}

fn vec_to_string(v: &DVector<f64>) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
    format!("vec({}) {{ {} }}", v.len(), items.join(", "))
}

fn mat_to_string(m: &DMatrix<f64>) -> String {
    let rows: Vec<String> = m.row_iter().map(|r| format!("  {{ {} }}", r.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(", "))).collect();
    format!("mat({}×{}) {{\n{}\n}}", m.nrows(), m.ncols(), rows.join(",\n"))
}

/// The result of `a op b` for `+` and `-`: vectors with vectors or tables, matrices with matrices.
fn add_sub(lua: &Lua, a: &Value, b: &Value, sign: f64, op: &str) -> mlua::Result<AnyUserData> {
    let what = format!("a {op} b");
    let is_mat = |v: &Value| matches!(v, Value::UserData(ud) if ud.is::<LuaMat>());
    if is_mat(a) || is_mat(b) {
        let x = mat_in(a, &format!("{what}: a"))?;
        let y = if same(a, b) { None } else { Some(mat_in(b, &format!("{what}: b"))?) };
        let y = y.as_deref().unwrap_or(&x);
        if x.m.shape() != y.m.shape() {
            return Err(err(format!("{what}: sizes differ, {} and {}", shape(&x.m), shape(&y.m))));
        }
        return lua.create_userdata(LuaMat::new(&x.m + &y.m * sign));
    }
    let x = VecIn::of(a, &format!("{what}: a"))?;
    let y = if same(a, b) { None } else { Some(VecIn::of(b, &format!("{what}: b"))?) };
    let y = y.as_ref().unwrap_or(&x);
    if x.len() != y.len() {
        return Err(err(format!("{what}: sizes differ, {} and {} entries", x.len(), y.len())));
    }
    let mut out = x.to_vector(&format!("{what}: a"))?;
    for i in 0..out.len() {
        out[i] += sign * y.get(i, &format!("{what}: b"))?;
    }
    lua.create_userdata(LuaVec(out))
}

/// `a * b`: matrix·matrix, matrix·vector, a number times either.
fn mul(lua: &Lua, a: &Value, b: &Value) -> mlua::Result<AnyUserData> {
    let number = |v: &Value| match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(x) => Some(*x),
        _ => None,
    };
    if let Some(s) = number(a).or(number(b)) {
        let other = if number(a).is_some() { b } else { a };
        return match other {
            Value::UserData(ud) if ud.is::<LuaMat>() => lua.create_userdata(LuaMat::new(&ud.borrow::<LuaMat>()?.m * s)),
            Value::UserData(ud) if ud.is::<LuaVec>() => lua.create_userdata(LuaVec(&ud.borrow::<LuaVec>()?.0 * s)),
            other => Err(err(format!("a * b: cannot multiply a number by {}", describe(other)))),
        };
    }
    let x = mat_in(a, "a * b: a (a number or a matrix)")?;
    match b {
        Value::UserData(ud) if ud.is::<LuaMat>() => {
            let y = if same(a, b) { None } else { Some(ud.borrow::<LuaMat>()?) };
            let y = y.as_deref().unwrap_or(&x);
            if x.m.ncols() != y.m.nrows() {
                return Err(err(format!("A * B: A is {} and B is {}; A's columns must equal B's rows", shape(&x.m), shape(&y.m))));
            }
            lua.create_userdata(LuaMat::new(&x.m * &y.m))
        }
        _ => {
            let v = VecIn::of(b, "A * x: x")?;
            let mut y = DVector::zeros(x.m.nrows());
            gemv(&mut y, &x.m, &v, 1.0, 0.0, false, "A * x")?;
            lua.create_userdata(LuaVec(y))
        }
    }
}

/// The rows of a Lua table of tables, checked rectangular.
fn matrix_from_rows(t: &Table) -> mlua::Result<DMatrix<f64>> {
    let rows = t.raw_len();
    let mut data: Vec<Vec<f64>> = Vec::with_capacity(rows);
    for r in 1..=rows {
        let row = match t.raw_get::<Value>(r)? {
            Value::Table(row) => row,
            other => return Err(err(format!("morc.mat {{ {{…}}, … }}: row {r} must be a table of numbers, got {}", describe(&other)))),
        };
        let v = VecIn::Table(row).to_vector(&format!("morc.mat: row {r}"))?;
        if let Some(first) = data.first() {
            if first.len() != v.len() {
                return Err(err(format!("morc.mat: row {r} has {} entries, row 1 has {}; all rows need the same length", v.len(), first.len())));
            }
        }
        data.push(v.iter().copied().collect());
    }
    let cols = data.first().map_or(0, |r| r.len());
    Ok(DMatrix::from_fn(rows, cols, |i, j| data[i][j]))
}

fn size(v: &Value, what: &str) -> mlua::Result<usize> {
    match v {
        Value::Integer(n) if *n >= 0 => Ok(*n as usize),
        Value::Number(x) if *x >= 0.0 && x.fract() == 0.0 => Ok(*x as usize),
        other => Err(err(format!("{what} must be a whole number ≥ 0, got {}", describe(other)))),
    }
}

impl UserData for LuaVec {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("n", |_, this| Ok(this.0.len()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        // A name that is no method or field reads nil, as a table's would; numbers are indices.
        methods.add_meta_method(MetaMethod::Index, |_, this, key: Value| {
            if let Value::String(_) = key {
                return Ok(None);
            }
            let i = index(&key, this.0.len(), "v[i]")?;
            Ok(Some(this.0[i]))
        });
        methods.add_meta_method_mut(MetaMethod::NewIndex, |_, this, (key, x): (Value, Value)| {
            let i = index(&key, this.0.len(), "v[i] = x")?;
            this.0[i] = real(&x, || format!("v[{}] = x: x", i + 1))?;
            Ok(())
        });
        methods.add_meta_method(MetaMethod::Len, |_, this, ()| Ok(this.0.len()));
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(vec_to_string(&this.0)));
        methods.add_meta_function(MetaMethod::Add, |lua, (a, b): (Value, Value)| add_sub(lua, &a, &b, 1.0, "+"));
        methods.add_meta_function(MetaMethod::Sub, |lua, (a, b): (Value, Value)| add_sub(lua, &a, &b, -1.0, "-"));
        methods.add_meta_function(MetaMethod::Mul, |lua, (a, b): (Value, Value)| mul(lua, &a, &b));
        methods.add_meta_method(MetaMethod::Unm, |_, this, ()| Ok(LuaVec(-&this.0)));
        // With a table, written into it in place (no allocation): one call for what n reads of v[i] cost.
        methods.add_method("totable", |lua, this, into: Option<Table>| match into {
            Some(t) => {
                for (i, x) in this.0.iter().enumerate() {
                    t.raw_set(i + 1, *x)?;
                }
                Ok(t)
            }
            None => lua.create_sequence_from(this.0.iter().copied()),
        });
        methods.add_method("clone", |_, this, ()| Ok(this.clone()));
        methods.add_method("norm", |_, this, ()| Ok(this.0.norm()));
        methods.add_function("dot", |_, (v, w): (Value, Value)| {
            let this = VecIn::of(&v, "v:dot(w): v")?;
            let this = match &this {
                VecIn::Vec(x) => x,
                VecIn::Table(_) => return Err(err("v:dot(w): v must be a morc vector".into())),
            };
            let other = if same(&v, &w) { None } else { Some(VecIn::of(&w, "v:dot(w): w")?) };
            let Some(w) = other else { return Ok(this.0.norm_squared()) };
            if w.len() != this.0.len() {
                return Err(err(format!("v:dot(w): v has {} entries, w has {}", this.0.len(), w.len())));
            }
            let mut s = 0.0;
            for i in 0..w.len() {
                s += this.0[i] * w.get(i, "v:dot(w): w")?;
            }
            Ok(s)
        });
        methods.add_method_mut("copy", |_, this, x: Value| {
            VecIn::of(&x, "y:copy(x): x")?.copy_to(this.0.as_mut_slice(), "y:copy(x): x")?;
            Ok(())
        });
        methods.add_method_mut("fill", |_, this, x: f64| {
            this.0.fill(x);
            Ok(())
        });
        methods.add_method_mut("scale", |_, this, a: f64| {
            this.0 *= a;
            Ok(())
        });
        methods.add_method_mut("axpy", |_, this, (a, x): (f64, Value)| {
            let x = VecIn::of(&x, "y:axpy(a, x): x")?;
            if x.len() != this.0.len() {
                return Err(err(format!("y:axpy(a, x): y has {} entries, x has {}", this.0.len(), x.len())));
            }
            for i in 0..x.len() {
                this.0[i] += a * x.get(i, "y:axpy(a, x): x")?;
            }
            Ok(())
        });
        methods.add_method_mut("gemv", |_, this, (a, x, alpha, beta): (Value, Value, Option<f64>, Option<f64>)| {
            let (a, x) = (mat_in(&a, "y:gemv(A, x): A")?, VecIn::of(&x, "y:gemv(A, x): x")?);
            gemv(&mut this.0, &a.m, &x, optional(&alpha, 1.0), optional(&beta, 0.0), false, "y:gemv(A, x)")
        });
        methods.add_method_mut("gemv_t", |_, this, (a, x, alpha, beta): (Value, Value, Option<f64>, Option<f64>)| {
            let (a, x) = (mat_in(&a, "y:gemv_t(A, x): A")?, VecIn::of(&x, "y:gemv_t(A, x): x")?);
            gemv(&mut this.0, &a.m, &x, optional(&alpha, 1.0), optional(&beta, 0.0), true, "y:gemv_t(A, x)")
        });
    }
}

impl UserData for LuaMat {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("rows", |_, this| Ok(this.m.nrows()));
        fields.add_field_method_get("cols", |_, this| Ok(this.m.ncols()));
    }
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("get", |_, this, (i, j): (Value, Value)| {
            let (i, j) = (index(&i, this.m.nrows(), "M:get(i, j): i")?, index(&j, this.m.ncols(), "M:get(i, j): j")?);
            Ok(this.m[(i, j)])
        });
        methods.add_method_mut("set", |_, this, (i, j, x): (Value, Value, Value)| {
            let (i, j) = (index(&i, this.m.nrows(), "M:set(i, j, x): i")?, index(&j, this.m.ncols(), "M:set(i, j, x): j")?);
            this.m[(i, j)] = real(&x, || "M:set(i, j, x): x".into())?;
            Ok(())
        });
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(mat_to_string(&this.m)));
        methods.add_meta_function(MetaMethod::Add, |lua, (a, b): (Value, Value)| add_sub(lua, &a, &b, 1.0, "+"));
        methods.add_meta_function(MetaMethod::Sub, |lua, (a, b): (Value, Value)| add_sub(lua, &a, &b, -1.0, "-"));
        methods.add_meta_function(MetaMethod::Mul, |lua, (a, b): (Value, Value)| mul(lua, &a, &b));
        methods.add_meta_method(MetaMethod::Unm, |_, this, ()| Ok(LuaMat::new(-&this.m)));
        // With a table of rows, written into them in place (no allocation).
        methods.add_method("totable", |lua, this, into: Option<Table>| {
            if let Some(t) = into {
                for (i, r) in this.m.row_iter().enumerate() {
                    let row: Table = t.raw_get(i + 1).map_err(|_| err(format!("M:totable(t): t[{}] must be a table (a row of {} numbers)", i + 1, this.m.ncols())))?;
                    for (j, x) in r.iter().enumerate() {
                        row.raw_set(j + 1, *x)?;
                    }
                }
                return Ok(t);
            }
            let t = lua.create_table_with_capacity(this.m.nrows(), 0)?;
            for r in this.m.row_iter() {
                t.raw_push(lua.create_sequence_from(r.iter().copied())?)?;
            }
            Ok(t)
        });
        methods.add_method("clone", |_, this, ()| Ok(LuaMat::new(this.m.clone())));
        methods.add_method("t", |_, this, ()| Ok(LuaMat::new(this.m.transpose())));
        methods.add_method("norm", |_, this, ()| Ok(this.m.norm()));
        methods.add_method_mut("fill", |_, this, x: f64| {
            this.m.fill(x);
            Ok(())
        });
        methods.add_method_mut("scale", |_, this, a: f64| {
            this.m *= a;
            Ok(())
        });
        methods.add_method_mut("copy", |_, this, a: Value| {
            let a = mat_in(&a, "C:copy(A): A")?;
            if a.m.shape() != this.m.shape() {
                return Err(err(format!("C:copy(A): C is {}, A is {}", shape(&this.m), shape(&a.m))));
            }
            this.m.copy_from(&a.m);
            Ok(())
        });
        methods.add_method_mut("gemm", |_, this, (a, b, alpha, beta): (Value, Value, Option<f64>, Option<f64>)| {
            let aliased = same(&a, &b);
            let a = mat_in(&a, "C:gemm(A, B): A")?;
            let b = if aliased { None } else { Some(mat_in(&b, "C:gemm(A, B): B")?) };
            let b = b.as_deref().unwrap_or(&a);
            if a.m.ncols() != b.m.nrows() || this.m.shape() != (a.m.nrows(), b.m.ncols()) {
                return Err(err(format!("C:gemm(A, B): A is {}, B is {}, C is {}; needs A's columns = B's rows and C = A's rows × B's columns", shape(&a.m), shape(&b.m), shape(&this.m))));
            }
            gemm(&mut this.m, &a.m, &b.m, optional(&alpha, 1.0), optional(&beta, 0.0));
            Ok(())
        });
        methods.add_method_mut("pinv", |_, this, damping: Option<f64>| {
            let mut b = DMatrix::zeros(this.m.ncols(), this.m.nrows());
            pinv_into(&this.m, &mut this.work, &mut b, damping.unwrap_or(0.0), "A:pinv(damping)")?;
            Ok(LuaMat::new(b))
        });
        methods.add_method_mut("pinv_to", |_, this, (b, damping): (Value, Option<f64>)| {
            let mut b = mat_out(&b, "A:pinv_to(B, damping): B")?;
            this.pinv_into(&mut b.m, damping.unwrap_or(0.0), "A:pinv_to(B, damping)")
        });
        methods.add_method_mut("solve", |_, this, b: Value| {
            let b = VecIn::of(&b, "A:solve(b): b")?;
            let mut x = DVector::zeros(this.m.ncols());
            solve_into(&this.m, &mut this.work, x.as_mut_slice(), &b, "A:solve(b)")?;
            Ok(LuaVec(x))
        });
        methods.add_method_mut("solve_to", |_, this, (x, b): (Value, Value)| {
            let b = VecIn::of(&b, "A:solve_to(x, b): b")?;
            let mut x = vec_out(&x, "A:solve_to(x, b): x")?;
            solve_into(&this.m, &mut this.work, x.0.as_mut_slice(), &b, "A:solve_to(x, b)")
        });
    }
}

/// `morc.vec(n)` (zeros), `morc.vec { … }` or `morc.vec(v)` (a copy).
fn new_vec(_: &Lua, arg: Value) -> mlua::Result<LuaVec> {
    match &arg {
        Value::Integer(_) | Value::Number(_) => Ok(LuaVec(DVector::zeros(size(&arg, "morc.vec(n): n")?))),
        _ => VecIn::of(&arg, "morc.vec(x): x").and_then(|v| v.to_vector("morc.vec { … }")).map(LuaVec),
    }
}

/// `morc.mat(rows, cols)` (zeros), `morc.mat { {…}, … }` (rows) or `morc.mat(M)` (a copy).
fn new_mat(_: &Lua, (a, b): (Value, Value)) -> mlua::Result<LuaMat> {
    match (&a, &b) {
        (Value::Table(t), Value::Nil) => matrix_from_rows(t).map(LuaMat::new),
        (Value::UserData(_), Value::Nil) => Ok(LuaMat::new(mat_in(&a, "morc.mat(M): M")?.m.clone())),
        _ => Ok(LuaMat::new(DMatrix::zeros(size(&a, "morc.mat(rows, cols): rows")?, size(&b, "morc.mat(rows, cols): cols")?))),
    }
}

/// Calls `morc.doc(value, text)` when the prelude has defined it (a stepping thread's state may not have).
pub(crate) fn doc(morc: &Table, value: impl mlua::IntoLua, text: &str) -> mlua::Result<()> {
    if let Some(f) = morc.get::<Option<mlua::Function>>("doc")? {
        f.call::<()>((value, text))?;
    }
    Ok(())
}

/// Registers `morc.vec`, `morc.mat`, `morc.zeros` and `morc.eye` (no engine needed).
pub(crate) fn register(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let vec = lua.create_function(new_vec)?;
    let mat = lua.create_function(new_mat)?;
    let zeros = lua.create_function(|lua, (rows, cols): (Value, Value)| -> mlua::Result<Value> {
        match cols {
            Value::Nil => lua.create_userdata(LuaVec(DVector::zeros(size(&rows, "morc.zeros(n): n")?))).map(Value::UserData),
            _ => lua
                .create_userdata(LuaMat::new(DMatrix::zeros(size(&rows, "morc.zeros(rows, cols): rows")?, size(&cols, "morc.zeros(rows, cols): cols")?)))
                .map(Value::UserData),
        }
    })?;
    let eye = lua.create_function(|_, n: Value| Ok(LuaMat::new(DMatrix::identity(size(&n, "morc.eye(n): n")?, size(&n, "morc.eye(n): n")?))))?;
    morc.set("vec", vec.clone())?;
    morc.set("mat", mat.clone())?;
    morc.set("zeros", zeros.clone())?;
    morc.set("eye", eye.clone())?;
    doc(
        morc,
        vec,
        r#"morc.vec(n) | morc.vec { x1, x2, … } | morc.vec(v) — a column vector of reals (nalgebra), zeros, from a table, or a copy.
  v[i], v[i] = x (1-based; out of range is an error)   #v, v.n   tostring(v)   v:totable([t])   v:clone()
  allocating: v + w, v - w, -v, a * v, A * v, v:norm(), v:dot(w)
  in place, allocating nothing (the real-time path):
    y:gemv(A, x [, alpha = 1, beta = 0])    y = alpha·A·x + beta·y     y:gemv_t(A, x [, alpha, beta])  with Aᵀ
    y:copy(x)   y:axpy(a, x)  (y = y + a·x)   y:scale(a)   y:fill(x)
Where a vector is read, a table of numbers does too. Sizes are checked: errors name the call and both sizes.
Types:
  morc.vec(x: integer|number[]|vec) → vec
  vec.n: integer   vec:totable(t?: number[]) → number[]   vec:clone() → vec   vec:norm() → number   vec:dot(w: vec|number[]) → number
  vec:gemv(A: mat, x: vec|number[], alpha?: number, beta?: number)   vec:gemv_t(A: mat, x: vec|number[], alpha?: number, beta?: number)
  vec:copy(x: vec|number[])   vec:axpy(a: number, x: vec|number[])   vec:scale(a: number)   vec:fill(x: number)"#,
    )?;
    doc(
        morc,
        mat,
        r#"morc.mat(rows, cols) | morc.mat { { a11, a12, … }, { a21, … }, … } | morc.mat(M) — a matrix of reals (nalgebra): zeros, rows, or a copy.
  M:get(i, j), M:set(i, j, x) (1-based)   M.rows, M.cols   tostring(M)   M:totable([t]) (rows)   M:clone()
  allocating: A + B, A - B, A * B, A * x, a * A, A:t() (transpose), A:norm(), A:solve(b), A:pinv([damping])
  in place, allocating nothing once sized (the workspace stays in A):
    C:gemm(A, B [, alpha = 1, beta = 0])   C = alpha·A·B + beta·C
    A:pinv_to(B, damping)   B = Aᵀ(A Aᵀ + λ² I)⁻¹ (or (AᵀA + λ² I)⁻¹Aᵀ when A is tall): damped least squares, λ = damping
    A:solve_to(x, b)        x = A⁻¹ b (square A, LU with partial pivoting)
    C:copy(A)   C:scale(a)   C:fill(x)
A singular matrix is an error (pinv: give a damping > 0).
Types:
  morc.mat(rows: integer|number[][]|mat, cols?: integer) → mat
  mat.rows: integer   mat.cols: integer   mat:get(i: integer, j: integer) → number   mat:set(i: integer, j: integer, x: number)
  mat:totable(t?: number[][]) → number[][]   mat:clone() → mat   mat:t() → mat   mat:norm() → number   mat:scale(a: number)   mat:fill(x: number)
  mat:pinv(damping?: number) → mat   mat:solve(b: vec|number[]) → vec   mat:copy(A: mat)
  mat:gemm(A: mat, B: mat, alpha?: number, beta?: number)   mat:pinv_to(B: mat, damping?: number)   mat:solve_to(x: vec, b: vec|number[])"#,
    )?;
    doc(morc, zeros, "morc.zeros(n: integer) → vec  a vector of n zeros\nmorc.zeros(rows: integer, cols: integer) → mat  a matrix of zeros")?;
    doc(morc, eye, "morc.eye(n: integer) → mat  the n×n identity matrix")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lu_solves_and_pinv_matches_the_normal_equations() {
        let a = DMatrix::from_row_slice(3, 3, &[0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0]);
        let mut work = Workspace::default();
        let b = [1.0, 2.0, 3.0];
        let mut x = [0.0; 3];
        let lua = Lua::new();
        let t = lua.create_sequence_from(b).unwrap();
        solve_into(&a, &mut work, &mut x, &VecIn::Table(t), "t").unwrap();
        let r = &a * DVector::from_row_slice(&x) - DVector::from_row_slice(&b);
        assert!(r.norm() < 1e-14);

        let wide = DMatrix::from_row_slice(2, 3, &[1.0, 2.0, 0.5, -1.0, 0.3, 2.0]);
        for m in [wide.clone(), wide.transpose()] {
            let mut p = DMatrix::zeros(m.ncols(), m.nrows());
            pinv_into(&m, &mut work, &mut p, 0.1, "t").unwrap();
            let expected = if m.nrows() <= m.ncols() {
                m.transpose() * (&m * m.transpose() + DMatrix::identity(m.nrows(), m.nrows()) * 0.01).try_inverse().unwrap()
            } else {
                (m.transpose() * &m + DMatrix::identity(m.ncols(), m.ncols()) * 0.01).try_inverse().unwrap() * m.transpose()
            };
            assert!((p - expected).norm() < 1e-12);
        }
        let singular = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
        let mut p = DMatrix::zeros(2, 2);
        assert!(pinv_into(&singular, &mut work, &mut p, 0.0, "A:pinv_to").unwrap_err().to_string().contains("give a damping"));
    }
}

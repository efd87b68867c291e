//! Values on their way into and out of an FMU, laid out for its getters and
//! setters: one [`Group`] per FMI type, so a step makes one call per type
//! present, whatever the number of ports. Everything is allocated once;
//! moving values between morc ports and groups does not allocate (strings
//! reuse their capacity).

use std::ffi::{c_char, CString};

use super::description::{FmiVersion, VarType, Variable};
use morc_kernel::{Value, ValueType, STRING_PORT_CAPACITY};

/// The values of one FMI type, in the C layout its getter and setter take.
pub enum Data {
    F64(Vec<f64>),
    F32(Vec<f32>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    /// FMI 3 Boolean (C `bool`). FMI 2 Booleans are `I32` (fmi2Boolean is an int).
    Bool(Vec<bool>),
    /// Strings, and scratch for the pointers a getter returns.
    Str {
        values: Vec<String>,
        pointers: Vec<*const c_char>,
    },
}

// SAFETY: the string pointers are scratch, written by a getter and read right after it on the same call.
unsafe impl Send for Data {}

/// Value references and values of one FMI type.
pub struct Group {
    pub ty: VarType,
    /// One per variable; an FMI 3 array variable has one reference and many values.
    pub vrs: Vec<u32>,
    pub data: Data,
}

impl Group {
    fn new(ty: VarType, version: FmiVersion) -> Group {
        let data = match ty {
            VarType::Float64 => Data::F64(Vec::new()),
            VarType::Float32 => Data::F32(Vec::new()),
            VarType::Int8 => Data::I8(Vec::new()),
            VarType::UInt8 => Data::U8(Vec::new()),
            VarType::Int16 => Data::I16(Vec::new()),
            VarType::UInt16 => Data::U16(Vec::new()),
            VarType::Int32 => Data::I32(Vec::new()),
            VarType::UInt32 => Data::U32(Vec::new()),
            VarType::Int64 => Data::I64(Vec::new()),
            VarType::UInt64 => Data::U64(Vec::new()),
            VarType::Boolean if version == FmiVersion::V2 => Data::I32(Vec::new()),
            VarType::Boolean => Data::Bool(Vec::new()),
            VarType::String | VarType::Binary | VarType::Clock | VarType::Other => Data::Str { values: Vec::new(), pointers: Vec::new() },
        };
        Group { ty, vrs: Vec::new(), data }
    }

    /// Number of values (not variables).
    pub fn len(&self) -> usize {
        match &self.data {
            Data::F64(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::I8(v) => v.len(),
            Data::U8(v) => v.len(),
            Data::I16(v) => v.len(),
            Data::U16(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::U64(v) => v.len(),
            Data::Bool(v) => v.len(),
            Data::Str { values, .. } => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.vrs.is_empty()
    }

    /// Appends `n` zero values.
    fn grow(&mut self, n: usize) {
        let at = self.len() + n;
        match &mut self.data {
            Data::F64(v) => v.resize(at, 0.0),
            Data::F32(v) => v.resize(at, 0.0),
            Data::I8(v) => v.resize(at, 0),
            Data::U8(v) => v.resize(at, 0),
            Data::I16(v) => v.resize(at, 0),
            Data::U16(v) => v.resize(at, 0),
            Data::I32(v) => v.resize(at, 0),
            Data::U32(v) => v.resize(at, 0),
            Data::I64(v) => v.resize(at, 0),
            Data::U64(v) => v.resize(at, 0),
            Data::Bool(v) => v.resize(at, false),
            Data::Str { values, pointers } => {
                values.resize_with(at, || String::with_capacity(STRING_PORT_CAPACITY));
                pointers.resize(at, std::ptr::null());
            }
        }
    }

    /// Writes `value` into elements `at..` (as many as the value has).
    pub fn put(&mut self, at: usize, value: &Value) {
        macro_rules! int {
            ($v:expr, $t:ty) => {
                $v[at] = value.integer().clamp(<$t>::MIN as i64, <$t>::MAX as i64) as $t
            };
        }
        match &mut self.data {
            // Scalars first: the common case, without a slice copy.
            Data::F64(v) => match value {
                Value::Real(x) => v[at] = *x,
                _ => {
                    let s = value.as_slice();
                    v[at..at + s.len()].copy_from_slice(s);
                }
            },
            Data::F32(v) => {
                for (d, x) in v[at..].iter_mut().zip(value.as_slice()) {
                    *d = *x as f32;
                }
            }
            Data::I8(v) => int!(v, i8),
            Data::U8(v) => int!(v, u8),
            Data::I16(v) => int!(v, i16),
            Data::U16(v) => int!(v, u16),
            Data::I32(v) if self.ty == VarType::Boolean => v[at] = i32::from(value.boolean()),
            Data::I32(v) => int!(v, i32),
            Data::U32(v) => int!(v, u32),
            Data::I64(v) => v[at] = value.integer(),
            Data::U64(v) => v[at] = value.integer().max(0) as u64,
            Data::Bool(v) => v[at] = value.boolean(),
            Data::Str { values, .. } => {
                values[at].clear();
                values[at].push_str(value.str());
            }
        }
    }

    /// Reads elements `at..` into `value` (as many as it has).
    pub fn take(&self, at: usize, value: &mut Value) {
        let integer = match &self.data {
            Data::F64(v) => {
                match value {
                    Value::Real(x) => *x = v[at],
                    _ => {
                        let s = value.as_mut_slice();
                        let n = s.len();
                        s.copy_from_slice(&v[at..at + n]);
                    }
                }
                return;
            }
            Data::F32(v) => {
                for (d, x) in value.as_mut_slice().iter_mut().zip(&v[at..]) {
                    *d = f64::from(*x);
                }
                return;
            }
            Data::I32(v) if self.ty == VarType::Boolean => {
                if let Value::Boolean(b) = value {
                    *b = v[at] != 0;
                }
                return;
            }
            Data::Bool(v) => {
                if let Value::Boolean(b) = value {
                    *b = v[at];
                }
                return;
            }
            Data::Str { values, .. } => {
                if let Value::String(s) = value {
                    s.clear();
                    s.push_str(&values[at]);
                }
                return;
            }
            Data::I8(v) => i64::from(v[at]),
            Data::U8(v) => i64::from(v[at]),
            Data::I16(v) => i64::from(v[at]),
            Data::U16(v) => i64::from(v[at]),
            Data::I32(v) => i64::from(v[at]),
            Data::U32(v) => i64::from(v[at]),
            Data::I64(v) => v[at],
            Data::U64(v) => i64::try_from(v[at]).unwrap_or(i64::MAX),
        };
        if let Value::Integer(x) = value {
            *x = integer;
        }
    }

    /// The first non-finite float and its value reference, if any.
    pub fn non_finite(&self) -> Option<(u32, f64)> {
        let at = match &self.data {
            Data::F64(v) => v.iter().position(|x| !x.is_finite()).map(|i| (i, v[i])),
            Data::F32(v) => v.iter().position(|x| !x.is_finite()).map(|i| (i, f64::from(v[i]))),
            _ => None,
        }?;
        // Arrays: report the array's reference (elements are not numbered by reference).
        let vr = self.vrs.get(at.0).or(self.vrs.last()).copied().unwrap_or(0);
        Some((vr, at.1))
    }
}

/// Calls `f` with the strings as C strings (a NUL inside one becomes a space).
/// Allocates: string inputs are off the allocation-free path.
pub fn with_c_strings<R>(values: &[String], f: impl FnOnce(*const *const c_char) -> R) -> R {
    let owned: Vec<CString> = values.iter().map(|s| CString::new(s.replace('\0', " ")).unwrap_or_default()).collect();
    let pointers: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
    f(pointers.as_ptr())
}

/// Copies the strings a getter returned into `values`, reusing their capacity.
///
/// # Safety
/// Each pointer is null or a NUL-terminated string, valid for this call.
pub unsafe fn read_c_strings(pointers: &[*const c_char], values: &mut [String]) {
    for (p, v) in pointers.iter().zip(values.iter_mut()) {
        v.clear();
        // SAFETY: the caller's promise.
        v.push_str(&unsafe { super::log::text(*p) });
    }
}

/// The morc port type of an FMU variable; None for what ports cannot carry
/// (Binary, Clock, arrays of integers, booleans or strings).
pub fn port_type(v: &Variable) -> Option<ValueType> {
    let array = !v.dimensions.is_empty();
    Some(match v.ty {
        VarType::Binary | VarType::Clock | VarType::Other => return None,
        t if t.is_float() && array => ValueType::Vector(v.len()),
        t if t.is_float() => ValueType::Real,
        _ if array => return None,
        t if t.is_integer() => ValueType::Integer,
        VarType::Boolean => ValueType::Boolean,
        _ => ValueType::String,
    })
}

/// The values of a set of variables (the inputs, or the outputs, of an FMU
/// component), grouped by type, with where each port lives.
#[derive(Default)]
pub struct Values {
    pub groups: Vec<Group>,
    /// Per port: its group and its first element there.
    ports: Vec<(usize, usize)>,
}

impl Values {
    pub fn new<'a>(variables: impl IntoIterator<Item = &'a Variable>, version: FmiVersion) -> Values {
        let mut values = Values::default();
        for v in variables {
            values.add(v, version);
        }
        values
    }

    fn add(&mut self, v: &Variable, version: FmiVersion) {
        let g = match self.groups.iter().position(|g| g.ty == v.ty) {
            Some(g) => g,
            None => {
                self.groups.push(Group::new(v.ty, version));
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[g];
        let at = group.len();
        group.vrs.push(v.value_reference);
        group.grow(v.len());
        self.ports.push((g, at));
    }

    /// Port values in (a slice of them, or any sequence in port order).
    pub fn load<'a>(&mut self, values: impl IntoIterator<Item = &'a Value>) {
        for (&(g, at), v) in self.ports.iter().zip(values) {
            self.groups[g].put(at, v);
        }
    }

    /// Port values out.
    pub fn store(&self, values: &mut [Value]) {
        for (&(g, at), v) in self.ports.iter().zip(values) {
            self.groups[g].take(at, v);
        }
    }
}

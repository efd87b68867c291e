//! Typed values: what flows on ports, sets parameters and fills Assembly Data.
//!
//! Lists and records are for parameters (and Assembly Data) only: structured settings such as
//! the moves of a path stay structured instead of being flattened into numbers. No port may
//! carry them — the assembly refuses such a port — so what copies, records or sends port values
//! never meets one.

use std::fmt;

/// The type of a port, parameter or Assembly Data entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// A 64-bit float.
    Real,
    /// A 64-bit signed integer.
    Integer,
    /// true or false.
    Boolean,
    /// UTF-8 text.
    String,
    /// A real vector of fixed length.
    Vector(usize),
    /// A list of values of any types, of any length: parameters only.
    List,
    /// Named fields, each a value of any type: parameters only.
    Record,
}

impl ValueType {
    /// Whether a port may carry values of this type: every type but lists and records, which
    /// are for parameters (they have no fixed size to preallocate for the real-time path, and
    /// nothing that records, plots or sends port values knows them).
    pub fn is_port_type(self) -> bool {
        !matches!(self, ValueType::List | ValueType::Record)
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueType::Real => write!(f, "real"),
            ValueType::Integer => write!(f, "integer"),
            ValueType::Boolean => write!(f, "boolean"),
            ValueType::String => write!(f, "string"),
            ValueType::Vector(n) => write!(f, "vector[{n}]"),
            ValueType::List => write!(f, "list"),
            ValueType::Record => write!(f, "record"),
        }
    }
}

/// Capacity reserved for string ports so that copying a string value on the
/// real-time path does not allocate.
pub const STRING_PORT_CAPACITY: usize = 256;

/// A value of one of the [`ValueType`]s.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A 64-bit float.
    Real(f64),
    /// A 64-bit signed integer.
    Integer(i64),
    /// true or false.
    Boolean(bool),
    /// UTF-8 text.
    String(String),
    /// Reals of fixed length.
    Vector(Vec<f64>),
    /// Values of any types (parameters only; see the module's documentation).
    List(Vec<Value>),
    /// Named values, in the order given; the names are unique (parameters only).
    Record(Vec<(String, Value)>),
}

impl Value {
    /// The zero value of a type, with storage preallocated (strings get
    /// [`STRING_PORT_CAPACITY`]).
    pub fn zero(ty: ValueType) -> Value {
        match ty {
            ValueType::Real => Value::Real(0.0),
            ValueType::Integer => Value::Integer(0),
            ValueType::Boolean => Value::Boolean(false),
            ValueType::String => Value::String(String::with_capacity(STRING_PORT_CAPACITY)),
            ValueType::Vector(n) => Value::Vector(vec![0.0; n]),
            ValueType::List => Value::List(Vec::new()),
            ValueType::Record => Value::Record(Vec::new()),
        }
    }

    /// A record of `fields`, in their order. Panics on a name given twice: the fields are
    /// the caller's own, so that is a bug, not an input error.
    pub fn record<S: Into<String>>(fields: impl IntoIterator<Item = (S, Value)>) -> Value {
        let fields: Vec<(String, Value)> = fields.into_iter().map(|(k, v)| (k.into(), v)).collect();
        for (i, (name, _)) in fields.iter().enumerate() {
            assert!(!fields[..i].iter().any(|(n, _)| n == name), "record field '{name}' given twice");
        }
        Value::Record(fields)
    }

    /// The value's type (a vector's with its length).
    pub fn ty(&self) -> ValueType {
        match self {
            Value::Real(_) => ValueType::Real,
            Value::Integer(_) => ValueType::Integer,
            Value::Boolean(_) => ValueType::Boolean,
            Value::String(_) => ValueType::String,
            Value::Vector(v) => ValueType::Vector(v.len()),
            Value::List(_) => ValueType::List,
            Value::Record(_) => ValueType::Record,
        }
    }

    /// A list's items; None for other types.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// A record's fields, in order; None for other types.
    pub fn as_record(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Record(fields) => Some(fields),
            _ => None,
        }
    }

    /// A record's field named `name`; None when absent or not a record.
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.as_record()?.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Copies `other` into `self` in place. Does not allocate when both have
    /// the same port type (and, for strings, `other` fits the capacity); lists and records,
    /// never on ports, reuse what storage they can.
    #[inline]
    pub fn copy_from(&mut self, other: &Value) {
        match (self, other) {
            (Value::Real(a), Value::Real(b)) => *a = *b,
            (Value::Integer(a), Value::Integer(b)) => *a = *b,
            (Value::Boolean(a), Value::Boolean(b)) => *a = *b,
            (Value::Vector(a), Value::Vector(b)) if a.len() == b.len() => a.copy_from_slice(b),
            (Value::String(a), Value::String(b)) => {
                a.clear();
                a.push_str(b)
            }
            (Value::List(a), Value::List(b)) => a.clone_from(b),
            (Value::Record(a), Value::Record(b)) => a.clone_from(b),
            (a, b) => *a = b.clone(),
        }
    }

    /// The value as a real number: reals as they are, integers and booleans
    /// converted, a one-element vector's element; otherwise NaN.
    #[inline]
    pub fn real(&self) -> f64 {
        match self {
            Value::Real(x) => *x,
            Value::Integer(i) => *i as f64,
            Value::Boolean(b) => f64::from(u8::from(*b)),
            Value::Vector(v) if v.len() == 1 => v[0],
            _ => f64::NAN,
        }
    }

    /// The value as an integer: reals truncated toward zero, booleans as 0 or 1; otherwise 0.
    #[inline]
    pub fn integer(&self) -> i64 {
        match self {
            Value::Integer(i) => *i,
            Value::Real(x) => *x as i64,
            Value::Boolean(b) => i64::from(*b),
            _ => 0,
        }
    }

    /// The value as a boolean: numbers are true when non-zero; otherwise false.
    #[inline]
    pub fn boolean(&self) -> bool {
        match self {
            Value::Boolean(b) => *b,
            Value::Integer(i) => *i != 0,
            Value::Real(x) => *x != 0.0,
            _ => false,
        }
    }

    /// A string value's text; "" for other types.
    pub fn str(&self) -> &str {
        match self {
            Value::String(s) => s,
            _ => "",
        }
    }

    /// Real and vector values as a slice (a real is a slice of one).
    #[inline]
    pub fn as_slice(&self) -> &[f64] {
        match self {
            Value::Real(x) => std::slice::from_ref(x),
            Value::Vector(v) => v,
            _ => &[],
        }
    }

    /// Real and vector values as a mutable slice (a real is a slice of one); empty for other types.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        match self {
            Value::Real(x) => std::slice::from_mut(x),
            Value::Vector(v) => v,
            _ => &mut [],
        }
    }

    /// Sets the value from a real: integers truncated, booleans true when non-zero, every vector element; strings, lists and records unchanged.
    #[inline]
    pub fn set_real(&mut self, x: f64) {
        match self {
            Value::Real(a) => *a = x,
            Value::Integer(a) => *a = x as i64,
            Value::Boolean(a) => *a = x != 0.0,
            Value::Vector(v) => v.iter_mut().for_each(|a| *a = x),
            Value::String(_) | Value::List(_) | Value::Record(_) => {}
        }
    }

    /// Converts `self` to type `ty` where that loses nothing a user would
    /// miss (integer → real, real with integral value → integer, a vector of
    /// length n; a real broadcast to a vector; a vector as a list of reals, an empty one as
    /// an empty record); otherwise an error message.
    pub fn coerce(&self, ty: ValueType) -> Result<Value, String> {
        match (self, ty) {
            (v, t) if v.ty() == t => Ok(v.clone()),
            (Value::Integer(i), ValueType::Real) => Ok(Value::Real(*i as f64)),
            (Value::Real(x), ValueType::Integer) if x.fract() == 0.0 && x.is_finite() => Ok(Value::Integer(*x as i64)),
            (Value::Real(x), ValueType::Vector(n)) => Ok(Value::Vector(vec![*x; n])),
            (Value::Integer(i), ValueType::Vector(n)) => Ok(Value::Vector(vec![*i as f64; n])),
            (Value::Vector(v), ValueType::Real) if v.len() == 1 => Ok(Value::Real(v[0])),
            // A Lua sequence of numbers arrives as a vector, `{}` too: a list of them.
            (Value::Vector(v), ValueType::List) => Ok(Value::List(v.iter().map(|x| Value::Real(*x)).collect())),
            (Value::Vector(v), ValueType::Record) if v.is_empty() => Ok(Value::Record(Vec::new())),
            (v, t) => Err(format!("expected {t}, got {} ({v})", v.ty())),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Real(x) => write!(f, "{x}"),
            Value::Integer(i) => write!(f, "{i}"),
            Value::Boolean(b) => write!(f, "{b}"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Vector(v) => {
                write!(f, "{{")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, "}}")
            }
            Value::List(items) => {
                write!(f, "[")?;
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, "]")
            }
            Value::Record(fields) if fields.is_empty() => write!(f, "{{}}"),
            Value::Record(fields) => {
                write!(f, "{{ ")?;
                for (i, (name, x)) in fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{name} = {x}")?;
                }
                write!(f, " }}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_from_keeps_storage() {
        let mut a = Value::zero(ValueType::Vector(3));
        let ptr = a.as_slice().as_ptr();
        a.copy_from(&Value::Vector(vec![1.0, 2.0, 3.0]));
        assert_eq!(a.as_slice(), &[1.0, 2.0, 3.0]);
        assert_eq!(ptr, a.as_slice().as_ptr());
        let mut s = Value::zero(ValueType::String);
        let cap = match &s {
            Value::String(s) => s.capacity(),
            _ => 0,
        };
        s.copy_from(&Value::String("hello".into()));
        assert_eq!(s.str(), "hello");
        assert_eq!(
            cap,
            match &s {
                Value::String(s) => s.capacity(),
                _ => 0,
            }
        );
    }

    #[test]
    fn coercion_rules() {
        assert_eq!(Value::Integer(2).coerce(ValueType::Real), Ok(Value::Real(2.0)));
        assert_eq!(Value::Real(3.0).coerce(ValueType::Integer), Ok(Value::Integer(3)));
        assert!(Value::Real(3.5).coerce(ValueType::Integer).is_err());
        assert_eq!(Value::Real(1.0).coerce(ValueType::Vector(2)), Ok(Value::Vector(vec![1.0, 1.0])));
        assert!(Value::Vector(vec![1.0, 2.0]).coerce(ValueType::Vector(3)).is_err());
        assert!(Value::String("x".into()).coerce(ValueType::Real).is_err());
        assert!(Value::List(Vec::new()).coerce(ValueType::Vector(0)).is_err());
        assert_eq!(Value::List(Vec::new()).coerce(ValueType::List), Ok(Value::List(Vec::new())));
        assert_eq!(Value::Vector(vec![1.0]).coerce(ValueType::List), Ok(Value::List(vec![Value::Real(1.0)])));
        assert_eq!(Value::Vector(Vec::new()).coerce(ValueType::Record), Ok(Value::Record(Vec::new())));
        assert!(Value::Vector(vec![1.0]).coerce(ValueType::Record).is_err());
    }

    fn a_move() -> Value {
        Value::record([("kind", Value::String("ptp".into())), ("target", Value::Vector(vec![1.0, 2.0])), ("blend", Value::Real(0.5))])
    }

    #[test]
    fn lists_and_records_give_their_parts() {
        let list = Value::List(vec![a_move(), Value::Integer(3)]);
        assert_eq!(list.ty(), ValueType::List);
        assert_eq!(list.as_list().map(<[Value]>::len), Some(2));
        assert_eq!(list.as_record(), None);
        let m = &list.as_list().unwrap()[0];
        assert_eq!(m.ty(), ValueType::Record);
        assert_eq!(m.field("kind"), Some(&Value::String("ptp".into())));
        assert_eq!(m.field("target").map(Value::as_slice), Some(&[1.0, 2.0][..]));
        assert_eq!(m.field("via"), None);
        assert_eq!(m.as_record().unwrap().iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["kind", "target", "blend"]);
        assert_eq!(Value::Real(1.0).field("kind"), None);
        assert_eq!(Value::Real(1.0).as_list(), None);
        // Neither is a number.
        assert!(list.real().is_nan());
        assert_eq!(list.as_slice(), &[] as &[f64]);
        assert!(!ValueType::List.is_port_type() && !ValueType::Record.is_port_type());
        assert!(ValueType::Vector(3).is_port_type() && ValueType::String.is_port_type());
    }

    #[test]
    #[should_panic(expected = "record field 'a' given twice")]
    fn a_record_names_each_field_once() {
        Value::record([("a", Value::Real(1.0)), ("a", Value::Real(2.0))]);
    }

    #[test]
    fn lists_and_records_zero_copy_and_show() {
        assert_eq!(Value::zero(ValueType::List), Value::List(Vec::new()));
        assert_eq!(Value::zero(ValueType::Record), Value::Record(Vec::new()));
        let list = Value::List(vec![a_move(), Value::List(vec![Value::Boolean(true)])]);
        let mut a = Value::zero(ValueType::List);
        a.copy_from(&list);
        assert_eq!(a, list);
        // Into a record, and from another type: the value is replaced.
        let mut r = Value::zero(ValueType::Record);
        r.copy_from(&a_move());
        assert_eq!(r, a_move());
        r.copy_from(&Value::Real(2.0));
        assert_eq!(r, Value::Real(2.0));
        a.set_real(3.0);
        assert_eq!(a, list);
        assert_eq!(list.to_string(), r#"[{ kind = "ptp", target = {1, 2}, blend = 0.5 }, [true]]"#);
        assert_eq!(Value::zero(ValueType::Record).to_string(), "{}");
        assert_eq!(Value::zero(ValueType::List).to_string(), "[]");
        assert_eq!(format!("{} {}", ValueType::List, ValueType::Record), "list record");
    }
}

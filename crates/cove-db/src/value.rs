//! Values passed to and read from SQLite, and the row view handed to query callbacks.

use crate::sqlite::stmt::Running;

/// An owned SQL value bound as a parameter; `Text` is raw bytes (Lua strings may be non-UTF-8).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// 64-bit signed integer.
    Integer(i64),
    /// 64-bit float.
    Real(f64),
    /// Text, stored byte for byte.
    Text(Vec<u8>),
    /// Binary blob.
    Blob(Vec<u8>),
}

/// A borrowed SQL value read from a result row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueRef<'a> {
    /// SQL NULL.
    Null,
    /// 64-bit signed integer.
    Integer(i64),
    /// 64-bit float.
    Real(f64),
    /// Text bytes as stored (not checked for UTF-8).
    Text(&'a [u8]),
    /// Binary blob.
    Blob(&'a [u8]),
}

impl From<ValueRef<'_>> for Value {
    fn from(v: ValueRef<'_>) -> Value {
        match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) => Value::Text(t.to_vec()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

/// One result row, valid only inside the query callback.
pub struct Row<'a> {
    src: Source<'a>,
    len: usize,
}

/// Where a row's values are: in SQLite's statement, or read out already
/// (PostgreSQL rows, which arrive whole).
#[derive(Clone, Copy)]
enum Source<'a> {
    Sqlite(&'a Running<'a>),
    Values(&'a [Value]),
}

impl<'a> Row<'a> {
    pub(crate) fn new(running: &'a Running<'a>, len: usize) -> Row<'a> {
        Row {
            src: Source::Sqlite(running),
            len,
        }
    }

    /// A row over values already read.
    pub fn of_values(values: &'a [Value]) -> Row<'a> {
        Row {
            src: Source::Values(values),
            len: values.len(),
        }
    }

    /// Number of columns in the row.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the row has no columns (never the case for rows SQLite returns).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Value of column `i` (0-based); `Null` when `i` is out of range.
    #[inline]
    pub fn get(&self, i: usize) -> ValueRef<'_> {
        match self.src {
            Source::Sqlite(running) => running.value(i, self.len),
            Source::Values(values) => values.get(i).map_or(ValueRef::Null, Value::as_ref),
        }
    }
}

impl Value {
    /// The borrowed form.
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Null => ValueRef::Null,
            Value::Integer(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(t) => ValueRef::Text(t),
            Value::Blob(b) => ValueRef::Blob(b),
        }
    }
}

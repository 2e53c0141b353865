//! The types of the script API's parameters and results: a leaf, so a
//! capability can declare its functions' signatures in its own table (the
//! API catalog, `api`, reads them from there).

/// A value's type, as both languages see it (the renderers spell it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// Lua string, JS string.
    Str,
    /// An integer (a Lua integer, a JS number).
    Int,
    /// Any number.
    Num,
    Bool,
    /// Bytes: a Lua string, a JS `ArrayBuffer` or `Uint8Array`.
    Bytes,
    /// Nothing (Lua `nil`, JS `undefined`).
    Nil,
    /// Any JSON-like value: string, number, boolean, nil/null, table/object, array.
    Any,
    /// A table / plain object with string keys and `Any` values.
    Record,
    /// A function the script passes.
    Fn,
    /// A list (Lua sequence, JS array) of this.
    List(&'static Ty),
    /// This, or nil/null.
    Opt(&'static Ty),
    /// One of these.
    Union(&'static [Ty]),
    /// A named type of the API catalog (`Request`, `Response`, `Row`, …).
    Named(&'static str),
    /// JS only: a promise of this (Lua suspends instead).
    Promise(&'static Ty),
    /// A string that is one of these literals.
    Literal(&'static [&'static str]),
}

/// One parameter.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub ty: Ty,
    pub optional: bool,
}

/// `p("name", Ty)`: a required parameter.
pub const fn p(name: &'static str, ty: Ty) -> Param {
    Param {
        name,
        ty,
        optional: false,
    }
}

/// `opt("name", Ty)`: an optional parameter.
pub const fn opt(name: &'static str, ty: Ty) -> Param {
    Param {
        name,
        ty,
        optional: true,
    }
}

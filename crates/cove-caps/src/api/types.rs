//! Named types the functions use: the objects a handler gets (`Request`,
//! `Response`) and the shapes results come in (`HttpResponse`, …).

use super::{Sig, Ty};

/// A field of an object type.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    /// It may be absent.
    pub optional: bool,
    pub doc: &'static str,
}

/// `f("name", Ty, "doc")`: a field.
pub const fn f(name: &'static str, ty: Ty, doc: &'static str) -> Field {
    Field {
        name,
        ty,
        optional: false,
        doc,
    }
}

/// `f_opt("name", Ty, "doc")`: a field that may be absent.
pub const fn f_opt(name: &'static str, ty: Ty, doc: &'static str) -> Field {
    Field {
        name,
        ty,
        optional: true,
        doc,
    }
}

/// A named object type: its fields and methods.
#[derive(Debug, Clone, Copy)]
pub struct TypeDef {
    pub name: &'static str,
    pub doc: &'static str,
    pub fields: &'static [Field],
    pub methods: &'static [Sig],
}

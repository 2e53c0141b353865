//! One check, two apps: `both!(check, ...)` turns every `fn check(lang:
//! Lang)` into the tests `check::lua` and `check::js`.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Lua,
    Js,
}

impl Lang {
    /// The app file's extension.
    pub fn ext(self) -> &'static str {
        match self {
            Lang::Lua => "lua",
            Lang::Js => "js",
        }
    }

    /// The session cookie's name: Hull's Lua and JS stdlib differ, and apps
    /// of each runtime rely on their own.
    pub fn cookie(self) -> &'static str {
        match self {
            Lang::Lua => "hull_session",
            Lang::Js => "hull.sid",
        }
    }
}

/// For every check `name(lang)` in the calling module: tests `name::lua`
/// and `name::js`.
macro_rules! both {
    ($($check:ident),* $(,)?) => {$(
        mod $check {
            #[test]
            fn lua() {
                super::$check($crate::util::Lang::Lua);
            }

            #[test]
            fn js() {
                super::$check($crate::util::Lang::Js);
            }
        }
    )*};
}

pub(crate) use both;

//! What app code may do to its SQLite database, as one decision per action
//! SQLite's authorizer reports while it prepares a statement (guard.rs).
//!
//! App code may use its own tables, views, indexes and triggers, and read
//! the schema. It may not:
//! - touch the reserved `_hull_*` tables (read, write, create, drop, alter,
//!   index or put a trigger on them), directly or through a view or trigger;
//! - ATTACH or DETACH a database — VACUUM attaches one as it runs (VACUUM
//!   INTO its target file), so it is refused too: an app reaches its own
//!   database only;
//! - rename a table (`ALTER TABLE … RENAME TO`): SQLite does not tell the
//!   authorizer the new name, which could be a reserved one;
//! - load an extension;
//! - change a PRAGMA that Cove sets (journaling, durability, locking,
//!   caches, `writable_schema`, ...) or run one that is not listed here; it
//!   may read those settings.
//!
//! The stdlib and migrations may also touch the reserved tables and rename
//! tables ([`Access::Stdlib`]); the rest is Cove's own ([`Access::Cove`]).

use rusqlite::hooks::AuthAction;

/// Who may take an action.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Anyone.
    Open,
    /// The stdlib and migrations; app code is refused with the denial.
    Stdlib(Denial),
    /// Only Cove itself.
    Cove(Denial),
}

/// Why app code may not take an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Denial {
    /// A reserved `_hull_*` table (kept apart: the bindings retry such a call
    /// as the stdlib's when a stdlib module made it).
    Reserved,
    Attach,
    Rename,
    Function(String),
    /// A PRAGMA app code may read but not change.
    PragmaSet(String),
    /// A PRAGMA app code may not run at all.
    Pragma(String),
    /// An action SQLite added after this list was written.
    Unknown(i32),
}

impl Denial {
    /// The message a script sees: what was refused and what to do instead.
    pub(crate) fn message(&self) -> String {
        match self {
            Denial::Reserved => "access denied: _hull_* tables are reserved".to_owned(),
            Denial::Attach => "access denied: app code may not ATTACH or DETACH databases, \
                or VACUUM (it attaches one; VACUUM INTO writes a copy of the whole database \
                elsewhere); it uses its own database only"
                .to_owned(),
            Denial::Rename => "access denied: app code may not rename tables \
                (ALTER TABLE … RENAME TO); rename them in a migration"
                .to_owned(),
            Denial::Function(name) => {
                format!("access denied: {name}() is not available to app code")
            }
            Denial::PragmaSet(name) => format!(
                "access denied: app code may read PRAGMA {name} but not change it; \
                 Cove sets the database's journaling, durability and connection settings"
            ),
            Denial::Pragma(name) => {
                format!("access denied: PRAGMA {name} is not available to app code")
            }
            Denial::Unknown(code) => format!(
                "access denied: the statement needs an operation app code may not use \
                 (SQLite authorizer action {code})"
            ),
        }
    }
}

/// Who may take `action`.
pub(crate) fn access(action: &AuthAction<'_>) -> Access {
    use AuthAction as A;
    let touches = |names: &[&str]| {
        if names.iter().any(|n| reserved(n)) {
            Access::Stdlib(Denial::Reserved)
        } else {
            Access::Open
        }
    };
    match *action {
        A::Read { table_name, .. }
        | A::Insert { table_name }
        | A::Update { table_name, .. }
        | A::Delete { table_name }
        | A::CreateTable { table_name }
        | A::CreateTempTable { table_name }
        | A::DropTable { table_name }
        | A::DropTempTable { table_name }
        | A::AlterTable { table_name, .. }
        | A::Analyze { table_name }
        | A::CreateVtable { table_name, .. }
        | A::DropVtable { table_name, .. } => touches(&[table_name]),
        A::CreateIndex {
            index_name,
            table_name,
        }
        | A::CreateTempIndex {
            index_name,
            table_name,
        }
        | A::DropIndex {
            index_name,
            table_name,
        }
        | A::DropTempIndex {
            index_name,
            table_name,
        } => touches(&[index_name, table_name]),
        A::CreateTrigger {
            trigger_name,
            table_name,
        }
        | A::CreateTempTrigger {
            trigger_name,
            table_name,
        }
        | A::DropTrigger {
            trigger_name,
            table_name,
        }
        | A::DropTempTrigger {
            trigger_name,
            table_name,
        } => touches(&[trigger_name, table_name]),
        A::CreateView { view_name }
        | A::CreateTempView { view_name }
        | A::DropView { view_name }
        | A::DropTempView { view_name } => touches(&[view_name]),
        A::Reindex { index_name } => touches(&[index_name]),
        A::Select | A::Recursive | A::Transaction { .. } | A::Savepoint { .. } => Access::Open,
        A::Attach { .. } | A::Detach { .. } => Access::Cove(Denial::Attach),
        // Only ALTER TABLE … RENAME TO calls it (an internal function).
        A::Function { function_name }
            if function_name.eq_ignore_ascii_case("sqlite_rename_table") =>
        {
            Access::Stdlib(Denial::Rename)
        }
        A::Function { function_name } if function_name.eq_ignore_ascii_case("load_extension") => {
            Access::Cove(Denial::Function(function_name.to_owned()))
        }
        A::Function { .. } => Access::Open,
        A::Pragma {
            pragma_name,
            pragma_value,
        } => match pragma(pragma_name, pragma_value) {
            Ok(()) => Access::Open,
            Err(denial) => Access::Cove(denial),
        },
        A::Unknown { code, .. } => Access::Cove(Denial::Unknown(code)),
        // AuthAction is non-exhaustive: refuse what this list does not know.
        _ => Access::Cove(Denial::Unknown(-1)),
    }
}

/// True for a name in the reserved namespace: `_hull_` first, in any ASCII case.
pub(crate) fn reserved(name: &str) -> bool {
    name.as_bytes()
        .get(..6)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"_hull_"))
}

/// PRAGMAs app code may run with or without an argument: they report on
/// the schema or the data, or set what belongs to the app (`user_version`,
/// `application_id`) or lasts one transaction (`defer_foreign_keys`).
const PRAGMA_ANY: &[&str] = &[
    "application_id",
    "collation_list",
    "compile_options",
    "data_version",
    "database_list",
    "defer_foreign_keys",
    "foreign_key_check",
    "foreign_key_list",
    "freelist_count",
    "function_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "module_list",
    "page_count",
    "pragma_list",
    "quick_check",
    "table_info",
    "table_list",
    "table_xinfo",
    "user_version",
];

/// Settings app code may read (no argument) but not change: Cove sets
/// them, or changing them would weaken durability, locking or the
/// database file's integrity for every request of the worker.
const PRAGMA_READ: &[&str] = &[
    "analysis_limit",
    "auto_vacuum",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "cell_size_check",
    "checkpoint_fullfsync",
    "encoding",
    "foreign_keys",
    "fullfsync",
    "hard_heap_limit",
    "ignore_check_constraints",
    "journal_mode",
    "journal_size_limit",
    "legacy_alter_table",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "page_size",
    "query_only",
    "read_uncommitted",
    "recursive_triggers",
    "reverse_unordered_selects",
    "schema_version",
    "secure_delete",
    "soft_heap_limit",
    "synchronous",
    "temp_store",
    "threads",
    "trusted_schema",
    "wal_autocheckpoint",
    "writable_schema",
];

/// Settings app code may set to the value Cove already gives them: schema
/// files written for Hull often start with these lines, which change nothing.
const PRAGMA_SAME: &[(&str, &[&str])] = &[
    ("foreign_keys", &["on", "1", "true", "yes"]),
    ("journal_mode", &["wal"]),
    ("synchronous", &["normal", "1"]),
];

fn pragma(name: &str, value: Option<&str>) -> Result<(), Denial> {
    let named = |list: &[&str]| list.iter().any(|n| n.eq_ignore_ascii_case(name));
    if named(PRAGMA_ANY) {
        return Ok(());
    }
    let Some(value) = value else {
        return if named(PRAGMA_READ) {
            Ok(())
        } else {
            Err(Denial::Pragma(name.to_owned()))
        };
    };
    let unchanged = PRAGMA_SAME.iter().any(|(n, same)| {
        n.eq_ignore_ascii_case(name) && same.iter().any(|v| v.eq_ignore_ascii_case(value))
    });
    if unchanged {
        Ok(())
    } else if named(PRAGMA_READ) {
        Err(Denial::PragmaSet(name.to_owned()))
    } else {
        Err(Denial::Pragma(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::hooks::AuthAction as A;

    fn pragma_of(name: &str, value: Option<&str>) -> Result<(), Denial> {
        pragma(name, value)
    }

    #[test]
    fn reserved_is_a_prefix_in_any_case() {
        assert!(reserved("_hull_sessions"));
        assert!(reserved("_HULL_Migrations"));
        assert!(!reserved("idx_hull_outbox_due"));
        assert!(!reserved("hull_x"));
        assert!(!reserved("_hull"));
    }

    #[test]
    fn reserved_objects_are_the_stdlibs() {
        let read = A::Read {
            table_name: "_hull_sessions",
            column_name: "",
        };
        assert_eq!(access(&read), Access::Stdlib(Denial::Reserved));
        let index = A::CreateIndex {
            index_name: "by_x",
            table_name: "_Hull_outbox",
        };
        assert_eq!(access(&index), Access::Stdlib(Denial::Reserved));
        let view = A::CreateTempView {
            view_name: "_hull_sessions",
        };
        assert_eq!(access(&view), Access::Stdlib(Denial::Reserved));
        let own = A::Update {
            table_name: "items",
            column_name: "name",
        };
        assert_eq!(access(&own), Access::Open);
    }

    #[test]
    fn other_databases_extensions_and_renames_are_refused() {
        let attach = A::Attach {
            filename: "/tmp/x.db",
        };
        assert_eq!(access(&attach), Access::Cove(Denial::Attach));
        let detach = A::Detach { database_name: "x" };
        assert_eq!(access(&detach), Access::Cove(Denial::Attach));
        let load = A::Function {
            function_name: "load_extension",
        };
        assert!(matches!(access(&load), Access::Cove(Denial::Function(_))));
        let rename = A::Function {
            function_name: "sqlite_rename_table",
        };
        assert_eq!(access(&rename), Access::Stdlib(Denial::Rename));
        let upper = A::Function {
            function_name: "upper",
        };
        assert_eq!(access(&upper), Access::Open);
    }

    #[test]
    fn pragmas_read_freely_and_change_only_what_is_the_apps() {
        assert_eq!(pragma_of("table_info", Some("items")), Ok(()));
        assert_eq!(pragma_of("user_version", Some("3")), Ok(()));
        assert_eq!(pragma_of("journal_mode", None), Ok(()));
        assert_eq!(pragma_of("Foreign_Keys", None), Ok(()));
        for (name, value) in [
            ("journal_mode", "off"),
            ("journal_mode", "delete"),
            ("synchronous", "off"),
            ("locking_mode", "exclusive"),
            ("writable_schema", "1"),
            ("busy_timeout", "0"),
            ("foreign_keys", "off"),
        ] {
            assert_eq!(
                pragma_of(name, Some(value)),
                Err(Denial::PragmaSet(name.to_owned())),
                "{name} = {value}"
            );
        }
        // Setting what Cove already set changes nothing.
        assert_eq!(pragma_of("journal_mode", Some("WAL")), Ok(()));
        assert_eq!(pragma_of("foreign_keys", Some("ON")), Ok(()));
        // Actions and unknown names are not the app's at all.
        for name in [
            "wal_checkpoint",
            "optimize",
            "shrink_memory",
            "no_such_pragma",
        ] {
            assert_eq!(pragma_of(name, None), Err(Denial::Pragma(name.to_owned())));
        }
    }

    #[test]
    fn messages_say_what_was_refused() {
        assert_eq!(
            Denial::Reserved.message(),
            "access denied: _hull_* tables are reserved"
        );
        assert!(Denial::PragmaSet("synchronous".into())
            .message()
            .contains("may read PRAGMA synchronous but not change it"));
        assert!(Denial::Attach.message().contains("ATTACH"));
        assert!(Denial::Rename.message().contains("in a migration"));
    }
}

//! `cove db schema` and `cove db query` on PostgreSQL: the tables of the
//! current schema from information_schema, and one statement's rows.

use cove_core::block_on;

use super::sql::{self, Kind};
use super::Pg;
use crate::error::DbError;
use crate::inspect::{ColumnInfo, ResultSet, TableInfo};
use crate::migrations::text;
use crate::value::Value;
use crate::Origin;

const TABLES: &str = "SELECT table_name FROM information_schema.tables \
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name";
const COLUMNS: &str = "SELECT c.column_name, c.data_type, c.is_nullable = 'NO', c.column_default, \
    EXISTS (SELECT 1 FROM information_schema.table_constraints t \
      JOIN information_schema.key_column_usage k \
        ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema \
      WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema \
        AND t.table_name = c.table_name AND k.column_name = c.column_name) \
    FROM information_schema.columns c \
    WHERE c.table_schema = current_schema() AND c.table_name = ? ORDER BY c.ordinal_position";

impl Pg {
    pub(crate) fn schema(&mut self) -> Result<Vec<TableInfo>, DbError> {
        let names = self.query_all_of(TABLES, &[])?;
        names
            .rows
            .iter()
            .map(|row| {
                let name = text(row[0].as_ref());
                let cols = self.query_all_of(COLUMNS, &[Value::Text(name.clone().into())])?;
                let columns = cols
                    .rows
                    .iter()
                    .map(|c| ColumnInfo {
                        name: text(c[0].as_ref()),
                        decl_type: text(c[1].as_ref()).to_uppercase(),
                        not_null: c[2] == Value::Integer(1),
                        default: (c[3] != Value::Null).then(|| text(c[3].as_ref())),
                        pk: c[4] == Value::Integer(1),
                    })
                    .collect();
                Ok(TableInfo { name, columns })
            })
            .collect()
    }

    /// A plain SELECT reads; anything else (including `SELECT … FOR UPDATE`
    /// and data-modifying WITH) is taken as a write, to be safe.
    pub(crate) fn statement_writes(&mut self, sql: &str) -> Result<bool, DbError> {
        let text = sql::rewrite(sql).map_err(DbError::Sql)?;
        if text.several {
            return Err(DbError::Sql(
                "several statements; pass one statement at a time".to_owned(),
            ));
        }
        let upper = sql.to_ascii_uppercase();
        let reads = matches!(text.kind, Kind::Select)
            && !text.returning
            && !upper.contains(" FOR UPDATE")
            && !upper.contains(" INTO ");
        Ok(!reads)
    }

    pub(crate) fn query_all(&mut self, sql: &str) -> Result<ResultSet, DbError> {
        self.query_all_of(sql, &[])
    }

    fn query_all_of(&mut self, sql: &str, params: &[Value]) -> Result<ResultSet, DbError> {
        block_on(self.query_later(sql, params.to_vec(), Origin::Stdlib))
    }
}

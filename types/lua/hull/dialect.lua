---@meta hull.dialect
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---The SQL words that differ between SQLite and PostgreSQL
---@class hull.dialect
local dialect = {}

---the SQL with each {int}, {id} and {lock} replaced by this database's words
---@param sql string
---@return string
function dialect.sql(sql) end

return dialect

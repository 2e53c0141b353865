---@meta hull.validate
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Check input against per-field rules (required, type, min, max, pattern, oneof, email, fn)
---@class hull.validate
local validate = {}

---whether the data passes the schema, and a message per failing field: Lua true, nil or false, errors; JS [true, null] or [false, errors]
---@param data any
---@param schema? table<string, any>
---@return boolean
function validate.check(data, schema) end

return validate

---@meta hull.form
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Parse application/x-www-form-urlencoded bodies
---@class hull.form
local form = {}

---a form-encoded body as name → value (+ is a space, %XX decoded; of a repeated name the last); anything but a string gives an empty table
---@param body string?
---@return table<string, any>
function form.parse(body) end

return form

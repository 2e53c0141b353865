---@meta hull.template
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Server-side templates from the app's templates/ directory (syntax: docs/templates.md)
---@class hull.template
local template = {}

---render templates/<name> with data (parsed on first use, cached per worker)
---@param name string
---@param data? table<string, any>
---@return string
function template.render(name, data) end

---compile the source (not cached) and render it with data
---@param source string
---@param data? table<string, any>
---@return string
function template.render_string(source, data) end

---parse and cache templates/<name> now; a function that renders it with data
---@param name string
---@return function
function template.compile(name) end

---forget this worker's compiled templates
function template.clear_cache() end

return template

---@meta hull.i18n
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Translations and number, date and currency formats; the active locale belongs to the worker
---@class hull.i18n
local i18n = {}

---register a locale's table (e.g. a locales/*.json file)
---@param name string
---@param locale table<string, any>
function i18n.load(name, locale) end

---set the active locale when given; the active one (initially nil/null)
---@param name? string
---@return string?
function i18n.locale(name) end

---the translation of a dotted key in the active (or the given) locale, ${name} filled from params; the key when there is none
---@param key string
---@param params? table<string, any>
---@param locale? string
---@return string
function i18n.t(key, params, locale) end

---the number with the locale's separators (fractions to 10 significant digits)
---@param n number
---@return string
function i18n.number(n) end

---a Unix time (default now) in UTC, in the locale's date pattern
---@param ts? integer
---@return string
function i18n.date(ts) end

---the amount in the locale's format for the currency code
---@param amount number
---@param code string
---@return string
function i18n.currency(amount, code) end

---the best loaded locale for an Accept-Language value or a request, or nil/null
---@param source string|hull.Request
---@return string?
function i18n.detect(source) end

---forget every locale and the active one
function i18n.reset() end

return i18n

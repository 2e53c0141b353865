---@meta hull.email
-- Generated from crates/cove-caps/src/api by `COVE_BLESS=1 cargo test -p cove-caps --test generated`;
-- do not edit. `cove new` and `cove types` copy it into an app's .cove/types/.

---Send email through SMTP or an HTTP email API with one set of options
---@class hull.email
local email = {}

---send one email through SMTP or Postmark, SendGrid or Resend; never raises
---@param options hull.EmailOptions
---@return hull.EmailResult
function email.send(options) end

return email

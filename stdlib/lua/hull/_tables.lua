-- hull._tables: creating the stdlib's own tables. Private: only stdlib
-- modules may require it, for its statements run with the stdlib's right
-- to the reserved _hull_* tables (an app passing SQL through it would
-- borrow that right).

local dialect = require("hull.dialect")

local tables = {}

-- Run CREATE ... IF NOT EXISTS `sql` (through dialect.sql). Two processes
-- starting at once on one PostgreSQL can both pass the IF NOT EXISTS check;
-- the slower one then fails on a duplicate catalog entry (once the other
-- commits), and a second try finds the other's table.
function tables.create(sql)
  sql = dialect.sql(sql)
  if not pcall(db.exec, sql) then
    db.exec(sql)
  end
end

return tables

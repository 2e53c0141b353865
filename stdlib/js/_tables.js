// hull:_tables — creating the stdlib's own tables. Private: only stdlib
// modules may import it, for its statements run with the stdlib's right to
// the reserved _hull_* tables (an app passing SQL through it would borrow
// that right).

import { db } from "hull:db";

// Run CREATE ... IF NOT EXISTS `sql`. Two processes starting at once on one
// PostgreSQL can both pass the IF NOT EXISTS check; the slower one then
// fails on a duplicate catalog entry (once the other commits), and a second
// try finds the other's table.
function create(sql) {
  try {
    db.exec(sql);
  } catch {
    db.exec(sql);
  }
}

export const tables = { create };

-- Tables of the reliability conformance app (specs/stdlib_reliability*.toml).
CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT);
-- What the app's own receiver routes got (outbox deliveries, fake email APIs).
CREATE TABLE received (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL,
  body TEXT, headers TEXT NOT NULL);

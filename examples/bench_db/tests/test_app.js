// cove test examples/bench_db — the cases run in order against one database.
import { db } from "hull:db";

const count = (kind) => db.query("SELECT COUNT(*) AS n FROM events WHERE kind = ?", [kind])[0].n;

test("GET /health", () => {
  test.eq(test.get("/health").json, { status: "ok" });
});

test("the app seeds 1000 events at load", () => {
  test.eq(count("seed"), 1000);
});

test("GET /read returns the 20 newest events", () => {
  const rows = test.get("/read").json;
  test.eq(rows.length, 20);
  test.eq(rows[0].id, 1000);
  test.eq(rows[19].id, 981);
  test.eq(rows[0].kind, "seed");
  test.eq(rows[0].payload, '{"n":1000}');
  test.ok(rows[0].ts > rows[19].ts);
});

test("POST /write inserts one event", () => {
  test.eq(test.post("/write").json, { inserted: 1 });
  test.eq(count("write"), 1);
  test.eq(test.get("/read").json[0].kind, "write");
});

test("POST /write-batch inserts ten in one transaction", () => {
  test.eq(test.post("/write-batch").json.inserted, 10);
  test.eq(count("batch"), 10);
});

test("GET /mixed inserts one and reads the newest 20", () => {
  const rows = test.get("/mixed").json;
  test.eq(rows.length, 20);
  test.eq(rows[0].kind, "mixed");
  test.eq(count("mixed"), 1);
});

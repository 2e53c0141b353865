// cove test examples/bench_template (Hull's has no tests; these check that
// each benchmark page renders what it should).
import { time } from "hull:time";

const count = (text, needle) => text.split(needle).length - 1;

test("GET /health", () => {
  test.eq(test.get("/health").json, { status: "ok" });
});

test("GET /simple renders title and message", () => {
  const r = test.get("/simple");
  test.eq(r.status, 200);
  test.eq(r.headers["content-type"], "text/html; charset=utf-8");
  test.ok(r.body.includes("<title>Simple</title>"));
  test.ok(r.body.includes("<p>Hello from Cove!</p>"));
});

test("GET /loop lists 50 items, two in three active", () => {
  const { body } = test.get("/loop");
  test.eq(count(body, "<li>"), 50);
  test.eq(count(body, " (active)</li>"), 34);
  test.ok(body.includes("<li>1. Item 1 (active)</li>"));
  test.ok(body.includes("<li>3. Item 3</li>"));
});

test("GET /full: layout, partial, loop, filter and conditions", () => {
  const { body } = test.get("/full");
  test.ok(body.includes("<title>Full · Bench</title>"), "block in the layout");
  test.ok(body.includes("<header><h1>Full</h1></header>"), "partial");
  test.ok(body.includes('<li class="active">ITEM 1</li>'), "upper filter");
  test.ok(body.includes("<li>Item 3</li>"), "else branch");
  test.eq(count(body, '<li class="active">'), 34);
  test.ok(body.includes(`<footer>© ${time.date().slice(0, 4)}</footer>`), "year");
});

// cove test examples/email — the cases run in order against one database.
// As in Hull, smtp is not configured under `cove test`: every send fails
// and is logged as failed. crates/cove/tests/examples_reliability.rs sends
// to a real (local) SMTP server.

const send = (msg) => test.post("/send", { body: JSON.stringify(msg) });

test("GET /health", () => {
  test.eq(test.get("/health").json, { status: "ok" });
});

test("POST /send rejects a body that is not JSON", () => {
  const r = test.post("/send", { body: "hello" });
  test.eq(r.status, 400);
  test.eq(r.json.error, "invalid JSON");
});

test("POST /send requires to, subject and body", () => {
  const r = send({ cc: [1] });
  test.eq(r.status, 400);
  test.eq(r.json.errors, {
    to: "is required",
    subject: "is required",
    body: "is required",
    cc: "must be an address or a list of addresses",
  });
});

test("POST /send reports the failure and logs it", () => {
  const r = send({
    to: "ada@example.com",
    subject: "Hi",
    body: "Hello!",
    cc: "bob@example.com",
    reply_to: "team@example.com",
  });
  test.eq(r.status, 200);
  test.eq(r.json.ok, false);
  test.eq(r.json.id, 1);
  test.ok(r.json.error.includes("not configured"), r.json.error);
});

test("GET /sent lists sends without their bodies", () => {
  const sent = test.get("/sent").json;
  test.eq(sent.length, 1);
  test.eq(sent[0].recipient, "ada@example.com");
  test.eq(sent[0].status, "failed");
  test.eq(sent[0].cc, "bob@example.com");
  test.eq(sent[0].body, undefined);
});

test("GET /sent/:id shows one send in full", () => {
  const row = test.get("/sent/1").json;
  test.eq(row.body, "Hello!");
  test.eq(row.subject, "Hi");
  test.eq(row.reply_to, "team@example.com");
  test.eq(row.content_type, "text/plain");
});

test("GET /sent/:id of an unknown send is 404", () => {
  const r = test.get("/sent/99");
  test.eq(r.status, 404);
  test.eq(r.json.error, "not found");
});

test("sends are listed newest first", () => {
  send({ to: "grace@example.com", subject: "Re: Hi", body: "<p>Hi!</p>", content_type: "text/html" });
  const sent = test.get("/sent").json;
  test.eq(sent.length, 2);
  test.eq(sent[0].recipient, "grace@example.com");
  test.eq(sent[0].content_type, "text/html");
});

// cove test examples/hello

test("GET /health reports ok", () => {
  const r = test.get("/health");
  test.eq(r.status, 200);
  test.eq(r.json.status, "ok");
  test.eq(r.json.runtime, "quickjs");
  test.eq(r.headers["content-type"], "application/json");
});

test("GET / records a visit", () => {
  test.eq(test.get("/").json.lang, "en");
  test.eq(test.get("/", { headers: { "Accept-Language": "hu-HU" } }).json.lang, "hu");
  const visits = test.get("/visits").json;
  test.eq(visits.length, 2);
  test.eq(visits[0].path, "/");
});

test("greets in two languages", () => {
  test.eq(test.get("/greet/World").json, { greeting: "Hello, World!", lang: "en" });
  test.eq(test.get("/greet/Anna?lang=hu").json, { greeting: "Szia, Anna!", lang: "hu" });
});

test("Accept-Language picks the language by q-value (hull:i18n)", () => {
  const lang = (accept) => test.get("/greet/Ann", { headers: { "Accept-Language": accept } }).json;
  test.eq(lang("en;q=0.5, hu;q=0.8"), { greeting: "Szia, Ann!", lang: "hu" });
  test.eq(lang("fr, en-GB;q=0.9"), { greeting: "Hello, Ann!", lang: "en" });
  test.eq(lang("fr"), { greeting: "Hello, Ann!", lang: "en" });
  test.eq(test.get("/?lang=hu").json.message, "Szia a Cove + JavaScript-ből!");
});

test("POST /echo returns the body", () => {
  test.eq(test.post("/echo", { body: "hi" }).json, { body: "hi" });
});

test("unknown routes and methods", () => {
  test.eq(test.get("/nope").status, 404);
  test.eq(test.delete("/health").status, 405);
});

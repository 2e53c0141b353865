// hello: routing, route params, request bodies, a visits table and a
// two-language greeting. The JavaScript twin of app.lua.
//
//   cove -p 8080 -d hello.db examples/hello/app.js
//   curl localhost:8080/greet/World?lang=hu

import { app } from "hull:app";
import { db } from "hull:db";
import { time } from "hull:time";

const strings = {
  en: { message: "Hello from Cove + JavaScript!", greet: (name) => `Hello, ${name}!` },
  hu: { message: "Szia a Cove + JavaScript-ből!", greet: (name) => `Szia, ${name}!` },
};

// `?lang=hu` wins; otherwise an Accept-Language that starts with "hu".
// Object.hasOwn, not `strings[lang]`: `?lang=toString` must not find
// Object.prototype's method.
function langOf(req) {
  const { lang } = req.query;
  if (Object.hasOwn(strings, lang)) return lang;
  const accept = req.header("accept-language") ?? "";
  return accept.toLowerCase().startsWith("hu") ? "hu" : "en";
}

function greet(req) {
  const lang = langOf(req);
  return { greeting: strings[lang].greet(req.params.name), lang };
}

app.get("/", (req, res) => {
  db.exec("INSERT INTO visits (path, ts) VALUES (?, ?)", [req.path, time.now()]);
  const lang = langOf(req);
  res.json({ message: strings[lang].message, lang, time: time.datetime() });
});

app.get("/visits", (req, res) => {
  res.json(db.query("SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20"));
});

app.get("/health", (req, res) => {
  res.json({ status: "ok", runtime: "js", uptime: time.clock() });
});

// Without a body, req.body is null and the reply is {"body":null} (app.lua
// replies [], its empty table).
app.post("/echo", (req, res) => {
  res.json({ body: req.body });
});

app.get("/greet/:name", (req, res) => {
  res.json(greet(req));
});

app.post("/greet/:name", (req, res) => {
  res.json({ ...greet(req), body: req.body });
});

// hello: routing, route params, request bodies, a visits table and a
// two-language greeting with hull:i18n. The JavaScript twin of app.lua.
//
//   cove -p 8080 -d hello.db examples/hello/app.js
//   curl localhost:8080/greet/World?lang=hu

import { app } from "hull:app";
import { db } from "hull:db";
import { time } from "hull:time";
import { i18n } from "hull:i18n";
import en from "./locales/en.json";
import hu from "./locales/hu.json";

// locales/*.json hold the strings; `${name}` is filled in by i18n.t.
i18n.load("en", en);
i18n.load("hu", hu);

// Pick the request's language and make it the active locale: `?lang=hu`
// wins, then the best Accept-Language match (q-values count), else English.
// Every handler calls this first: the active locale belongs to this worker,
// not to the request.
function useLang(req) {
  let { lang } = req.query;
  if (lang !== "en" && lang !== "hu") lang = i18n.detect(req) ?? "en";
  i18n.locale(lang);
  return lang;
}

function greet(req) {
  const lang = useLang(req);
  return { greeting: i18n.t("greet", { name: req.params.name }), lang };
}

app.get("/", (req, res) => {
  db.exec("INSERT INTO visits (path, ts) VALUES (?, ?)", [req.path, time.now()]);
  const lang = useLang(req);
  res.json({ message: i18n.t("message.js"), lang, time: time.datetime() });
});

app.get("/visits", (req, res) => {
  res.json(db.query("SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20"));
});

app.get("/health", (req, res) => {
  // "quickjs" names the engine, as Hull's /health does (its scripts check
  // for it); `cove routes` names the language of the entry file: "js".
  res.json({ status: "ok", runtime: "quickjs", uptime: time.clock() });
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

// Go net/http peer for Cove's benchmark (bench/peers/README.md): the `http`
// group, the `sqlite` group when DB is set (github.com/mattn/go-sqlite3),
// and the `pg` and `redis` groups when PG_URL / REDIS_URL are set
// (databases.go: pgx, go-redis).
//
// Routing is the standard library's ServeMux with Go 1.22 method and
// wildcard patterns. WORKERS (default 1) sets GOMAXPROCS. With TLS_CERT and
// TLS_KEY it serves HTTPS (HTTP/2 and HTTP/1.1 by ALPN).
//
// SQLite: one *sql.DB for writes capped at a single connection (SQLite has
// one writer at a time; a single connection queues writers in Go instead of
// on SQLite's lock and busy_timeout) and one read-only *sql.DB with a
// connection per GOMAXPROCS (WAL readers do not block the writer). Every
// statement is prepared once at start; database/sql re-prepares it on each
// pooled connection the first time that connection runs it.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

var start = time.Now()

func text(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, body)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func readBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", false
	}
	return string(b), true
}

type health struct {
	Status  string  `json:"status"`
	Runtime string  `json:"runtime"`
	Uptime  float64 `json:"uptime"`
}

type greeting struct {
	Greeting string `json:"greeting"`
}

type greetingBody struct {
	Greeting string `json:"greeting"`
	Body     string `json:"body"`
}

func httpRoutes(mux *http.ServeMux) {
	// The toy routing benchmark: separate routes, in this order.
	mux.HandleFunc("GET /hey", func(w http.ResponseWriter, r *http.Request) { text(w, "hey") })
	mux.HandleFunc("GET /hell", func(w http.ResponseWriter, r *http.Request) { text(w, "hell") })
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { text(w, "Hello World!") })
	mux.HandleFunc("GET /about", func(w http.ResponseWriter, r *http.Request) { text(w, "about") })

	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, struct {
			Message string `json:"message"`
		}{"Hello, World!"})
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, health{Status: "ok", Runtime: "go", Uptime: time.Since(start).Seconds()})
	})
	mux.HandleFunc("GET /greet/{name}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, greeting{Greeting: "Hello, " + r.PathValue("name") + "!"})
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		writeJSON(w, struct {
			Body string `json:"body"`
		}{body})
	})
	mux.HandleFunc("POST /greet/{name}", func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		writeJSON(w, greetingBody{Greeting: "Hello, " + r.PathValue("name") + "!", Body: body})
	})
}

// store holds the two pools and the prepared statements.
type store struct {
	insertVisit, insertWrite, insertMixed *sql.Stmt
	selectVisits, selectEvents            *sql.Stmt
	writer                                *sql.DB
}

type visit struct {
	ID   int64   `json:"id"`
	Path *string `json:"path"`
	TS   *int64  `json:"ts"`
}

type event struct {
	ID      int64   `json:"id"`
	Kind    string  `json:"kind"`
	Payload *string `json:"payload"`
	TS      int64   `json:"ts"`
}

func dsn(file string, extra url.Values) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", "5000")
	for k, v := range extra {
		q[k] = v
	}
	return "file:" + file + "?" + q.Encode()
}

func openStore(file string) (*store, error) {
	// _txlock=immediate: BEGIN takes the write lock at once, so a
	// transaction never has to upgrade a read lock (and with WORKERS
	// processes sharing the file, busy_timeout applies from the start).
	writer, err := sql.Open("sqlite3", dsn(file, url.Values{"_txlock": {"immediate"}}))
	if err != nil {
		return nil, err
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	if err := writer.Ping(); err != nil {
		return nil, err
	}

	schema := `
CREATE TABLE IF NOT EXISTS visits (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT, ts INTEGER);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
  payload TEXT, ts INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts DESC);`
	if _, err := writer.Exec(schema); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if err := seed(writer); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}

	readers := runtime.GOMAXPROCS(0)
	reader, err := sql.Open("sqlite3", dsn(file, url.Values{"mode": {"ro"}}))
	if err != nil {
		return nil, err
	}
	reader.SetMaxOpenConns(readers)
	reader.SetMaxIdleConns(readers)
	reader.SetConnMaxLifetime(0)

	s := &store{writer: writer}
	prep := func(db *sql.DB, q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = db.Prepare(q)
		return st
	}
	s.insertVisit = prep(writer, "INSERT INTO visits (path, ts) VALUES (?, ?)")
	s.insertWrite = prep(writer, "INSERT INTO events (kind, payload, ts) VALUES ('write', ?, ?)")
	s.insertMixed = prep(writer, "INSERT INTO events (kind, payload, ts) VALUES ('mixed', '{}', ?)")
	s.selectVisits = prep(reader, "SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20")
	s.selectEvents = prep(reader, "SELECT id, kind, payload, ts FROM events ORDER BY ts DESC LIMIT 20")
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return s, nil
}

// seed fills events with 1000 rows when it has fewer (in one immediate
// transaction, so concurrent starts do not both seed).
func seed(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow("SELECT COUNT(*) FROM events").Scan(&n); err != nil {
		return err
	}
	if n >= 1000 {
		return tx.Commit()
	}
	st, err := tx.Prepare("INSERT INTO events (kind, payload, ts) VALUES ('seed', ?, ?)")
	if err != nil {
		return err
	}
	now := time.Now().Unix()
	for i := 1; i <= 1000; i++ {
		if _, err := st.Exec(`{"n":`+strconv.Itoa(i)+`}`, now); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *store) events(ctx context.Context) ([]event, error) {
	rows, err := s.selectEvents.QueryContext(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]event, 0, 20)
	for rows.Next() {
		var e event
		if err := rows.Scan(&e.ID, &e.Kind, &e.Payload, &e.TS); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func (s *store) visits(ctx context.Context) ([]visit, error) {
	rows, err := s.selectVisits.QueryContext(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]visit, 0, 20)
	for rows.Next() {
		var v visit
		if err := rows.Scan(&v.ID, &v.Path, &v.TS); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func fail(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

type inserted struct {
	Inserted int64 `json:"inserted"`
}

func sqliteRoutes(mux *http.ServeMux, s *store) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		if _, err := s.insertVisit.ExecContext(r.Context(), "/", now.Unix()); err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, struct {
			Message string `json:"message"`
			Time    string `json:"time"`
		}{"Hello!", now.UTC().Format("2006-01-02T15:04:05Z")})
	})
	mux.HandleFunc("GET /visits", func(w http.ResponseWriter, r *http.Request) {
		rows, err := s.visits(r.Context())
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, rows)
	})
	mux.HandleFunc("GET /read", func(w http.ResponseWriter, r *http.Request) {
		rows, err := s.events(r.Context())
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, rows)
	})
	mux.HandleFunc("POST /write", func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		res, err := s.insertWrite.ExecContext(r.Context(), body, time.Now().Unix())
		if err != nil {
			fail(w, err)
			return
		}
		n, _ := res.RowsAffected()
		writeJSON(w, inserted{n})
	})
	mux.HandleFunc("POST /write-batch", func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		n, err := s.writeBatch(r.Context(), body)
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, inserted{n})
	})
	mux.HandleFunc("GET /mixed", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.insertMixed.ExecContext(r.Context(), time.Now().Unix()); err != nil {
			fail(w, err)
			return
		}
		rows, err := s.events(r.Context())
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, rows)
	})
}

// writeBatch: 10 INSERTs in one transaction.
func (s *store) writeBatch(ctx context.Context, body string) (int64, error) {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	st := tx.StmtContext(ctx, s.insertWrite)
	var n int64
	for i := 0; i < 10; i++ {
		res, err := st.ExecContext(ctx, body, time.Now().Unix())
		if err != nil {
			return 0, err
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return n, tx.Commit()
}

// version prints the Go release, the drivers' module versions and SQLite's.
func version() {
	mods := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			mods[d.Path] = d.Version
		}
	}
	v, _, _ := sqlite3.Version()
	fmt.Printf("%s net/http, mattn/go-sqlite3 %s (SQLite %s), pgx %s, go-redis %s\n", runtime.Version(),
		mods["github.com/mattn/go-sqlite3"], v, mods["github.com/jackc/pgx/v5"], mods["github.com/redis/go-redis/v9"])
}

func main() {
	showVersion := flag.Bool("version", false, "print the versions and exit")
	showWsVersion := flag.Bool("ws-version", false, "print the versions of the WebSocket server and exit")
	flag.Parse()
	if *showVersion {
		version()
		return
	}
	if *showWsVersion {
		wsVersion()
		return
	}

	workers := 1
	if n, err := strconv.Atoi(os.Getenv("WORKERS")); err == nil && n > 0 {
		workers = n
	}
	runtime.GOMAXPROCS(workers)
	port := os.Getenv("PORT")
	if port == "" {
		port = "8010"
	}

	mux := http.NewServeMux()
	// WS=1 (the ws table): the WebSocket routes instead (ws.go).
	if os.Getenv("WS") == "1" {
		wsRoutes(mux)
		srv := &http.Server{Addr: "127.0.0.1:" + port, Handler: mux}
		log.Printf("go listening on %s (pid %d, GOMAXPROCS=%d, WebSocket)", srv.Addr, os.Getpid(), runtime.GOMAXPROCS(0))
		log.Fatal(srv.ListenAndServe())
	}
	httpRoutes(mux)
	dbFile := os.Getenv("DB")
	if dbFile != "" {
		s, err := openStore(dbFile)
		if err != nil {
			log.Fatalf("go: %s: %v", dbFile, err)
		}
		sqliteRoutes(mux, s)
	}
	ctx := context.Background()
	if pgURL := os.Getenv("PG_URL"); pgURL != "" {
		pool, err := openPg(ctx, pgURL)
		if err != nil {
			log.Fatalf("go: PostgreSQL: %v", err)
		}
		pgRoutes(mux, pool)
	}
	if redisURL := os.Getenv("REDIS_URL"); redisURL != "" {
		client, err := openRedis(ctx, redisURL)
		if err != nil {
			log.Fatalf("go: Redis: %v", err)
		}
		redisRoutes(mux, client)
	}
	// Anything else is a 404, also a known path with another method
	// (ServeMux would answer 405 there).
	mux.HandleFunc("/", http.NotFound)

	srv := &http.Server{Addr: "127.0.0.1:" + port, Handler: mux}
	log.Printf("go listening on %s (pid %d, GOMAXPROCS=%d, db %q)", srv.Addr, os.Getpid(), runtime.GOMAXPROCS(0), dbFile)
	// TLS_CERT and TLS_KEY (the tls and h2 tables): HTTPS, with HTTP/2
	// offered by ALPN as net/http does by default.
	if cert, key := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY"); cert != "" {
		log.Fatal(srv.ListenAndServeTLS(cert, key))
	}
	log.Fatal(srv.ListenAndServe())
}

// The `pg` and `redis` groups of the Go peer (bench/peers/README.md), on
// when PG_URL / REDIS_URL are set: PostgreSQL through pgx v5's pgxpool
// (MaxConns pgPool; pgx caches each statement it prepares per connection)
// and Redis through go-redis v9 (a pool of redisPool connections).
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// Connections per process, as the other peers' pools.
const (
	pgPool    = 10
	redisPool = 10
)

type item struct {
	ID    int32  `json:"id"`
	Name  string `json:"name"`
	Value int32  `json:"value"`
}

type newID struct {
	ID int32 `json:"id"`
}

type getIncr struct {
	Count    int64  `json:"count"`
	Greeting string `json:"greeting"`
}

func openPg(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = pgPool
	// Keep idle connections: the harness leaves each server idle for
	// minutes between its rounds.
	cfg.MaxConnIdleTime = time.Hour
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// Connect now: a wrong URL fails at start.
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func pgRoutes(mux *http.ServeMux, pool *pgxpool.Pool) {
	mux.HandleFunc("GET /pg/read", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.URL.Query().Get("id"))
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		var it item
		err = pool.QueryRow(r.Context(), "SELECT id, name, value FROM bench_items WHERE id = $1", id).
			Scan(&it.ID, &it.Name, &it.Value)
		if errors.Is(err, pgx.ErrNoRows) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, it)
	})
	mux.HandleFunc("POST /pg/write", func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		var out newID
		err := pool.QueryRow(r.Context(),
			"INSERT INTO bench_writes (payload, ts) VALUES ($1, $2) RETURNING id",
			body, time.Now().Unix()).Scan(&out.ID)
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, out)
	})
}

func openRedis(ctx context.Context, url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opts.PoolSize = redisPool
	client := redis.NewClient(opts)
	if err := client.Set(ctx, "bench:greeting", "hello", 0).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("SET: %w", err)
	}
	return client, nil
}

// GET, then INCR.
func redisRoutes(mux *http.ServeMux, client *redis.Client) {
	mux.HandleFunc("GET /redis", func(w http.ResponseWriter, r *http.Request) {
		greeting, err := client.Get(r.Context(), "bench:greeting").Result()
		if err != nil {
			fail(w, err)
			return
		}
		count, err := client.Incr(r.Context(), "bench:counter").Result()
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, getIncr{Count: count, Greeting: greeting})
	})
}

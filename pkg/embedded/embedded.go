// Package embedded starts real protocol servers inside the process: FerretDB (the MongoDB wire
// protocol over SQLite or PostgreSQL), kfake (the Kafka protocol) and miniredis (the Redis
// protocol). The all-in-one mode and the tests reach them through the same drivers as production.
package embedded

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"github.com/alicebob/miniredis/v2"
)

// Mongo is an embedded FerretDB server.
type Mongo struct {
	URI     string
	cancel  context.CancelFunc
	done    chan error
	indexer idIndexer
	log     *slog.Logger
	indexed chan struct{}
}

// MongoOptions chooses FerretDB's storage: SQLite files under Dir, or a PostgreSQL server.
type MongoOptions struct {
	Dir           string // SQLite directory (created if missing)
	PostgreSQLURL string // when set, PostgreSQL backs FerretDB instead of SQLite
	Log           *slog.Logger
	// IndexInterval is how often collections created since the last look get their `_id`
	// pushdown index during the first 30 s, when services create their collections (default
	// 1 s; see idindex.go); after it, every ten intervals. SyncIndexes does it at once.
	IndexInterval time.Duration
	// TidyInterval is how often tables that deletes have left mostly dead are vacuumed, on
	// PostgreSQL (default 1 s; see postgresIndexer.tidy).
	TidyInterval time.Duration
}

// StartMongo starts FerretDB on a free loopback port.
func StartMongo(ctx context.Context, opts MongoOptions) (*Mongo, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: fmt.Sprintf("127.0.0.1:%d", port)},
		Logger:   opts.Log,
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PostgreSQLURL != "" {
		cfg.Handler, cfg.PostgreSQLURL = "postgresql", opts.PostgreSQLURL
	} else {
		dir, err := filepath.Abs(opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("ferretdb dir: %w", err)
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("ferretdb dir: %w", err)
		}
		cfg.Handler, cfg.SQLiteURL = "sqlite", "file:"+dir+"/"
	}
	f, err := ferretdb.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("start ferretdb: %w", err)
	}
	var indexer idIndexer
	if opts.PostgreSQLURL != "" {
		if indexer, err = newPostgresIndexer(ctx, opts.PostgreSQLURL); err != nil {
			return nil, err
		}
	} else {
		indexer = newSQLiteIndexer(strings.TrimPrefix(cfg.SQLiteURL, "file:"), cfg.Logger)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m := &Mongo{URI: f.MongoDBURI(), cancel: cancel, done: make(chan error, 1), indexer: indexer,
		log: cfg.Logger, indexed: make(chan struct{})}
	go func() { m.done <- f.Run(runCtx) }()
	if err := waitTCP(ctx, cfg.Listener.TCP); err != nil {
		close(m.indexed)
		m.Stop()
		return nil, fmt.Errorf("ferretdb did not start: %w", err)
	}
	go m.keepIndexed(runCtx, cmp.Or(opts.IndexInterval, time.Second), cmp.Or(opts.TidyInterval, time.Second))
	return m, nil
}

// SyncIndexes gives every collection that lacks it the index its `_id` lookups need. A loop
// does it every IndexInterval; call it after creating collections to not wait for the loop.
func (m *Mongo) SyncIndexes(ctx context.Context) error { return m.indexer.sync(ctx) }

func (m *Mongo) keepIndexed(ctx context.Context, every, tidyEvery time.Duration) {
	defer close(m.indexed)
	t := time.NewTicker(every)
	defer t.Stop()
	tidy := time.NewTicker(tidyEvery)
	defer tidy.Stop()
	settled := time.After(30 * time.Second)
	for {
		select {
		case <-ctx.Done():
			return
		case <-settled:
			t.Reset(10 * every) // collections are created at start-up: later ones are rare
		case <-t.C:
			if err := m.indexer.sync(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("embedded mongo: _id index", "err", err)
			}
		case <-tidy.C:
			if err := m.indexer.tidy(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("embedded mongo: vacuum", "err", err)
			}
		}
	}
}

// Stop shuts FerretDB down and waits for it.
func (m *Mongo) Stop() {
	m.cancel()
	<-m.indexed
	m.indexer.close()
	<-m.done
}

// Redis is an embedded miniredis server.
type Redis struct {
	URL  string
	srv  *miniredis.Miniredis
	stop chan struct{}
	done chan struct{}
	// closeAOF closes the append-only file of StartDurableRedis, nil without one.
	closeAOF func() error
}

// StartRedis starts miniredis on a free loopback port. miniredis keeps time frozen unless told:
// a ticker advances it so that expiries behave as on a real server.
func StartRedis() (*Redis, error) {
	srv := miniredis.NewMiniRedis()
	if err := srv.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start miniredis: %w", err)
	}
	r := &Redis{URL: "redis://" + srv.Addr(), srv: srv, stop: make(chan struct{}), done: make(chan struct{})}
	go r.tick()
	return r, nil
}

func (r *Redis) tick() {
	defer close(r.done)
	const step = 100 * time.Millisecond
	t := time.NewTicker(step)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.srv.FastForward(step)
		}
	}
}

// Stop shuts miniredis down.
func (r *Redis) Stop() {
	close(r.stop)
	<-r.done
	r.srv.Close()
	if r.closeAOF != nil {
		_ = r.closeAOF()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitTCP(ctx context.Context, addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/embedded"
)

// backends are the servers the stack runs on, and how to stop them.
type backends struct {
	MongoURI string
	Brokers  []string
	RedisURL string
	// Store and Cache say what runs: "ferretdb-sqlite" or "ferretdb-postgresql", and
	// "redis-server" or "miniredis".
	Store, Cache string
	// RedisPID is the redis-server's process id (0 for miniredis), for its CPU use.
	RedisPID int
	stops    []func()
}

func (b *backends) stop() {
	for i := len(b.stops) - 1; i >= 0; i-- {
		b.stops[i]()
	}
}

// startBackends starts FerretDB (on SQLite in dir, or on PostgreSQL at pgURL), kfake, and a
// redis-server when redisServer names one (miniredis otherwise).
func startBackends(ctx context.Context, dir, pgURL, redisServer string) (_ *backends, err error) {
	b := &backends{}
	defer func() {
		if err != nil {
			b.stop()
		}
	}()
	m, err := embedded.StartMongo(ctx, embedded.MongoOptions{Dir: filepath.Join(dir, "mongo"), PostgreSQLURL: pgURL})
	if err != nil {
		return nil, err
	}
	b.stops = append(b.stops, m.Stop)
	b.MongoURI, b.Store = m.URI, "ferretdb-sqlite"
	if pgURL != "" {
		b.Store = "ferretdb-postgresql"
	}
	k, err := embedded.StartKafka(embedded.KafkaOptions{})
	if err != nil {
		return nil, err
	}
	b.stops = append(b.stops, k.Stop)
	b.Brokers = k.Brokers
	if redisServer == "" {
		r, err := embedded.StartRedis()
		if err != nil {
			return nil, err
		}
		b.stops = append(b.stops, r.Stop)
		b.RedisURL, b.Cache = r.URL, "miniredis"
		return b, nil
	}
	return b, b.startRedisServer(ctx, redisServer)
}

// startRedisServer runs redis-server on a free loopback port, without persistence.
func (b *backends) startRedisServer(ctx context.Context, path string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no")
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	b.stops = append(b.stops, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	b.RedisURL, b.Cache, b.RedisPID = fmt.Sprintf("redis://127.0.0.1:%d", port), "redis-server", cmd.Process.Pid
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Join(errors.New("redis-server did not answer"), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package embedded

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"
)

// StartDurableRedis starts miniredis as StartRedis does, and keeps the keys that start with
// prefix across restarts, as Redis's append-only file does: every script (EVAL, EVALSHA) that
// writes such a key is appended to the file at path before it runs, and the next start runs the
// file again before it serves. Only scripts are kept: the keys under prefix must be written by
// scripts alone (a script's own calls are not logged apart, so that each runs once on replay).
// Each start rewrites the file as the commands that make its keys as they are, so that it holds
// what is retained, not every write ever made.
func StartDurableRedis(path, prefix string) (*Redis, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("redis append-only file: %w", err)
	}
	r, err := StartRedis()
	if err != nil {
		return nil, err
	}
	a := &aof{prefix: prefix, scripts: map[string]string{}, loaded: map[string]bool{}}
	// The replay's SCRIPT LOADs leave their scripts in the server's cache, where EVALSHA finds
	// them.
	if err := replayAOF(r, path, func(body string) { a.note(body) }); err != nil {
		r.Stop()
		return nil, err
	}
	f, err := rewriteAOF(r.srv, path, prefix)
	if err != nil {
		r.Stop()
		return nil, err
	}
	a.f = f
	r.srv.Server().SetPreHook(a.hook)
	r.closeAOF = f.Close
	return r, nil
}

// aof appends the scripts that write kept keys to the file.
type aof struct {
	mu      sync.Mutex
	f       *os.File
	prefix  string
	scripts map[string]string // sha1 → body of every script this server has seen
	loaded  map[string]bool   // sha1 of the scripts the file loads (SCRIPT LOAD) before their first use
}

// hook runs before every command, on the connection's goroutine: it notes script bodies and
// appends a script that writes a kept key to the file before it runs, as EVALSHA after the
// file's first SCRIPT LOAD of that script (so that the file holds each body once and needs no
// cache from before). A command the file cannot take is refused, so that nothing acknowledged is
// missing from the file.
func (a *aof) hook(c *server.Peer, cmd string, args ...string) bool {
	var sha string
	var rest []string
	switch {
	case cmd == "SCRIPT" && len(args) == 2 && strings.EqualFold(args[0], "LOAD"):
		a.note(args[1])
		return false
	case cmd == "EVAL" && len(args) >= 2:
		sha, rest = a.note(args[0]), args[1:]
	case cmd == "EVALSHA" && len(args) >= 2:
		sha, rest = strings.ToLower(args[0]), args[1:]
		a.mu.Lock()
		_, ok := a.scripts[sha]
		a.mu.Unlock()
		if !ok {
			return false // the server does not know it either: NOSCRIPT, nothing written
		}
	default:
		return false
	}
	n, err := strconv.Atoi(rest[0])
	if err != nil || n < 0 || n > len(rest)-1 {
		return false // the server refuses it
	}
	if !slices.ContainsFunc(rest[1:1+n], func(k string) bool { return strings.HasPrefix(k, a.prefix) }) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var line []byte
	if !a.loaded[sha] {
		line = encodeCommand([]string{"SCRIPT", "LOAD", a.scripts[sha]})
	}
	line = append(line, encodeCommand(append([]string{"EVALSHA", sha}, rest...))...)
	// One write per command: a process killed after it leaves the whole command in the file.
	if _, err := a.f.Write(line); err != nil {
		c.WriteError("ERR append-only file: " + err.Error())
		return true
	}
	a.loaded[sha] = true
	return false
}

// note keeps a script's body by its sha1, which it returns.
func (a *aof) note(body string) string {
	sum := sha1.Sum([]byte(body))
	sha := hex.EncodeToString(sum[:])
	a.mu.Lock()
	defer a.mu.Unlock()
	a.scripts[sha] = body
	return sha
}

// encodeCommand writes a command as Redis's protocol does (an array of bulk strings), which
// holds any bytes.
func encodeCommand(args []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

// readCommand reads one command written by encodeCommand; io.EOF at a clean end.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		if err == io.EOF && line == "" {
			return nil, io.EOF
		}
		return nil, io.ErrUnexpectedEOF
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "*"), "\r\n"))
	if !strings.HasPrefix(line, "*") || err != nil || n < 1 {
		return nil, fmt.Errorf("not a command: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		size, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(head, "$"), "\r\n"))
		if !strings.HasPrefix(head, "$") || err != nil || size < 0 {
			return nil, fmt.Errorf("not a bulk string: %q", head)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}

// replayAOF runs the file's commands on the server, in order, and tells script the body of each
// script it runs. A command cut off at the end (the machine stopped in the middle of a write) is
// left out.
func replayAOF(r *Redis, path string, script func(body string)) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("redis append-only file: %w", err)
	}
	defer f.Close()
	rdb := redis.NewClient(&redis.Options{Addr: r.srv.Addr()})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	in := bufio.NewReaderSize(f, 1<<20)
	for {
		args, err := readCommand(in)
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("redis append-only file %s: %w", path, err)
		}
		cmd := make([]any, len(args))
		for i, a := range args {
			cmd[i] = a
		}
		if len(args) == 3 && strings.EqualFold(args[0], "SCRIPT") && strings.EqualFold(args[1], "LOAD") {
			script(args[2])
		}
		// A command the server refuses (a Redis error reply) was refused when it first ran too,
		// and changes nothing now either; anything else stops the start.
		var refused redis.Error
		if err := rdb.Do(ctx, cmd...).Err(); err != nil && !errors.Is(err, redis.Nil) && !errors.As(err, &refused) {
			return fmt.Errorf("replay the redis append-only file: %w", err)
		}
	}
}

// rewriteAOF replaces the file by the commands that make the kept keys as they are now (each
// stream entry with its id, each string with what remains of its time to live), and opens it
// for appending.
func rewriteAOF(m *miniredis.Miniredis, path, prefix string) (*os.File, error) {
	tmp := path + ".rewrite"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rewrite the redis append-only file: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, k := range m.Keys() {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		switch t := m.Type(k); t {
		case "stream":
			entries, err := m.Stream(k)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("rewrite the redis append-only file: %s: %w", k, err)
			}
			for _, e := range entries {
				_, _ = w.Write(encodeCommand(append([]string{"XADD", k, e.ID}, e.Values...)))
			}
		case "string":
			v, err := m.Get(k)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("rewrite the redis append-only file: %s: %w", k, err)
			}
			_, _ = w.Write(encodeCommand([]string{"SET", k, v}))
		default:
			f.Close()
			return nil, fmt.Errorf("rewrite the redis append-only file: %s is a %s, which it cannot keep", k, t)
		}
		if ttl := m.TTL(k); ttl > 0 {
			_, _ = w.Write(encodeCommand([]string{"PEXPIRE", k, strconv.FormatInt(ttl.Milliseconds(), 10)}))
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("rewrite the redis append-only file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("rewrite the redis append-only file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("rewrite the redis append-only file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("rewrite the redis append-only file: %w", err)
	}
	out, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the redis append-only file: %w", err)
	}
	return out, nil
}

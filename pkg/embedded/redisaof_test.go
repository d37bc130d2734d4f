package embedded

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// appendScript appends to a stream once per id, as feed-svc's event streams do.
var appendScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local pos = redis.call('XADD', KEYS[1], '*', 'id', ARGV[1])
redis.call('SET', KEYS[2], pos, 'EX', 3600)
return 1`)

// TestDurableRedisKeepsScriptedKeys: what scripts wrote under the prefix is there after a
// restart, in order and with markers naming their entries, each script applied once, through any number of restarts
// and a command cut off at the end of the file; other keys are not kept.
func TestDurableRedisKeepsScriptedKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "redis", "streams.aof")
	start := func() (*Redis, *redis.Client) {
		r, err := StartDurableRedis(path, "svc:stream:")
		if err != nil {
			t.Fatal(err)
		}
		opt, err := redis.ParseURL(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		return r, redis.NewClient(opt)
	}
	r, rdb := start()
	for _, id := range []string{"e1", "e2", "e2", "e3"} {
		if err := appendScript.Run(ctx, rdb, []string{"svc:stream:{a}", "svc:stream:{a}:at:" + id}, id).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Set(ctx, "svc:ratelimit:x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	want, err := rdb.XRange(ctx, "svc:stream:{a}", "-", "+").Result()
	if err != nil || len(want) != 3 {
		t.Fatalf("stream before the restart: %v, %v", want, err)
	}
	// The file holds the script's body once, then calls it by its hash.
	if raw, err := os.ReadFile(path); err != nil || strings.Count(string(raw), "SCRIPT\r\n") != 1 || strings.Count(string(raw), "EVALSHA\r\n") != 4 {
		t.Fatalf("the file holds %q (%v), want one SCRIPT LOAD and the four calls", raw, err)
	}
	rdb.Close()
	r.Stop()

	for round := range 3 {
		if round == 2 {
			// A write cut off by the machine stopping: left out, the rest kept.
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteString("*3\r\n$3\r\nSET\r\n$1")
			f.Close()
		}
		r, rdb = start()
		got, err := rdb.XRange(ctx, "svc:stream:{a}", "-", "+").Result()
		if err != nil || len(got) != len(want) {
			t.Fatalf("restart %d: stream %v, %v; want %v", round, got, err, want)
		}
		for i := range got {
			if got[i].Values["id"] != want[i].Values["id"] {
				t.Fatalf("restart %d: entry %d is %v, want %v", round, i, got[i], want[i])
			}
		}
		// A replayed script makes its entry anew: the marker names that entry's position.
		pos, err := rdb.Get(ctx, "svc:stream:{a}:at:e2").Result()
		if err != nil || pos != got[1].ID {
			t.Fatalf("restart %d: marker of e2 is %q (%v), want %s", round, pos, err, got[1].ID)
		}
		if ttl := rdb.TTL(ctx, "svc:stream:{a}:at:e2").Val(); ttl <= 0 {
			t.Fatalf("restart %d: the marker lost its time to live (%v)", round, ttl)
		}
		if n := rdb.Exists(ctx, "svc:ratelimit:x").Val(); n != 0 {
			t.Fatalf("restart %d: a key outside the prefix was kept", round)
		}
		// An append after the restart lands after the kept entries, and is kept too.
		id := "after" + string(rune('0'+round))
		if err := appendScript.Run(ctx, rdb, []string{"svc:stream:{a}", "svc:stream:{a}:at:" + id}, id).Err(); err != nil {
			t.Fatal(err)
		}
		want, _ = rdb.XRange(ctx, "svc:stream:{a}", "-", "+").Result()
		rdb.Close()
		r.Stop()
	}
}

// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package fsql

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// TestLockWritesTakesTurns checks that one write holds the turn at a time, that a writer whose
// context ends while it waits gives up with the context's error, and that a waiting writer takes
// the turn once it is given back.
func TestLockWritesTakesTurns(t *testing.T) {
	db := openWritesDB(t)

	unlock, err := db.LockWrites(context.Background())
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = db.LockWrites(ctx)
	require.ErrorIs(t, err, context.Canceled)

	got := make(chan func())
	go func() {
		next, err := db.LockWrites(context.Background())
		if err != nil {
			panic(err)
		}
		got <- next
	}()

	select {
	case <-got:
		t.Fatal("a second writer took the turn while the first held it")
	default:
	}

	unlock()
	(<-got)()
}

// BenchmarkConcurrentWrites runs 16 writers inserting one row per transaction into one SQLite
// database (WAL, busy_timeout as FerretDB sets them), taking turns with LockWrites or leaving
// SQLite's busy handler to sort them out.
func BenchmarkConcurrentWrites(b *testing.B) {
	for _, turns := range []bool{true, false} {
		b.Run(fmt.Sprintf("turns=%t", turns), func(b *testing.B) {
			db := openWritesDB(b)
			ctx := context.Background()

			var wg sync.WaitGroup
			work := make(chan int)
			b.ResetTimer()

			for range 16 {
				wg.Add(1)

				go func() {
					defer wg.Done()

					for i := range work {
						if turns {
							unlock, err := db.LockWrites(ctx)
							if err != nil {
								panic(err)
							}
							insertRow(ctx, db, i)
							unlock()

							continue
						}

						insertRow(ctx, db, i)
					}
				}()
			}

			for i := range b.N {
				work <- i
			}

			close(work)
			wg.Wait()
		})
	}
}

// openWritesDB opens a file database as FerretDB's SQLite backend does, with a table t.
func openWritesDB(tb testing.TB) *DB {
	uri := "file:" + filepath.Join(tb.TempDir(), "w.sqlite") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)"
	sqlDB, err := sql.Open("sqlite", uri)
	require.NoError(tb, err)

	db := WrapDB(sqlDB, "writes", slog.New(slog.NewTextHandler(io.Discard, nil)))
	tb.Cleanup(func() { db.Close() })

	_, err = db.ExecContext(context.Background(), "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	require.NoError(tb, err)

	return db
}

func insertRow(ctx context.Context, db *DB, i int) {
	err := db.InTransaction(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (?, ?)", i, "value")
		return err
	})
	if err != nil {
		panic(err)
	}
}

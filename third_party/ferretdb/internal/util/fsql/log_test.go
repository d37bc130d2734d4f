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
	"bytes"
	"context"
	"database/sql"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// TestQueryLogFollowsLevel checks that queries are logged, with their arguments, at debug level,
// and that nothing is formatted when that level is off.
func TestQueryLogFollowsLevel(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		t.Run(level.String(), func(t *testing.T) {
			sqlDB, err := sql.Open("sqlite", "file:fsql_log_test?mode=memory")
			require.NoError(t, err)
			t.Cleanup(func() { sqlDB.Close() })

			var buf bytes.Buffer
			db := WrapDB(sqlDB, "test", slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})))
			t.Cleanup(func() { db.Close() })

			ctx := context.Background()
			_, err = db.ExecContext(ctx, "SELECT ?", "marker-argument")
			require.NoError(t, err)
			require.NoError(t, db.InTransaction(ctx, func(tx *Tx) error {
				_, err := tx.ExecContext(ctx, "SELECT ?", "marker-in-tx")
				return err
			}))

			out := buf.String()
			if level == slog.LevelDebug {
				require.Contains(t, out, ">>> SELECT ?")
				require.Contains(t, out, "<<< SELECT ?")
				require.Contains(t, out, "marker-argument")
				require.Contains(t, out, "marker-in-tx")
			} else {
				require.Empty(t, out)
			}
		})
	}
}

// BenchmarkExecLargeArgument executes a statement with a document-sized argument while debug
// logging is off, as FerretDB runs by default: the log call should add nothing to the cost.
func BenchmarkExecLargeArgument(b *testing.B) {
	sqlDB, err := sql.Open("sqlite", "file:fsql_log_bench?mode=memory")
	require.NoError(b, err)
	b.Cleanup(func() { sqlDB.Close() })

	db := WrapDB(sqlDB, "bench", slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.Cleanup(func() { db.Close() })

	ctx := context.Background()
	doc := `{"_id":"` + strings.Repeat("x", 4096) + `"}`

	b.ReportAllocs()

	for range b.N {
		if _, err := db.ExecContext(ctx, "SELECT ?", doc); err != nil {
			b.Fatal(err)
		}
	}
}

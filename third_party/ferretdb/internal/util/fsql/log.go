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
	"log/slog"
)

// logQuery logs a query and fields at debug level, when that level is enabled.
//
// The level is checked first because [slog.Logger.With] formats its attributes at once, whatever
// the level: with the query's arguments (whole documents) among them, that formatting cost more
// than the query itself.
func logQuery(ctx context.Context, l *slog.Logger, dir, query string, fields []any) {
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}

	l.With(fields...).DebugContext(ctx, dir+" "+query)
}

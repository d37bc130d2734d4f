// Package clock renders the API's timestamps: ISO 8601, UTC, millisecond precision.
package clock

import "time"

// Layout is the one timestamp format of the public API.
const Layout = "2006-01-02T15:04:05.000Z"

// Now returns the current time in UTC truncated to milliseconds, the precision MongoDB stores.
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// Format renders t in the API layout.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// FormatPtr renders t, or returns nil for a zero or nil time (a JSON null).
func FormatPtr(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := Format(*t)
	return &s
}

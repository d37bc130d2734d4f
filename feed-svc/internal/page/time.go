package page

import (
	"fmt"
	"time"
)

// timeView is a moment as the pages show it: relative ("3 hours ago"), the exact time on hover
// (title) and the machine-readable one (datetime). The pages have no script, so "ago" is as of
// the page's rendering.
type timeView struct {
	ISO      string
	Exact    string
	Relative string
}

// viewOf reads an ISO 8601 time; nil when it is not one.
func viewOf(iso string, now time.Time) *timeView {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return nil
	}
	return view(t, now)
}

func view(t, now time.Time) *timeView {
	t = t.UTC()
	return &timeView{ISO: t.Format("2006-01-02T15:04:05.000Z"), Exact: t.Format("2 January 2006, 15:04 UTC"), Relative: relative(t, now)}
}

// relative says how long ago t was, in the largest whole unit.
func relative(t, now time.Time) string {
	d := now.Sub(t)
	plural := func(n int, unit string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s ago", unit)
		}
		return fmt.Sprintf("%d %ss ago", n, unit)
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour")
	case d < 30*24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day")
	case now.Year() == t.Year():
		return "on " + t.Format("2 January")
	}
	return "on " + t.Format("2 January 2006")
}

package network

import "testing"

func TestParseRange(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int{"": 30, "30d": 30, "1d": 1, "365d": 365, "0d": -1, "366d": -1, "30": -1, "d": -1, "7w": -1, "-1d": -1} {
		got, err := ParseRange(raw)
		if want < 0 && err == nil {
			t.Errorf("ParseRange(%q) = %d, want an error", raw, got)
		}
		if want >= 0 && (err != nil || got != want) {
			t.Errorf("ParseRange(%q) = %d, %v; want %d", raw, got, err, want)
		}
	}
}

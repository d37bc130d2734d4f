package api

import "testing"

func TestIfNoneMatch(t *testing.T) {
	t.Parallel()
	const etag = `"abc"`
	for header, want := range map[string]bool{
		`"abc"`: true, `W/"abc"`: true, `"x", "abc"`: true, `*`: true, ``: false, `"abcd"`: false, `abc`: false,
	} {
		if got := matches(header, etag); got != want {
			t.Errorf("matches(%q) = %v, want %v", header, got, want)
		}
	}
}

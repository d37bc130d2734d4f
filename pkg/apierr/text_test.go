package apierr

import "testing"

func TestBidiControls(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, out string }{
		{"plain", "plain"},
		{"\u202Egpj.exe", "gpj.exe"},
		{"a\u202Ab\u202Bc\u202Cd\u202De", "abcde"},
		{"x\u2066y\u2067z\u2068w\u2069", "xyzw"},
		{"עברית and \u200Fmarks", "עברית and \u200Fmarks"}, // RLM is no override: kept
	}
	for _, c := range cases {
		if got := StripBidiControls(c.in); got != c.out {
			t.Errorf("StripBidiControls(%q) = %q, want %q", c.in, got, c.out)
		}
		if HasBidiControl(c.in) != (c.in != c.out) {
			t.Errorf("HasBidiControl(%q) = %v", c.in, HasBidiControl(c.in))
		}
		err := RefuseBidiControls("title", c.in)
		if (err != nil) != (c.in != c.out) || err != nil && As(err).Status != 400 {
			t.Errorf("RefuseBidiControls(%q) = %v", c.in, err)
		}
	}
}

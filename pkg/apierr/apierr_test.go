package apierr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestAs maps every kind of error to the status the client sees: the use case's own error is kept
// through wrapping, a deadline or a network timeout is a retryable 503, a bug is a 500 that shows
// nothing of its cause.
func TestAs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
		retry  time.Duration
	}{
		{"own error, wrapped", fmt.Errorf("store threads: %w", NotFound("thread")), 404, CodeNotFound, 0},
		{"deadline", fmt.Errorf("read: %w", context.DeadlineExceeded), 503, CodeUnavailable, time.Second},
		{"network timeout", fmt.Errorf("dial: %w", os.ErrDeadlineExceeded), 503, CodeUnavailable, time.Second},
		{"bug", errors.New("nil map"), 500, CodeInternal, 0},
	} {
		e := As(tc.err)
		if e.Status != tc.status || e.Code != tc.code || e.RetryAfter != tc.retry {
			t.Errorf("%s: As = %d %s retry %v, want %d %s retry %v", tc.name, e.Status, e.Code, e.RetryAfter, tc.status, tc.code, tc.retry)
		}
		if tc.status == 500 && e.Message != "internal error" {
			t.Errorf("%s: a 500 renders %q, want nothing of its cause", tc.name, e.Message)
		}
	}
}

// TestRefuseBidiControls refuses a display text that holds a bidirectional control with a 400 and
// strips them from derived text.
func TestRefuseBidiControls(t *testing.T) {
	t.Parallel()
	if err := RefuseBidiControls("title", "exe.jpg"); err != nil {
		t.Errorf("plain title refused: %v", err)
	}
	if e := As(RefuseBidiControls("title", "\u202Egpj.exe")); e.Status != 400 || e.Code != CodeInvalidRequest {
		t.Errorf("bidi title: %d %s, want 400 %s", e.Status, e.Code, CodeInvalidRequest)
	}
	if got := StripBidiControls("a\u2066b\u202Ec"); got != "abc" {
		t.Errorf("StripBidiControls = %q, want abc", got)
	}
}

package gitsync

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/outbound"
)

// TestPullRefusesPastTheOutboundQueue: while the process's outbound turns and queue are all
// taken, a pull is refused at once with a BusyError carrying Retry-After, without reaching the
// remote; with a turn free it is not.
func TestPullRefusesPastTheOutboundQueue(t *testing.T) {
	t.Parallel()
	l := limiter(t, 1)
	s := New(Syncer{AllowFile: true}, l)
	release, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Pull(context.Background(), Remote{URL: "file://" + t.TempDir(), Branch: "main", Path: "llm.txt"})
	var busy *outbound.BusyError
	if !errors.As(err, &busy) || busy.RetryAfter < time.Second {
		t.Fatalf("a pull past the limiter's queue = %v, want a BusyError with Retry-After", err)
	}
	release()
	_, err = s.Pull(context.Background(), Remote{URL: "file://" + t.TempDir(), Branch: "main", Path: "llm.txt"})
	if errors.Is(err, outbound.ErrBusy) {
		t.Fatalf("a pull with a free turn was refused as busy")
	}
}

func limiter(t *testing.T, max int) *outbound.Limiter {
	t.Helper()
	l, err := outbound.NewLimiter(outbound.LimiterOptions{Max: max, Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestValidateRefusesWhatAPullWould: a remote on a literal loopback, private, link-local or
// metadata address, or a localhost name, is refused when configured, not only when pulled.
func TestValidateRefusesWhatAPullWould(t *testing.T) {
	t.Parallel()
	s := New(Syncer{}, limiter(t, 1))
	for _, u := range []string{
		"https://127.0.0.1/r.git", "https://[::1]/r.git", "https://10.0.0.8/r.git", "https://169.254.169.254/latest",
		"https://[fd00:ec2::254]/r.git", "https://localhost/r.git", "https://LOCALHOST./r.git", "https://git.localhost:8443/r.git",
		"https://0.0.0.0/r.git",
	} {
		if _, err := s.Validate(Remote{URL: u, Branch: "main", Path: "llm.txt"}); !errors.Is(err, outbound.ErrRefused) {
			t.Errorf("Validate(%s) = %v, want refused", u, err)
		}
	}
	if _, err := s.Validate(Remote{URL: "https://github.com/svcdev/svc.git", Branch: "main", Path: "llm.txt"}); err != nil {
		t.Errorf("a public remote: %v", err)
	}
	private := New(Syncer{AllowPrivate: true}, limiter(t, 1))
	if _, err := private.Validate(Remote{URL: "https://127.0.0.1/r.git", Branch: "main", Path: "llm.txt"}); err != nil {
		t.Errorf("loopback with AllowPrivate: %v", err)
	}
	if _, err := private.Validate(Remote{URL: "https://169.254.169.254/r.git", Branch: "main", Path: "llm.txt"}); !errors.Is(err, outbound.ErrRefused) {
		t.Errorf("metadata with AllowPrivate: %v, want refused", err)
	}
}

package gitsync

import (
	"context"
	"errors"
	"testing"

	"github.com/svcdev/svc/pkg/outbound"
)

// TestPullRefusesBeyondConcurrent holds every slot of a Syncer and checks that one more pull is
// refused at once, without reaching the remote.
func TestPullRefusesBeyondConcurrent(t *testing.T) {
	t.Parallel()
	s := New(Syncer{AllowFile: true}, 2)
	s.slots <- struct{}{}
	s.slots <- struct{}{}
	_, err := s.Pull(context.Background(), Remote{URL: "file://" + t.TempDir(), Branch: "main", Path: "llm.txt"})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("a pull beyond the concurrency bound = %v, want ErrBusy", err)
	}
	<-s.slots
	_, err = s.Pull(context.Background(), Remote{URL: "file://" + t.TempDir(), Branch: "main", Path: "llm.txt"})
	if errors.Is(err, ErrBusy) {
		t.Fatalf("a pull with a free slot was refused as busy")
	}
}

// TestValidateRefusesWhatAPullWould: a remote on a literal loopback, private, link-local or
// metadata address, or a localhost name, is refused when configured, not only when pulled.
func TestValidateRefusesWhatAPullWould(t *testing.T) {
	t.Parallel()
	s := New(Syncer{}, 1)
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
	private := New(Syncer{AllowPrivate: true}, 1)
	if _, err := private.Validate(Remote{URL: "https://127.0.0.1/r.git", Branch: "main", Path: "llm.txt"}); err != nil {
		t.Errorf("loopback with AllowPrivate: %v", err)
	}
	if _, err := private.Validate(Remote{URL: "https://169.254.169.254/r.git", Branch: "main", Path: "llm.txt"}); !errors.Is(err, outbound.ErrRefused) {
		t.Errorf("metadata with AllowPrivate: %v, want refused", err)
	}
}

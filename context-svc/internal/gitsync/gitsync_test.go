package gitsync

import (
	"context"
	"errors"
	"testing"
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

package mailbox

import (
	"errors"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/httpx"
)

func TestDraftValidate(t *testing.T) {
	t.Parallel()
	ok := Draft{FromHash: "svc_alice", ToHash: "svc_bob", Kind: "note", Body: "hi"}
	tests := []struct {
		name   string
		change func(*Draft)
		status int
		code   string
	}{
		{"valid", func(*Draft) {}, 0, ""},
		{"every kind", func(d *Draft) { d.Kind = "artifact_update" }, 0, ""},
		{"body at the limit", func(d *Draft) { d.Body = strings.Repeat("x", MaxBodyBytes) }, 0, ""},
		{"malformed from", func(d *Draft) { d.FromHash = "alice" }, 400, httpx.CodeInvalidRequest},
		{"malformed to", func(d *Draft) { d.ToHash = "svc_B" }, 400, httpx.CodeInvalidRequest},
		{"unknown kind", func(d *Draft) { d.Kind = "shout" }, 400, httpx.CodeInvalidKind},
		{"empty kind", func(d *Draft) { d.Kind = "" }, 400, httpx.CodeInvalidKind},
		{"blank body", func(d *Draft) { d.Body = " \n" }, 400, httpx.CodeInvalidRequest},
		{"body over the limit", func(d *Draft) { d.Body = strings.Repeat("x", MaxBodyBytes+1) }, 413, httpx.CodePayloadTooLarge},
		{"thread id too long", func(d *Draft) { d.ThreadID = strings.Repeat("t", MaxThreadID+1) }, 400, httpx.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := ok
			tt.change(&d)
			err := d.Validate()
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var e *httpx.Error
			if !errors.As(err, &e) || e.Status != tt.status || e.Code != tt.code {
				t.Fatalf("want %d %s, got %v", tt.status, tt.code, err)
			}
		})
	}
}

func TestValidIdempotencyKey(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"":                       false,
		"a":                      true,
		"order-42/retry:1":       true,
		"has space":              false,
		"tab\t":                  false,
		"é":                      false,
		strings.Repeat("k", 255): true,
		strings.Repeat("k", 256): false,
	}
	for key, want := range tests {
		if got := ValidIdempotencyKey(key); got != want {
			t.Errorf("ValidIdempotencyKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	d := Draft{FromHash: "svc_alice", ToHash: "svc_bob", Kind: "note", Body: "hi"}
	base := Fingerprint("obj_a", "obj_b", d)
	alias := d
	alias.FromHash = "svc_other_alias"
	if Fingerprint("obj_a", "obj_b", alias) != base {
		t.Error("a retry through another hash of the same objects must keep the fingerprint")
	}
	for name, other := range map[string]string{
		"body":      Fingerprint("obj_a", "obj_b", Draft{Kind: "note", Body: "hi!"}),
		"kind":      Fingerprint("obj_a", "obj_b", Draft{Kind: "question", Body: "hi"}),
		"thread":    Fingerprint("obj_a", "obj_b", Draft{Kind: "note", Body: "hi", ThreadID: "thr_x"}),
		"recipient": Fingerprint("obj_a", "obj_c", d),
		"boundary":  Fingerprint("obj_a", "obj_b", Draft{Kind: "note", Body: "", ThreadID: "hi"}),
	} {
		if other == base {
			t.Errorf("a different %s must change the fingerprint", name)
		}
	}
}

// Package mailbox holds mailbox-svc's use cases and rules: sending messages (Sender), reading
// threads and mailboxes (Threads), sender blocks (Blocks), and the rules of messages and threads
// (kinds, statuses, size limits, the fingerprint that ties an Idempotency-Key to one request).
// Use cases take a context and the request id and return values and errors; the storage they
// need is declared here and satisfied by package store. Every event the service publishes is
// built in events.go.
package mailbox

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/contract"
)

// Limits of a message.
const (
	// MaxBodyBytes bounds a message body (UTF-8 bytes); a larger body is 413.
	MaxBodyBytes = 64 << 10
	// MaxThreadID bounds a thread id; a longer one cannot name a thread.
	MaxThreadID = 64
	// MaxIdempotencyKey bounds the Idempotency-Key header.
	MaxIdempotencyKey = 255
)

// Kinds of a message (spec "Message").
var Kinds = []string{"note", "question", "request", "artifact_update", "system"}

// Thread statuses: a thread is open until a participant archives it; a new message reopens it.
const (
	StatusOpen     = "open"
	StatusArchived = "archived"
)

// DefaultAdmission is a thread's participant_admission when the recipient's rules say nothing.
const DefaultAdmission = "open"

// ValidStatus reports whether s is a thread status.
func ValidStatus(s string) bool { return s == StatusOpen || s == StatusArchived }

// Draft is a message as sent, before it is addressed to objects.
type Draft struct {
	FromHash string
	ToHash   string
	Kind     string
	Body     string
	// ThreadID names the thread to continue; "" starts a new one.
	ThreadID string
	// Notice marks the service's own notice to an object (a system message from and to it, made
	// by a consumer, never by the API): only a notice may name the same object twice.
	Notice bool
	// Signature is the sender's own signature of the message, nil for none.
	Signature *DraftSignature
	// HTTPSignature is the send's request when it carries an HTTP message signature (and no
	// Signature): the sender's signature of the request, nil for none.
	HTTPSignature *SignedRequest
	// Caller is the request's principal, nil for an anonymous send: a send with the sender's own
	// key is signed by svc on its behalf.
	Caller *contract.Principal
	// Client tells anonymous callers apart (the gateway's digest of the client address): an
	// Idempotency-Key's record answers only the caller that made it.
	Client string
}

// idempotencyCaller is who may be answered from a send's Idempotency-Key record: the caller's
// object, or for an anonymous send the client the gateway saw. Another caller naming the same
// sender and key is refused, never shown the first caller's thread, message or signature.
func (d Draft) idempotencyCaller() string {
	if d.Caller != nil {
		return "o." + d.Caller.ObjectID
	}
	return "c." + d.Client
}

// Validate checks the shape of every field; whether the objects and the thread exist is for the
// caller to find out.
func (d Draft) Validate() error {
	for _, f := range []struct{ name, value string }{{"from_hash", d.FromHash}, {"to_hash", d.ToHash}} {
		if !apikey.ValidHash(f.value) {
			return apierr.BadRequest(apierr.CodeInvalidRequest, "%s is not an object hash (svc_ followed by 3 to 32 of a-z, 0-9, _)", f.name)
		}
	}
	if !slices.Contains(Kinds, d.Kind) {
		return apierr.BadRequest(apierr.CodeInvalidKind, "kind must be one of %s", strings.Join(Kinds, ", "))
	}
	if strings.TrimSpace(d.Body) == "" {
		return apierr.BadRequest(apierr.CodeInvalidRequest, "body must not be empty")
	}
	if len(d.Body) > MaxBodyBytes {
		return apierr.Errorf(http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge,
			"body is larger than %d bytes", MaxBodyBytes)
	}
	if len(d.ThreadID) > MaxThreadID {
		return apierr.BadRequest(apierr.CodeInvalidRequest, "thread_id is longer than %d characters", MaxThreadID)
	}
	if d.Signature != nil {
		return d.Signature.validate()
	}
	return nil
}

// ValidIdempotencyKey reports whether k may serve as an Idempotency-Key: 1 to 255 visible ASCII
// characters.
func ValidIdempotencyKey(k string) bool {
	return k != "" && len(k) <= MaxIdempotencyKey && !strings.ContainsFunc(k, func(r rune) bool { return r < 0x21 || r > 0x7e })
}

// Fingerprint identifies a send by what it asks for, so that an Idempotency-Key reused for a
// different message is told apart from a retry. Objects are named by id, so that a retry through
// an alias hash is still the same request.
func Fingerprint(fromID, toID string, d Draft) string {
	h := sha256.New()
	for _, part := range []string{fromID, toID, d.Kind, d.ThreadID, d.Body} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Package apierr is the one error type of the public contract: an HTTP status, a stable code and a
// human message, carried from a use case to the single place that renders it (pkg/httpx). It
// imports only the standard library, so that a use case can return its errors without pulling in
// Gin, a driver or a client.
package apierr

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// HTTP statuses of the errors below, written out rather than imported from net/http: a use case
// that returns an error should not compile in the HTTP stack.
const (
	statusBadRequest          = 400
	statusUnauthorized        = 401
	statusForbidden           = 403
	statusNotFound            = 404
	statusConflict            = 409
	statusEntityTooLarge      = 413
	statusInternalServerError = 500
	statusServiceUnavailable  = 503
)

// Error codes of the public contract (DESIGN §4).
const (
	CodeInvalidRequest    = "INVALID_REQUEST"
	CodeInvalidJSON       = "INVALID_JSON"
	CodeUnknownField      = "UNKNOWN_FIELD"
	CodeMissingField      = "MISSING_FIELD"
	CodeInvalidKind       = "INVALID_KIND"
	CodeInvalidVisibility = "INVALID_VISIBILITY"
	CodeInvalidUsername   = "INVALID_USERNAME"
	CodeInvalidConfidence = "INVALID_CONFIDENCE"
	CodeInvalidURL        = "INVALID_URL"
	CodeUnauthorized      = "UNAUTHORIZED"
	CodePaymentRequired   = "PAYMENT_REQUIRED"
	CodeForbidden         = "FORBIDDEN"
	CodeInsufficientScope = "INSUFFICIENT_SCOPE"
	CodeSenderBlocked     = "SENDER_BLOCKED"
	CodeNotFound          = "NOT_FOUND"
	CodeMethodNotAllowed  = "METHOD_NOT_ALLOWED"
	CodeHashTaken         = "HASH_TAKEN"
	CodeConflict          = "CONFLICT"
	CodePayloadTooLarge   = "PAYLOAD_TOO_LARGE"
	CodeRateLimited       = "RATE_LIMITED"
	CodeUnavailable       = "UNAVAILABLE"
	CodeInternal          = "INTERNAL"
	// CodeQuotaExceeded says that a caller reached the configured quota of a resource it creates:
	// retrying does not help until something is removed or the quota raised.
	CodeQuotaExceeded = "QUOTA_EXCEEDED"
)

// Error is the one error type that carries an HTTP status, a stable code and a human message to
// the single place that renders it. Its message is public: never put secrets or internals in it.
type Error struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
	// Shed says the service refused the request on purpose to keep up (a 503 of the front
	// door): expected under overload, logged as a warning, not an error.
	Shed  bool
	cause error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.cause)
	}
	return e.Code + ": " + e.Message
}

// Unwrap exposes the internal cause, which is logged but never rendered.
func (e *Error) Unwrap() error { return e.cause }

// New builds an Error.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// Errorf builds an Error with a formatted message.
func Errorf(status int, code, format string, args ...any) *Error {
	return New(status, code, fmt.Sprintf(format, args...))
}

// BadRequest is a 400 with the given code.
func BadRequest(code, format string, args ...any) *Error {
	return Errorf(statusBadRequest, code, format, args...)
}

// MissingField is a 400 MISSING_FIELD naming the field.
func MissingField(field string) *Error {
	return BadRequest(CodeMissingField, "field %q is required", field)
}

// NotFound is a 404 NOT_FOUND naming what was not found.
func NotFound(what string) *Error {
	return Errorf(statusNotFound, CodeNotFound, "%s not found", what)
}

// Unauthorized is the 401 for a missing or invalid key.
func Unauthorized(message string) *Error {
	return New(statusUnauthorized, CodeUnauthorized, message)
}

// Forbidden is a 403 with the given code.
func Forbidden(code, message string) *Error { return New(statusForbidden, code, message) }

// Conflict is a 409 with the given code.
func Conflict(code, message string) *Error { return New(statusConflict, code, message) }

// QuotaExceeded is the 409 QUOTA_EXCEEDED naming the quota: what is counted and its maximum.
func QuotaExceeded(what string, max int64) *Error {
	return Errorf(statusConflict, CodeQuotaExceeded, "quota reached: at most %d %s", max, what)
}

// TooLarge is the 413 of a request body over limit bytes.
func TooLarge(limit int64) *Error {
	return Errorf(statusEntityTooLarge, CodePayloadTooLarge,
		"the request body is larger than %d bytes", limit)
}

// Unavailable is a 503 that keeps its cause for the log.
func Unavailable(cause error) *Error {
	return &Error{Status: statusServiceUnavailable, Code: CodeUnavailable,
		Message: "a backing service is unavailable, retry later", cause: cause}
}

// Retryable is Unavailable with a Retry-After of a second: a backend was too slow or out of reach,
// and the same request may succeed when tried again.
func Retryable(cause error) *Error {
	u := Unavailable(cause)
	u.RetryAfter = time.Second
	return u
}

// Internal is a 500 that keeps its cause for the log and renders nothing of it.
func Internal(cause error) *Error {
	return &Error{Status: statusInternalServerError, Code: CodeInternal,
		Message: "internal error", cause: cause}
}

// As converts any error to an *Error: an *Error in the chain is kept, a deadline or a network
// timeout is Retryable, anything else is a 500. Drivers' own transient errors are mapped by their
// adapters (httpx.AsError for the Mongo driver) before they come here.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	// net.Error's Timeout, asked without importing net.
	var ne interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return Retryable(err)
	}
	return Internal(err)
}

// Package httpx is the HTTP toolkit every svc service shares: the one error shape, the Gin engine
// with request ids, access logs and recovery, and strict JSON decoding.
package httpx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"go.mongodb.org/mongo-driver/v2/mongo"
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
)

// Error is the one error type that carries an HTTP status, a stable code and a human message to
// the single place that renders it. Its message is public: never put secrets or internals in it.
type Error struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
	cause      error
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
	return Errorf(http.StatusBadRequest, code, format, args...)
}

// MissingField is a 400 MISSING_FIELD naming the field.
func MissingField(field string) *Error {
	return BadRequest(CodeMissingField, "field %q is required", field)
}

// NotFound is a 404 NOT_FOUND naming what was not found.
func NotFound(what string) *Error {
	return Errorf(http.StatusNotFound, CodeNotFound, "%s not found", what)
}

// Unauthorized is the 401 for a missing or invalid key.
func Unauthorized(message string) *Error {
	return New(http.StatusUnauthorized, CodeUnauthorized, message)
}

// Forbidden is a 403 with the given code.
func Forbidden(code, message string) *Error { return New(http.StatusForbidden, code, message) }

// Conflict is a 409 with the given code.
func Conflict(code, message string) *Error { return New(http.StatusConflict, code, message) }

// Unavailable is a 503 that keeps its cause for the log.
func Unavailable(cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
		Message: "a backing service is unavailable, retry later", cause: cause}
}

// Internal is a 500 that keeps its cause for the log and renders nothing of it.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
		Message: "internal error", cause: cause}
}

// Body is the JSON shape of every error response.
type Body struct {
	Error BodyError `json:"error"`
}

// BodyError is the inner object of Body.
type BodyError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

// AsError converts any error to an *Error: an *Error in the chain is kept, a backend that timed
// out or could not be reached is a 503 with Retry-After (the request may succeed when tried
// again), anything else is a 500.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if transient(err) {
		u := Unavailable(err)
		u.RetryAfter = time.Second
		return u
	}
	return Internal(err)
}

// transient reports whether err says a backend was too slow or out of reach, not that the
// request or the data is wrong.
func transient(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || mongo.IsTimeout(err) || mongo.IsNetworkError(err) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// Abort renders err in the error shape and stops the handler chain. Server-side failures are logged
// with their cause through the request's logger.
func Abort(c *gin.Context, err error) {
	e := AsError(err)
	if e.Status >= 500 {
		_ = c.Error(err) // picked up by the access log
	}
	if e.RetryAfter > 0 || e.Status == http.StatusServiceUnavailable {
		// Every 503 tells the client when to retry: a second unless the error says otherwise.
		secs := int(e.RetryAfter.Round(time.Second) / time.Second)
		if secs < 1 {
			secs = 1
		}
		c.Header("Retry-After", strconv.Itoa(secs))
	}
	// PureJSON: a message such as "Bearer <api_key>" reads as written, not as \u003capi_key\u003e.
	c.Abort()
	c.PureJSON(e.Status, Body{Error: BodyError{
		Code: e.Code, Message: e.Message, RequestID: RequestID(c),
	}})
}

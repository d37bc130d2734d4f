// Package httpx is the HTTP toolkit every svc service shares: the one error shape, the Gin engine
// with request ids, access logs and recovery, and strict JSON decoding.
package httpx

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/apierr"
)

// The error type and its constructors live in pkg/apierr, which has no dependencies, so that use
// cases can return them without importing Gin; these names keep httpx's callers compiling.
const (
	CodeInvalidRequest    = apierr.CodeInvalidRequest
	CodeInvalidJSON       = apierr.CodeInvalidJSON
	CodeUnknownField      = apierr.CodeUnknownField
	CodeMissingField      = apierr.CodeMissingField
	CodeInvalidKind       = apierr.CodeInvalidKind
	CodeInvalidVisibility = apierr.CodeInvalidVisibility
	CodeInvalidUsername   = apierr.CodeInvalidUsername
	CodeUnauthorized      = apierr.CodeUnauthorized
	CodePaymentRequired   = apierr.CodePaymentRequired
	CodeForbidden         = apierr.CodeForbidden
	CodeInsufficientScope = apierr.CodeInsufficientScope
	CodeNotFound          = apierr.CodeNotFound
	CodeHashTaken         = apierr.CodeHashTaken
	CodeConflict          = apierr.CodeConflict
	CodePayloadTooLarge   = apierr.CodePayloadTooLarge
	CodeRateLimited       = apierr.CodeRateLimited
	CodeUnavailable       = apierr.CodeUnavailable
	CodeInternal          = apierr.CodeInternal
)

// Error is apierr.Error: the one error type, rendered by Abort.
type Error = apierr.Error

// Errorf is apierr.Errorf.
func Errorf(status int, code, format string, args ...any) *Error {
	return apierr.Errorf(status, code, format, args...)
}

// BadRequest is apierr.BadRequest.
func BadRequest(code, format string, args ...any) *Error {
	return apierr.BadRequest(code, format, args...)
}

// MissingField is apierr.MissingField.
func MissingField(field string) *Error { return apierr.MissingField(field) }

// NotFound is apierr.NotFound.
func NotFound(what string) *Error { return apierr.NotFound(what) }

// Unauthorized is apierr.Unauthorized.
func Unauthorized(message string) *Error { return apierr.Unauthorized(message) }

// Forbidden is apierr.Forbidden.
func Forbidden(code, message string) *Error { return apierr.Forbidden(code, message) }

// Conflict is apierr.Conflict.
func Conflict(code, message string) *Error { return apierr.Conflict(code, message) }

// TooLarge is apierr.TooLarge.
func TooLarge(limit int64) *Error { return apierr.TooLarge(limit) }

// Unavailable is apierr.Unavailable.
func Unavailable(cause error) *Error { return apierr.Unavailable(cause) }

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
// again), anything else is a 500. It is apierr.As with the Mongo driver's errors mapped.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	// The Mongo driver's own timeouts and network errors say a backend was too slow or out of
	// reach, not that the request or the data is wrong; apierr.As knows the standard library's.
	if mongo.IsTimeout(err) || mongo.IsNetworkError(err) {
		return apierr.Retryable(err)
	}
	return apierr.As(err)
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

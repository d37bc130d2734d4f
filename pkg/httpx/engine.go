package httpx

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
)

// HeaderRequestID carries the request id from the caller, through every service, to Kafka
// headers and webhook deliveries.
const HeaderRequestID = "X-Request-Id"

var (
	requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)
	// keyPattern finds API keys that a caller pasted into a path, so the log never holds one.
	keyPattern = regexp.MustCompile(`(svc_sk_|ksvc_)[A-Za-z0-9]+`)
)

type requestIDKey struct{}

// RequestIDFrom returns the request id carried by ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// RequestID returns the id of the request being served.
func RequestID(c *gin.Context) string { return RequestIDFrom(c.Request.Context()) }

// Metrics are the per-service HTTP metrics; each service registers its own in its own registry so
// that several services can share one process.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the HTTP metrics in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total", Help: "HTTP requests served, by route, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds", Help: "HTTP request latency, by route and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// NewEngine returns a Gin engine with request ids, access logs, metrics, panic recovery, JSON
// 404/405 answers in the error shape and a lingering close of unread bodies. metrics may be nil.
func NewEngine(log *slog.Logger, metrics *Metrics) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	e.Use(lingeringClose, requestIDMiddleware, accessLog(log, metrics), recovery(log), wellFormedQuery)
	e.NoRoute(func(c *gin.Context) { Abort(c, NotFound("route")) })
	e.NoMethod(func(c *gin.Context) {
		Abort(c, Errorf(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed,
			"method %s is not allowed on this route", c.Request.Method))
	})
	return e
}

// wellFormedQuery refuses a query string that does not parse (see CheckQuery).
func wellFormedQuery(c *gin.Context) {
	if err := CheckQuery(c.Request.URL.RawQuery); err != nil {
		Abort(c, err)
		return
	}
	if err := CheckPath(c.Request.URL.Path); err != nil {
		Abort(c, err)
		return
	}
	c.Next()
}

// CheckPath refuses a path (decoded) that is not UTF-8 text or holds a control character: no id
// holds one, and a NUL reaching a store is an error PostgreSQL answers, not the caller's to read.
func CheckPath(path string) error {
	if !utf8.ValidString(path) || strings.IndexFunc(path, unicode.IsControl) >= 0 {
		return BadRequest(CodeInvalidRequest, "the path must be UTF-8 text without control characters")
	}
	return nil
}

// CheckQuery refuses a query string that does not parse, and names or values that are not UTF-8
// text or hold a NUL byte. Go drops malformed pairs silently, which would turn "cursor=%zz" into
// "no cursor" instead of an error; invalid UTF-8 would reach a regular expression and a NUL a
// BSON string, which answer with errors that are not the caller's to read.
func CheckQuery(raw string) error {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return BadRequest(CodeInvalidRequest, "the query string is malformed")
	}
	for name, vs := range values {
		for _, v := range append(vs, name) {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return BadRequest(CodeInvalidRequest, "the query string must be UTF-8 text without NUL characters")
			}
		}
	}
	return nil
}

// acceptableRequestID reports whether a caller's X-Request-Id may be kept: it is logged, echoed and
// carried to other services and webhook deliveries, so one that holds an API key or a token (a
// client that pasted the wrong header) is replaced by a fresh id.
func acceptableRequestID(id string) bool {
	return requestIDPattern.MatchString(id) && !keyPattern.MatchString(id) && !looksLikeJWT(id)
}

// looksLikeJWT: a compact JWS starts with the base64url of '{"' and has three dot-separated parts.
func looksLikeJWT(s string) bool {
	return strings.HasPrefix(s, "eyJ") && strings.Count(s, ".") == 2
}

func requestIDMiddleware(c *gin.Context) {
	id := c.GetHeader(HeaderRequestID)
	if !acceptableRequestID(id) {
		id = "req_" + apikey.NewULID().String() // fresh and sortable
	}
	c.Request.Header.Set(HeaderRequestID, id)
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), requestIDKey{}, id))
	c.Header(HeaderRequestID, id)
	c.Next()
}

// accessLog writes one structured line per request. It logs the path but never headers or
// bodies, so that keys and private text cannot reach the log.
func accessLog(log *slog.Logger, m *Metrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		elapsed := time.Since(start)
		route := cmp.Or(c.FullPath(), "unmatched")
		status := c.Writer.Status()
		if m != nil {
			m.requests.WithLabelValues(route, c.Request.Method, strconv.Itoa(status)).Inc()
			m.duration.WithLabelValues(route, c.Request.Method).Observe(elapsed.Seconds())
		}
		attrs := []any{
			slog.String("request_id", RequestID(c)),
			slog.String("method", c.Request.Method),
			slog.String("path", keyPattern.ReplaceAllString(c.Request.URL.Path, "${1}[redacted]")),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Duration("duration", elapsed),
			slog.String("client_ip", c.ClientIP()),
		}
		level := slog.LevelInfo
		if len(c.Errors) > 0 {
			attrs = append(attrs, slog.String("error", c.Errors.Last().Err.Error()))
		}
		if status >= 500 {
			level = errorLevel(c)
		}
		log.Log(c.Request.Context(), level, "http request", attrs...)
	}
}

// errorLevel is the level of a 5xx answer's log line: a warning when the service refused the
// request on purpose (the front door shedding load, which under overload is most requests) or
// when the caller went away before the answer, an error otherwise.
func errorLevel(c *gin.Context) slog.Level {
	var e *apierr.Error
	if len(c.Errors) > 0 && errors.As(c.Errors.Last().Err, &e) && e.Shed || c.Request.Context().Err() != nil {
		return slog.LevelWarn
	}
	return slog.LevelError
}

func recovery(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				log.Error("panic in handler", "request_id", RequestID(c), "panic", fmt.Sprint(r))
				Abort(c, apierr.Internal(fmt.Errorf("panic: %v", r)))
			}
		}()
		c.Next()
	}
}

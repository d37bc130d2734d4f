package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestUnreachableStoreIsRetryable serves a read whose MongoDB server does not answer, through the
// real driver: the client gets 503 UNAVAILABLE with Retry-After, never a 500, and nothing of the
// cause. A plain bug stays a 500.
func TestUnreachableStoreIsRetryable(t *testing.T) {
	t.Parallel()
	// A server that accepts and never answers: the driver's handshake times out.
	addr := testkit.Silent(t)
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr + "/?directConnection=true").
		SetServerSelectionTimeout(200 * time.Millisecond).SetConnectTimeout(200 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	coll := client.Database("db").Collection("things")

	gin.SetMode(gin.TestMode)
	r := NewEngine(slog.New(slog.DiscardHandler), nil)
	r.GET("/thing", Handle(func(c *gin.Context) error {
		ctx, cancel := context.WithTimeout(c.Request.Context(), time.Second)
		defer cancel()
		return coll.FindOne(ctx, bson.D{{Key: "_id", Value: "x"}}).Err()
	}))
	r.GET("/bug", Handle(func(*gin.Context) error { return errors.New("a plain bug") }))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	for path, want := range map[string]struct {
		status     int
		code       string
		retryAfter string
	}{
		"/thing": {http.StatusServiceUnavailable, CodeUnavailable, "1"},
		"/bug":   {http.StatusInternalServerError, CodeInternal, ""},
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body Body
		err = json.NewDecoder(resp.Body).Decode(&body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != want.status || body.Error.Code != want.code || resp.Header.Get("Retry-After") != want.retryAfter {
			t.Errorf("%s: %d %+v Retry-After %q (%v), want %d %s %q", path, resp.StatusCode, body.Error,
				resp.Header.Get("Retry-After"), err, want.status, want.code, want.retryAfter)
		}
	}
}

// TestAbortWritesMessagesAsWritten: a message with <, > or & reaches the client unescaped.
func TestAbortWritesMessagesAsWritten(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest("GET", "/", nil)
	Abort(c, Unauthorized("an API key is required: Authorization: Bearer <api_key>"))
	if body := rec.Body.String(); !strings.Contains(body, "Bearer <api_key>") || rec.Code != 401 {
		t.Fatalf("%d %s; want 401 naming Bearer <api_key> as written", rec.Code, body)
	}
}

// TestShedAnswersLogAsWarnings: a 503 the service chose (the front door shedding load) and an
// answer to a caller that went away are logged as warnings; any other 5xx is an error.
func TestShedAnswersLogAsWarnings(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	levels := map[string]slog.Level{}
	log := slog.New(recordHandler(func(r slog.Record) {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "route" {
				mu.Lock()
				levels[a.Value.String()] = r.Level
				mu.Unlock()
			}
			return true
		})
	}))
	gin.SetMode(gin.TestMode)
	r := NewEngine(log, nil)
	r.GET("/shed", Handle(func(*gin.Context) error {
		e := apierr.Unavailable(errors.New("a projection is behind"))
		e.Shed, e.RetryAfter = true, 2*time.Second
		return e
	}))
	r.GET("/down", Handle(func(*gin.Context) error { return apierr.Retryable(errors.New("store down")) }))
	r.GET("/gone", Handle(func(c *gin.Context) error {
		<-c.Request.Context().Done()
		return apierr.Retryable(c.Request.Context().Err())
	}))

	for _, path := range []string{"/shed", "/down"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
			t.Fatalf("%s: %d, Retry-After %q; want 503 with Retry-After", path, w.Code, w.Header().Get("Retry-After"))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/gone", nil).WithContext(ctx))

	mu.Lock()
	defer mu.Unlock()
	for route, want := range map[string]slog.Level{"/shed": slog.LevelWarn, "/down": slog.LevelError, "/gone": slog.LevelWarn} {
		if got, ok := levels[route]; !ok || got != want {
			t.Errorf("%s logged at %v (logged: %v), want %v", route, got, ok, want)
		}
	}
}

// recordHandler is a slog.Handler that passes every record to f.
type recordHandler func(slog.Record)

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h(r)
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

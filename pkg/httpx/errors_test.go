package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

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

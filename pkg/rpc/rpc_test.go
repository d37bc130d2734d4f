package rpc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/rpc"
)

func TestDoMapsStatusesAndCapsBodies(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			if r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(`{"name":"ada"}`))
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		case "/big":
			_, _ = w.Write([]byte(`{"name":"` + strings.Repeat("x", 4096) + `"}`))
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	c := rpc.New("test-svc", srv.URL+"/", srv.Client(), 1024)
	ctx := context.Background()

	var out struct{ Name string }
	if err := c.Do(ctx, http.MethodPost, "/ok", map[string]int{"a": 1}, &out); err != nil || out.Name != "ada" {
		t.Fatalf("2xx: got %+v, %v; want name ada", out, err)
	}
	if err := c.Do(ctx, http.MethodGet, "/missing", nil, &out); !errors.Is(err, rpc.ErrNotFound) {
		t.Fatalf("404: got %v, want ErrNotFound", err)
	}
	var se *rpc.StatusError
	if err := c.Do(ctx, http.MethodGet, "/fail", nil, nil); !errors.As(err, &se) || se.Status != http.StatusBadGateway {
		t.Fatalf("502: got %v, want a StatusError with 502", err)
	}
	if err := c.Do(ctx, http.MethodGet, "/big", nil, &out); err == nil {
		t.Fatal("an answer over the cap decoded without error")
	}
	if rpc.New("x", "", nil, 0).Configured() {
		t.Fatal("a client without an address reports itself configured")
	}
}

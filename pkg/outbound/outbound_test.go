package outbound_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/outbound"
)

func TestRefusedAddressClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr         string
		strict       string // reason without AllowPrivate
		allowPrivate string // reason with AllowPrivate
	}{
		{"93.184.216.34", "", ""},
		{"2606:2800:220:1:248:1893:25c8:1946", "", ""},
		{"127.0.0.1", "loopback", ""},
		{"127.8.9.10", "loopback", ""},
		{"::1", "loopback", ""},
		{"::ffff:127.0.0.1", "loopback", ""},
		{"10.1.2.3", "private", ""},
		{"172.16.0.1", "private", ""},
		{"172.31.255.255", "private", ""},
		{"192.168.1.1", "private", ""},
		{"100.64.0.1", "private", ""},
		{"fd12:3456::1", "private", ""},
		{"::ffff:10.0.0.1", "private", ""},
		{"169.254.1.1", "link-local", "link-local"},
		{"fe80::1", "link-local", "link-local"},
		{"169.254.169.254", "metadata", "metadata"},
		{"169.254.170.2", "metadata", "metadata"},
		{"100.100.100.200", "metadata", "metadata"},
		{"fd00:ec2::254", "metadata", "metadata"},
		{"::ffff:169.254.169.254", "metadata", "metadata"},
		{"224.0.0.1", "multicast", "multicast"},
		{"239.255.255.250", "multicast", "multicast"},
		{"ff02::1", "multicast", "multicast"},
		{"0.0.0.0", "unspecified", "unspecified"},
		{"::", "unspecified", "unspecified"},
		{"255.255.255.255", "reserved", "reserved"},
		{"0.1.2.3", "reserved", "reserved"},
		{"198.18.0.1", "reserved", "reserved"},
		{"64:ff9b::7f00:1", "loopback", ""},
		{"64:ff9b::a9fe:a9fe", "metadata", "metadata"},
		{"2002:a9fe:a9fe::1", "metadata", "metadata"},
		{"2002:c0a8:0101::1", "private", ""},
		{"::7f00:1", "reserved", "reserved"},
		{"::ffff:0:7f00:1", "reserved", "reserved"},
		{"fec0::1", "reserved", "reserved"},
		{"2001::1", "reserved", "reserved"},
		{"2001:1::1", "reserved", "reserved"},
		{"192.88.99.1", "reserved", "reserved"},
		{"3fff::1", "reserved", "reserved"},
		{"192.31.196.1", "reserved", "reserved"},
	}
	for _, tc := range cases {
		ip := netip.MustParseAddr(tc.addr)
		if got := outbound.Refused(ip, false); got != tc.strict {
			t.Errorf("Refused(%s, strict) = %q, want %q", tc.addr, got, tc.strict)
		}
		if got := outbound.Refused(ip, true); got != tc.allowPrivate {
			t.Errorf("Refused(%s, allow private) = %q, want %q", tc.addr, got, tc.allowPrivate)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	strict, _ := outbound.New(outbound.Options{})
	httpsOnly, _ := outbound.New(outbound.Options{HTTPSOnly: true})
	cases := []struct {
		client *outbound.Client
		url    string
		ok     bool
	}{
		{strict, "https://example.com/llm.txt", true},
		{strict, "http://example.com/", true},
		{httpsOnly, "http://example.com/", false},
		{strict, "ftp://example.com/", false},
		{strict, "file:///etc/passwd", false},
		{strict, "gopher://example.com/", false},
		{strict, "/relative/path", false},
		{strict, "https://user:pw@example.com/", false},
		{strict, "http://127.0.0.1:8080/", false},
		{strict, "http://[::1]/", false},
		{strict, "http://169.254.169.254/latest/meta-data/", false},
		{strict, "http://10.0.0.1/", false},
		{strict, "https://", false},
	}
	for _, tc := range cases {
		_, err := tc.client.CheckURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) error = %v, want ok=%v", tc.url, err, tc.ok)
		}
		if err != nil && !errors.Is(err, outbound.ErrRefused) {
			t.Errorf("CheckURL(%q) error %v does not wrap ErrRefused", tc.url, err)
		}
	}
}

// TestDialRefusesLoopback shows that a host name resolving to a refused address is refused when
// dialled, even though the URL itself passes CheckURL.
func TestDialRefusesLoopback(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secret")) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]

	strict, _ := outbound.New(outbound.Options{})
	_, err := strict.Get(context.Background(), "http://localhost"+port+"/")
	if !errors.Is(err, outbound.ErrRefused) {
		t.Fatalf("fetch of localhost without AllowPrivate: error %v, want ErrRefused", err)
	}
	// The raw client refuses too, whatever the caller does with it.
	resp, err := strict.HTTPClient().Get("http://localhost" + port + "/")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, outbound.ErrRefused) {
		t.Fatalf("HTTPClient fetch of localhost: error %v, want ErrRefused", err)
	}

	open, _ := outbound.New(outbound.Options{AllowPrivate: true})
	got, err := open.Get(context.Background(), "http://localhost"+port+"/")
	if err != nil || string(got.Body) != "secret" {
		t.Fatalf("fetch with AllowPrivate: %v %v, want the body", got, err)
	}
}

// TestRedirectsAreChecked follows redirects from an admitted server to refused targets.
func TestRedirectsAreChecked(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok", http.StatusFound)
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("fine")) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c, _ := outbound.New(outbound.Options{AllowPrivate: true})
	ctx := context.Background()
	for _, path := range []string{"/metadata", "/file"} {
		if _, err := c.Get(ctx, srv.URL+path); !errors.Is(err, outbound.ErrRefused) {
			t.Errorf("redirect %s: error %v, want ErrRefused", path, err)
		}
	}
	if _, err := c.Get(ctx, srv.URL+"/loop"); err == nil {
		t.Error("endless redirects: no error")
	}
	if got, err := c.Get(ctx, srv.URL+"/hop"); err != nil || string(got.Body) != "fine" {
		t.Errorf("admitted redirect: %v %v", got, err)
	}

	noFollow, _ := outbound.New(outbound.Options{AllowPrivate: true, MaxRedirects: -1})
	got, err := noFollow.Get(ctx, srv.URL+"/hop")
	if err != nil || got.Status != http.StatusFound {
		t.Errorf("MaxRedirects -1: %v %v, want the 302 itself", got, err)
	}
}

func TestResponseSizeCap(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2048)
	mux := http.NewServeMux()
	mux.HandleFunc("/announced", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(big)) })
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, _ *http.Request) {
		for range 4 {
			_, _ = w.Write([]byte(big[:512]))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(big[:1024])) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c, _ := outbound.New(outbound.Options{AllowPrivate: true, MaxBytes: 1024})
	ctx := context.Background()
	for _, path := range []string{"/announced", "/chunked"} {
		if _, err := c.Get(ctx, srv.URL+path); !errors.Is(err, outbound.ErrTooLarge) {
			t.Errorf("%s: error %v, want ErrTooLarge", path, err)
		}
	}
	if got, err := c.Get(ctx, srv.URL+"/exact"); err != nil || len(got.Body) != 1024 {
		t.Errorf("body of exactly the cap: %v, want 1024 bytes", err)
	}
}

func TestCAFile(t *testing.T) {
	t.Parallel()
	if _, err := outbound.New(outbound.Options{CAFile: "/nonexistent/ca.pem"}); err == nil {
		t.Error("missing CA file accepted")
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("tls")) }))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	without, _ := outbound.New(outbound.Options{AllowPrivate: true})
	if _, err := without.Get(ctx, srv.URL); err == nil {
		t.Error("a server signed by an unknown CA was trusted")
	}
	with, err := outbound.New(outbound.Options{AllowPrivate: true, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := with.Get(ctx, srv.URL); err != nil || string(got.Body) != "tls" {
		t.Errorf("fetch trusting the CA file: %v %v", got, err)
	}
}

// TestDialRefusesOtherPorts dials a public address on a port that is neither 80 nor 443: the
// dial hook refuses it before connecting.
func TestDialRefusesOtherPorts(t *testing.T) {
	t.Parallel()
	c, err := outbound.New(outbound.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), "https://93.184.216.34:8443/")
	var refused *outbound.RefusedError
	if !errors.As(err, &refused) || refused.Reason != "port" {
		t.Fatalf("a fetch on port 8443 = %v, want refused for its port", err)
	}
}

// TestRequestsAreSigned: with a Signer, every request, a redirect's next hop included, carries a
// web-bot-auth signature that verifies for its own authority, path and body.
func TestRequestsAreSigned(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer := &httpsig.Signer{Key: priv, KeyID: "svc", Agent: "https://svc.example/.well-known/http-message-signatures-directory"}
	var verified []string
	var mu sync.Mutex
	mux := http.NewServeMux()
	check := func(w http.ResponseWriter, r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		_, err := httpsig.Verify(r, body, time.Now(), func(string, string) (ed25519.PublicKey, error) { return pub, nil })
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return false
		}
		mu.Lock()
		verified = append(verified, r.Method+" "+r.URL.Path+" "+string(body))
		mu.Unlock()
		return true
	}
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		if check(w, r) {
			http.Redirect(w, r, "/ok", http.StatusFound)
		}
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		if check(w, r) {
			_, _ = w.Write([]byte("fine"))
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, _ := outbound.New(outbound.Options{AllowPrivate: true, Signer: signer})
	if got, err := c.Get(context.Background(), srv.URL+"/hop"); err != nil || string(got.Body) != "fine" {
		t.Fatalf("signed GET through a redirect: %v %v", got, err)
	}
	res, err := c.HTTPClient().Post(srv.URL+"/ok", "application/json", strings.NewReader(`{"event":"x"}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("signed POST: %v %v", res, err)
	}
	res.Body.Close()
	if want := []string{"GET /hop ", "GET /ok ", `POST /ok {"event":"x"}`}; !slices.Equal(verified, want) {
		t.Errorf("verified %q, want %q", verified, want)
	}
}

// TestConcurrentRequestsReuseTheirConnections: after a round of MaxIdlePerHost requests at once
// to one host, the next round runs on the same connections instead of opening new ones.
func TestConcurrentRequestsReuseTheirConnections(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	opened := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(20 * time.Millisecond) // keep the round's requests in flight together
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			opened++
			mu.Unlock()
		}
	}
	srv.StartTLS()
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := outbound.New(outbound.Options{AllowPrivate: true, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	round := func() int {
		mu.Lock()
		before := opened
		mu.Unlock()
		var wg sync.WaitGroup
		for range outbound.MaxIdlePerHost {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
				resp, err := c.HTTPClient().Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			})
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return opened - before
	}
	if n := round(); n == 0 {
		t.Fatal("the first round opened no connection")
	}
	// The pool kept 4 idle connections per host before: a second round then opened 12.
	if n := round(); n > 2 {
		t.Errorf("the second round opened %d new connections; the first round's should serve it", n)
	}
}

// Package outbound is the HTTP client for fetches of third-party URLs (sources, git sync, webhook
// deliveries, claim proofs). It refuses loopback, private, link-local, multicast, metadata and
// other non-public addresses, checked on the address actually dialled so that DNS rebinding and
// redirects cannot get around it, and it bounds time and response size (DESIGN §7).
package outbound

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"

	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/httpsig"
)

// ErrRefused is wrapped by every error that refuses an address or a URL.
var ErrRefused = errors.New("outbound address refused")

// ErrTooLarge says that a response body passed the size cap.
var ErrTooLarge = errors.New("outbound response too large")

// RefusedError names the refused address and why.
type RefusedError struct {
	Addr   string
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("outbound: %s address %s refused", e.Reason, e.Addr)
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Defaults of Options.
const (
	DefaultTimeout      = 15 * time.Second
	DefaultMaxBytes     = 1 << 20
	DefaultMaxRedirects = 5
)

// Options configures a Client.
type Options struct {
	// AllowPrivate admits loopback and private (RFC 1918, RFC 4193, CGNAT) addresses, for tests
	// and the all-in-one mode. Link-local, metadata, multicast and unspecified addresses stay
	// refused.
	AllowPrivate bool
	// CAFile names a PEM file of extra root certificates, trusted besides the system's.
	CAFile string
	// Timeout bounds a whole request, body included (default 15 s).
	Timeout time.Duration
	// MaxBytes caps a response body (default 1 MiB); reading past it fails with ErrTooLarge.
	MaxBytes int64
	// MaxRedirects is how many redirects are followed (default 5); a negative value follows none
	// and returns the redirect response itself.
	MaxRedirects int
	// HTTPSOnly refuses plain http URLs, redirects included.
	HTTPSOnly bool
	// UserAgent is sent with every request (default "svc").
	UserAgent string
	// Ports are the ports that may be dialled (DefaultPorts when empty).
	Ports []int
	// Signer, when set, signs every request (each redirect too) with HTTP Message Signatures in
	// the Web Bot Auth profile, so that the receiver can tell that svc sent it.
	Signer *httpsig.Signer
}

// signatureTTL is how long the signature of an outbound request is valid.
const signatureTTL = time.Minute

// DefaultPorts are the ports of http and https: a URL naming another port is refused, so that
// a fetch cannot probe or speak to other services (SMTP, Redis, …) of a public host.
var DefaultPorts = []int{80, 443}

// FromConfig starts Options from the shared environment settings.
func FromConfig(c config.Outbound) Options {
	return Options{AllowPrivate: c.AllowPrivate, CAFile: c.CAFile, Ports: c.Ports}
}

// Client makes guarded requests.
type Client struct {
	opts Options
	http *http.Client
}

// MaxIdlePerHost is how many idle connections to one host are kept for the next requests: as
// many as webhook-svc's default workers (WEBHOOK_WORKERS) post at once, so that a backlog
// delivered to one receiver reuses its connections instead of opening a TLS connection for
// most of its requests.
const MaxIdlePerHost = 16

// New builds a client. It fails when the CA file cannot be read.
func New(opts Options) (*Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	opts.MaxRedirects = cmp.Or(opts.MaxRedirects, DefaultMaxRedirects)
	opts.UserAgent = cmp.Or(opts.UserAgent, "svc")
	if len(opts.Ports) == 0 {
		opts.Ports = DefaultPorts
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if opts.CAFile != "" {
		pool, err := certPool(opts.CAFile)
		if err != nil {
			return nil, err
		}
		tlsConfig.RootCAs = pool
	}
	dialer := &net.Dialer{
		Timeout:   5 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   control(opts.AllowPrivate, opts.Ports),
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would be dialled instead of the checked address
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   MaxIdlePerHost,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	c := &Client{opts: opts}
	c.http = &http.Client{
		Timeout:       opts.Timeout,
		Transport:     &guard{base: transport, opts: opts},
		CheckRedirect: c.checkRedirect,
	}
	return c, nil
}

func certPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("outbound CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("outbound CA file %s: no PEM certificate found", file)
	}
	return pool, nil
}

// HTTPClient is the guarded *http.Client, for libraries that take one (a git transport, a
// webhook sender). Every request through it is checked; bodies are capped at MaxBytes.
func (c *Client) HTTPClient() *http.Client { return c.http }

// CheckURL refuses a URL that is not absolute http(s) (https only when HTTPSOnly), carries
// credentials, or names a literal address that would be refused. Host names are checked when
// dialled.
func (c *Client) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: not an absolute URL", ErrRefused)
	}
	if err := checkScheme(u.Scheme, c.opts.HTTPSOnly); err != nil {
		return nil, err
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: URLs with credentials are not allowed", ErrRefused)
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if reason := Refused(ip, c.opts.AllowPrivate); reason != "" {
			return nil, &RefusedError{Addr: ip.String(), Reason: reason}
		}
	}
	return u, nil
}

// checkScheme refuses a scheme other than https and http (http too when httpsOnly).
func checkScheme(scheme string, httpsOnly bool) error {
	switch {
	case scheme == "http" && httpsOnly:
		return fmt.Errorf("%w: only https URLs are allowed", ErrRefused)
	case scheme != "https" && scheme != "http":
		return fmt.Errorf("%w: scheme %q is not allowed", ErrRefused, scheme)
	}
	return nil
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.opts.MaxRedirects < 0 {
		return http.ErrUseLastResponse
	}
	if len(via) > c.opts.MaxRedirects {
		return fmt.Errorf("outbound: more than %d redirects", c.opts.MaxRedirects)
	}
	_, err := c.CheckURL(req.URL.String())
	return err
}

// Response is a fetched response with its body read (at most MaxBytes).
type Response struct {
	Status      int
	ContentType string
	Body        []byte
	// URL is the final URL, after redirects.
	URL string
}

// Get fetches raw and reads the body. A non-2xx status is not an error: the caller decides.
func (c *Client) Get(ctx context.Context, raw string) (*Response, error) {
	u, err := c.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body,
		URL: resp.Request.URL.String()}, nil
}

// guard checks every request's URL (also those made by libraries through HTTPClient) and caps
// every response body.
type guard struct {
	base http.RoundTripper
	opts Options
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkScheme(req.URL.Scheme, g.opts.HTTPSOnly); err != nil {
		return nil, err
	}
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", g.opts.UserAgent)
	}
	if g.opts.Signer != nil {
		var err error
		if req, err = g.sign(req); err != nil {
			return nil, err
		}
	}
	resp, err := g.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > g.opts.MaxBytes {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %d bytes announced, the cap is %d", ErrTooLarge, resp.ContentLength, g.opts.MaxBytes)
	}
	resp.Body = &cappedBody{rc: resp.Body, left: g.opts.MaxBytes}
	return resp, nil
}

// cappedBody fails with ErrTooLarge once more than its cap has been read.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, ErrTooLarge
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// control runs after name resolution and before connecting, on the address actually dialled.
// Only the allowed ports may be dialled, except on the private addresses AllowPrivate admits
// (test servers and the all-in-one mode listen on any port).
func control(allowPrivate bool, ports []int) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if network != "tcp4" && network != "tcp6" && network != "tcp" {
			return &RefusedError{Addr: address, Reason: "non-TCP"}
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &RefusedError{Addr: address, Reason: "unparsable"}
		}
		if reason := Refused(ap.Addr(), allowPrivate); reason != "" {
			return &RefusedError{Addr: ap.Addr().String(), Reason: reason}
		}
		if (!allowPrivate || !privateOrLoopback(ap.Addr())) && !slices.Contains(ports, int(ap.Port())) {
			return &RefusedError{Addr: ap.String(), Reason: "port"}
		}
		return nil
	}
}

// Address classes refused by Refused.
var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	}
	privatePrefixes = []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"),
		netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
		netip.MustParsePrefix("fc00::/7"),      // unique local
	}
	// guardian refuses every special-purpose address of the IANA registries (code.dny.dev/ssrf
	// keeps the list, generated from them): everything not refused above as another class.
	guardian = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())
	// Prefixes that embed an IPv4 address in the last 32 bits (NAT64).
	nat64Prefixes = []netip.Prefix{
		netip.MustParsePrefix("64:ff9b::/96"),
		netip.MustParsePrefix("64:ff9b:1::/48"),
	}
)

// Refused returns why ip may not be dialled ("" when it may). Loopback and private addresses
// are admitted only with allowPrivate; the other classes never are.
func Refused(ip netip.Addr, allowPrivate bool) string {
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		for _, p := range nat64Prefixes {
			if p.Contains(ip) {
				b := ip.As16()
				return Refused(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), allowPrivate)
			}
		}
		if b := ip.As16(); b[0] == 0x20 && b[1] == 0x02 { // 6to4 embeds an IPv4 address
			return Refused(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), allowPrivate)
		}
	}
	switch {
	case slices.Contains(metadataAddrs, ip):
		return "metadata"
	case !ip.IsValid(), ip.IsUnspecified():
		return "unspecified"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip.IsLoopback():
		if allowPrivate {
			return ""
		}
		return "loopback"
	case private(ip):
		if allowPrivate {
			return ""
		}
		return "private"
	case guardian.SafeAddr(ip) != nil:
		return "reserved"
	}
	return ""
}

// private reports whether ip is in one of privatePrefixes.
func private(ip netip.Addr) bool {
	return slices.ContainsFunc(privatePrefixes, func(p netip.Prefix) bool { return p.Contains(ip) })
}

// privateOrLoopback reports whether ip is one of the addresses AllowPrivate admits.
func privateOrLoopback(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	return ip.IsLoopback() || private(ip)
}

// sign returns a copy of req signed with the guard's signer, its body read to digest it.
func (g *guard) sign(req *http.Request) (*http.Request, error) {
	req = req.Clone(req.Context())
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		rc := req.Body
		var err error
		if req.GetBody != nil {
			if rc, err = req.GetBody(); err != nil {
				return nil, fmt.Errorf("outbound: sign: %w", err)
			}
		}
		body, err = io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			return nil, fmt.Errorf("outbound: sign: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if err := g.opts.Signer.Sign(req, body, time.Now(), signatureTTL); err != nil {
		return nil, fmt.Errorf("outbound: sign: %w", err)
	}
	return req, nil
}

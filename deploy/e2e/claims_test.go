package e2e

import (
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dnsServer is a real DNS server on loopback (UDP) answering TXT queries from a table the test
// changes; fail makes it answer SERVFAIL.
type dnsServer struct {
	Addr string
	mu   sync.Mutex
	txt  map[string][]string
	fail bool
}

func startDNS(t *testing.T) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dnsServer{Addr: pc.LocalAddr().String(), txt: map[string][]string{}}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.serve)}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return d
}

func (d *dnsServer) set(name string, values ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.txt[dns.Fqdn(name)] = values
}

func (d *dnsServer) setFail(fail bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail = fail
}

func (d *dnsServer) serve(w dns.ResponseWriter, r *dns.Msg) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	values, ok := d.txt[strings.ToLower(q.Name)]
	switch {
	case d.fail:
		m.Rcode = dns.RcodeServerFailure
	case !ok:
		m.Rcode = dns.RcodeNameError
	case q.Qtype == dns.TypeTXT:
		for _, v := range values {
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{v}})
		}
	}
	_ = w.WriteMsg(m)
}

// pages is a local HTTPS server whose pages the test sets, trusted through OUTBOUND_CA_FILE.
type pages struct {
	URL    string
	CAFile string
	mu     sync.Mutex
	pages  map[string]string
	down   atomic.Bool
	hits   atomic.Int64
}

func startPages(t *testing.T) *pages {
	t.Helper()
	p := &pages{pages: map[string]string{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		if p.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		p.mu.Lock()
		body, ok := p.pages[r.URL.Path]
		p.mu.Unlock()
		switch {
		case !ok:
			http.NotFound(w, r)
		case body == "slow":
			// A page that never answers: it holds the fetch until the fetcher gives up (or a
			// minute passes, so that the server can always close).
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		case strings.HasPrefix(body, "redirect:"):
			http.Redirect(w, r, strings.TrimPrefix(body, "redirect:"), http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	p.CAFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pages) set(path, body string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pages[path] = body
}

// claimsEnv starts a suite whose claims-svc asks d for DNS and may fetch p's pages.
func claimsEnv(t *testing.T, d *dnsServer, p *pages, opts ...Option) *Env {
	t.Helper()
	host := strings.TrimPrefix(p.URL, "https://")
	return Start(t, append([]Option{
		WithEnv("CLAIMS_DNS_RESOLVER", d.Addr), WithEnv(allowPrivate, "true"), WithEnv("OUTBOUND_CA_FILE", p.CAFile),
		WithEnv("CLAIMS_GITHUB_URL", "https://"+host+"/github"), WithEnv("CLAIMS_X_URL", "https://"+host+"/x"),
		WithEnv("CLAIMS_LINKEDIN_URL", "https://"+host+"/in"), WithEnv("CLAIMS_REDDIT_URL", "https://"+host+"/user"),
	}, opts...)...)
}

// webfingerPath is where a Mastodon instance answers WebFinger.
const webfingerPath = "/.well-known/webfinger"

// webfinger is an instance's WebFinger answer for user@host, linking its actor on host.
func webfinger(user, host string) string {
	return `{"subject":"acct:` + user + `@` + host + `","links":[{"rel":"self","type":"application/activity+json","href":"https://` + host + `/users/` + user + `"}]}`
}

type claimBody struct {
	ID            string `json:"id"`
	ObjectHash    string `json:"object_hash"`
	ProofType     string `json:"proof_type"`
	ClaimedTarget string `json:"claimed_target"`
	Status        string `json:"status"`
	Challenge     struct {
		Token        string `json:"token"`
		Instructions string `json:"instructions"`
		ExpiresAt    string `json:"expires_at"`
	} `json:"challenge"`
	VerifiedAt    *string `json:"verified_at"`
	LastCheckedAt *string `json:"last_checked_at"`
	LastCheck     *struct {
		Outcome  string  `json:"outcome"`
		Reason   *string `json:"reason"`
		Evidence *string `json:"evidence"`
	} `json:"last_check"`
}

type verification struct {
	ID          string  `json:"id"`
	Status      string  `json:"status"`
	VerifiedAt  *string `json:"verified_at"`
	Reason      *string `json:"reason"`
	ClaimStatus string  `json:"claim_status"`
	Evidence    *string `json:"evidence"`
}

func createClaim(t *testing.T, env *Env, key, hash, proof, target string) claimBody {
	t.Helper()
	var c claimBody
	env.Do(t, "POST", "/api/claims", key, map[string]any{"object_hash": hash, "proof_type": proof, "claimed_target": target}).
		Expect(t, 201).Decode(t, &c)
	return c
}

func verifyClaim(t *testing.T, env *Env, key, id string) verification {
	t.Helper()
	var v verification
	env.Do(t, "POST", "/api/claims/"+id+"/verify", key, nil).Expect(t, 200).Decode(t, &v)
	return v
}

func reason(v verification) string {
	if v.Reason == nil {
		return ""
	}
	return *v.Reason
}

func mailboxStatus(t *testing.T, env *Env, hash string) string {
	t.Helper()
	return Str(t, env.Do(t, "GET", "/api/objects/"+hash, "", nil).Expect(t, 200).JSON(t), "mailbox_status")
}

// TestClaimsDomainProof creates, reads and lists a domain claim, fails with reasons a person can
// act on, verifies through a real DNS server, and marks the mailbox claimed.
func TestClaimsDomainProof(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p)
	hash, key := env.CreateObject(t, nil)
	other, otherKey := env.CreateObject(t, nil)

	c := createClaim(t, env, key, hash, "domain", "Example.TEST.")
	if c.Status != "pending" || c.ObjectHash != hash || c.ProofType != "domain" || len(c.Challenge.Token) < 20 ||
		!strings.Contains(c.Challenge.Instructions, "svc-verification="+c.Challenge.Token) {
		t.Fatalf("created claim = %+v", c)
	}
	exp, err := time.Parse(time.RFC3339, c.Challenge.ExpiresAt)
	if err != nil || exp.Sub(time.Now()) < 167*time.Hour || exp.Sub(time.Now()) > 169*time.Hour {
		t.Errorf("challenge expires at %s, want in 7 days", c.Challenge.ExpiresAt)
	}

	// Refusals: another owner's object, unknown proof type, a target of the wrong kind.
	env.Do(t, "POST", "/api/claims", otherKey, map[string]any{"object_hash": hash, "proof_type": "domain", "claimed_target": "example.test"}).
		ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "POST", "/api/claims", key, map[string]any{"object_hash": hash, "proof_type": "fax", "claimed_target": "example.test"}).
		ExpectError(t, 400, "INVALID_KIND")
	for proof, target := range map[string]string{"domain": "https://example.test/", "meta_tag": "example.test", "github": "not a handle", "mastodon": "alice"} {
		env.Do(t, "POST", "/api/claims", key, map[string]any{"object_hash": hash, "proof_type": proof, "claimed_target": target}).Expect(t, 400)
	}
	env.Do(t, "POST", "/api/claims", key, map[string]any{"object_hash": hash, "proof_type": "domain"}).ExpectError(t, 400, "MISSING_FIELD")
	env.Do(t, "GET", "/api/claims/"+c.ID, otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", "/api/claims/"+c.ID+"/verify", otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+hash+"/claims", otherKey, nil).Expect(t, 403)

	if n := stats(t, env)["verified_claims_count"]; n != 0.0 {
		t.Fatalf("verified_claims_count before any verification = %v", n)
	}

	// No record, then a record with another token: failed with the reason, still pending.
	v := verifyClaim(t, env, key, c.ID)
	if v.Status != "failed" || v.ClaimStatus != "pending" || !strings.Contains(reason(v), "no DNS record found") {
		t.Fatalf("verify without a record = %+v %q", v, reason(v))
	}
	d.set("example.test", "v=spf1 -all", "svc-verification=someoneelse")
	v = verifyClaim(t, env, key, c.ID)
	if v.Status != "failed" || !strings.Contains(reason(v), "different token") || !strings.Contains(reason(v), c.Challenge.Token) {
		t.Fatalf("verify with another token = %+v %q", v, reason(v))
	}
	if mailboxStatus(t, env, hash) != "unclaimed" {
		t.Fatal("a failed verification claimed the mailbox")
	}
	// A failed verification does not use the challenge up.
	d.set("example.test", "v=spf1 -all", "svc-verification="+c.Challenge.Token)
	v = verifyClaim(t, env, key, c.ID)
	if v.Status != "verified" || v.ClaimStatus != "verified" || v.VerifiedAt == nil || v.Reason != nil {
		t.Fatalf("verify with the record = %+v %q", v, reason(v))
	}

	var got claimBody
	env.Do(t, "GET", "/api/claims/"+c.ID, key, nil).Expect(t, 200).Decode(t, &got)
	if got.Status != "verified" || got.LastCheckedAt == nil || got.LastCheck == nil || got.LastCheck.Outcome != "match" ||
		got.LastCheck.Evidence == nil || !strings.Contains(*got.LastCheck.Evidence, c.Challenge.Token) {
		t.Fatalf("claim after verification = %+v", got)
	}
	var list struct{ Claims []claimBody }
	env.Do(t, "GET", "/api/objects/"+hash+"/claims", key, nil).Expect(t, 200).Decode(t, &list)
	if len(list.Claims) != 1 || list.Claims[0].ID != c.ID || list.Claims[0].Status != "verified" {
		t.Fatalf("claims of the object = %+v", list.Claims)
	}
	env.Do(t, "GET", "/api/objects/"+other+"/claims", otherKey, nil).Expect(t, 200).Decode(t, &list)
	if len(list.Claims) != 0 {
		t.Fatalf("another object lists %+v", list.Claims)
	}

	env.Eventually(t, func() bool { return mailboxStatus(t, env, hash) == "claimed" }, "the mailbox becomes claimed")
	env.Eventually(t, func() bool { return stats(t, env)["verified_claims_count"] == 1.0 }, "the network stats count the verified claim")
	var dir struct {
		Objects []struct {
			Hash          string `json:"hash"`
			MailboxStatus string `json:"mailbox_status"`
		} `json:"objects"`
	}
	env.Do(t, "GET", "/api/directory?status=verified", "", nil).Expect(t, 200).Decode(t, &dir)
	if len(dir.Objects) != 1 || dir.Objects[0].Hash != hash {
		t.Errorf("directory of verified objects = %+v, want only %s", dir.Objects, hash)
	}
	env.Do(t, "GET", "/api/directory?status=unclaimed", "", nil).Expect(t, 200).Decode(t, &dir)
	if len(dir.Objects) != 1 || dir.Objects[0].Hash != other {
		t.Errorf("directory of unclaimed objects = %+v, want only %s", dir.Objects, other)
	}

	// A DNS server that fails is reported as unreachable, not as a missing record.
	c2 := createClaim(t, env, key, hash, "domain", "down.test")
	d.setFail(true)
	if v := verifyClaim(t, env, key, c2.ID); v.Status != "failed" || !strings.Contains(reason(v), "SERVFAIL") {
		t.Errorf("verify with a failing DNS server = %+v %q", v, reason(v))
	}
}

// TestClaimsPageProofs verifies every page proof against a local HTTPS server (private CA,
// OUTBOUND_ALLOW_PRIVATE), with the reasons of pages that lack or differ from the token.
func TestClaimsPageProofs(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p)
	hash, key := env.CreateObject(t, nil)
	host := strings.TrimPrefix(p.URL, "https://")

	// meta_tag: a page without the tag, a tag added by a script, another token, then the tag.
	page := createClaim(t, env, key, hash, "meta_tag", p.URL+"/about")
	tok := page.Challenge.Token
	if v := verifyClaim(t, env, key, page.ID); v.Status != "failed" || !strings.Contains(reason(v), "not found (HTTP 404)") {
		t.Errorf("verify of a missing page = %+v %q", v, reason(v))
	}
	p.set("/about", `<html><head><script>document.head.innerHTML += '<meta name="svc-verification" content="`+tok+`">'</script></head><body>hi</body></html>`)
	if v := verifyClaim(t, env, key, page.ID); v.Status != "failed" || !strings.Contains(reason(v), "no <meta") {
		t.Errorf("verify of a tag written by a script = %+v %q", v, reason(v))
	}
	p.set("/about", `<html><head><meta name="svc-verification" content="other"></head></html>`)
	if v := verifyClaim(t, env, key, page.ID); v.Status != "failed" || !strings.Contains(reason(v), "different token") {
		t.Errorf("verify of another token = %+v %q", v, reason(v))
	}
	// Lenient HTML: upper-case names, unquoted values, no head or closing tags.
	p.set("/about", `<!doctype html><title>x</title><META NAME=SVC-Verification CONTENT=`+tok+`><p>unclosed`)
	if v := verifyClaim(t, env, key, page.ID); v.Status != "verified" {
		t.Errorf("verify of the tag = %+v %q", v, reason(v))
	}

	// A page over 1 MiB, and a server that is down.
	big := createClaim(t, env, key, hash, "meta_tag", p.URL+"/big")
	p.set("/big", "<html><body>"+strings.Repeat("x", 1<<20)+"</body></html>")
	if v := verifyClaim(t, env, key, big.ID); v.Status != "failed" || !strings.Contains(reason(v), "too large") {
		t.Errorf("verify of a large page = %+v %q", v, reason(v))
	}
	gone := createClaim(t, env, key, hash, "meta_tag", "https://127.0.0.1:1/page")
	if v := verifyClaim(t, env, key, gone.ID); v.Status != "failed" || !strings.Contains(reason(v), "unreachable") {
		t.Errorf("verify of an unreachable page = %+v %q", v, reason(v))
	}

	// website: /.well-known/svc.txt of the site given as a URL.
	site := createClaim(t, env, key, hash, "website", p.URL+"/some/page")
	if !strings.Contains(site.Challenge.Instructions, p.URL+"/.well-known/svc.txt") {
		t.Errorf("website instructions: %s", site.Challenge.Instructions)
	}
	p.set("/.well-known/svc.txt", "# svc\nsvc-verification="+site.Challenge.Token+"\n")
	if v := verifyClaim(t, env, key, site.ID); v.Status != "verified" {
		t.Errorf("verify of the website = %+v %q", v, reason(v))
	}

	// The social profiles: the token in the bio, never in a script.
	for _, s := range []struct{ proof, target, path string }{
		{"github", "https://github.com/Octo-Cat", "/github/octo-cat"},
		{"x", "@jack_x", "/x/jack_x"},
		{"linkedin", "https://www.linkedin.com/in/jane-doe/", "/in/jane-doe"},
		{"reddit", "u/Some_One", "/user/some_one"},
		{"mastodon", "@alice@" + host, "/@alice"},
	} {
		c := createClaim(t, env, key, hash, s.proof, s.target)
		if s.proof == "mastodon" {
			p.set(webfingerPath, webfinger("alice", host))
		}
		p.set(s.path, `<html><body><script>var bio = "`+c.Challenge.Token+`"</script><div class="bio">hello</div></body></html>`)
		if v := verifyClaim(t, env, key, c.ID); v.Status != "failed" || !strings.Contains(reason(v), "not on the") {
			t.Errorf("%s: verify with the token only in a script = %+v %q", s.proof, v, reason(v))
		}
		p.set(s.path, `<html><body><div class="bio"><p>Building things. `+c.Challenge.Token+`</p></div></body></html>`)
		if v := verifyClaim(t, env, key, c.ID); v.Status != "verified" {
			t.Errorf("%s: verify with the token in the bio = %+v %q", s.proof, v, reason(v))
		}
	}

	// Mastodon by a rel="me" link to the object's page, written as browsers accept it.
	m := createClaim(t, env, key, hash, "mastodon", p.URL+"/@bob")
	p.set(webfingerPath, webfinger("bob", host))
	p.set("/@bob", `<html><body><a REL="nofollow noopener  Me" href="`+env.URL+"/"+hash+`/">my svc</a></body></html>`)
	if v := verifyClaim(t, env, key, m.ID); v.Status != "verified" || v.Evidence == nil || !strings.Contains(*v.Evidence, "rel=\"me\"") {
		t.Errorf("verify by a rel=me link = %+v %q", v, reason(v))
	}
}

// TestClaimsChallengeExpiry: a pending claim can no longer be verified once its challenge expired.
func TestClaimsChallengeExpiry(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p, WithEnv("CLAIMS_CHALLENGE_TTL", "2s"))
	hash, key := env.CreateObject(t, nil)
	c := createClaim(t, env, key, hash, "domain", "late.test")
	if v := verifyClaim(t, env, key, c.ID); v.Status != "failed" || v.ClaimStatus != "pending" {
		t.Fatalf("verify before expiry = %+v", v)
	}
	time.Sleep(2 * time.Second)
	d.set("late.test", "svc-verification="+c.Challenge.Token)
	v := verifyClaim(t, env, key, c.ID)
	if v.Status != "failed" || v.ClaimStatus != "expired" || !strings.Contains(reason(v), "expired") {
		t.Fatalf("verify after expiry = %+v %q", v, reason(v))
	}
	var got claimBody
	env.Do(t, "GET", "/api/claims/"+c.ID, key, nil).Expect(t, 200).Decode(t, &got)
	if got.Status != "expired" {
		t.Errorf("claim after expiry = %+v", got)
	}
	if mailboxStatus(t, env, hash) != "unclaimed" {
		t.Error("an expired claim claimed the mailbox")
	}
}

// TestClaimsRefusePrivateAddresses runs without OUTBOUND_ALLOW_PRIVATE: a claim page whose name
// resolves to loopback, or that redirects to a private or metadata address, is never fetched.
func TestClaimsRefusePrivateAddresses(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	port := p.URL[strings.LastIndex(p.URL, ":"):]
	env := Start(t, WithEnv("CLAIMS_DNS_RESOLVER", d.Addr), WithEnv("OUTBOUND_CA_FILE", p.CAFile))
	hash, key := env.CreateObject(t, nil)
	for _, target := range []string{"https://localhost" + port + "/page", "https://127.0.0.1" + port + "/page", "https://169.254.169.254/latest/meta-data/"} {
		c := createClaim(t, env, key, hash, "meta_tag", target)
		if v := verifyClaim(t, env, key, c.ID); v.Status != "failed" || !strings.Contains(reason(v), "private or local network address") {
			t.Errorf("%s: verify = %+v %q", target, v, reason(v))
		}
	}
	if n := p.hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}

	// With loopback allowed (a test-only setting), a redirect to a private address is still refused.
	env = claimsEnv(t, d, p)
	hash, key = env.CreateObject(t, nil)
	p.set("/meta", "redirect:http://169.254.169.254/latest/meta-data/")
	c := createClaim(t, env, key, hash, "meta_tag", p.URL+"/meta")
	if v := verifyClaim(t, env, key, c.ID); v.Status != "failed" || !strings.Contains(reason(v), "private or local network address") {
		t.Errorf("verify of a page redirecting to the metadata address = %+v %q", v, reason(v))
	}
	if p.hits.Load() != 1 {
		t.Errorf("the page server was hit %d times, want once (the redirect)", p.hits.Load())
	}
}

// TestClaimsRecheckOnDemand: re-checking a verified claim never holds an unreachable target
// against it; three mismatches in a row lapse it and the mailbox goes back to unclaimed unless
// another verified claim remains.
func TestClaimsRecheckOnDemand(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p)
	hash, key := env.CreateObject(t, nil)
	dom := createClaim(t, env, key, hash, "domain", "mine.test")
	d.set("mine.test", "svc-verification="+dom.Challenge.Token)
	site := createClaim(t, env, key, hash, "meta_tag", p.URL+"/home")
	p.set("/home", `<meta name="svc-verification" content="`+site.Challenge.Token+`">`)
	for _, id := range []string{dom.ID, site.ID} {
		if v := verifyClaim(t, env, key, id); v.Status != "verified" {
			t.Fatalf("verify %s = %+v %q", id, v, reason(v))
		}
	}
	env.Eventually(t, func() bool { return mailboxStatus(t, env, hash) == "claimed" }, "the mailbox becomes claimed")

	// The page server down many times, then two mismatches, a match, two more: still verified.
	p.down.Store(true)
	for range 4 {
		if v := verifyClaim(t, env, key, site.ID); v.Status != "failed" || v.ClaimStatus != "verified" || !strings.Contains(reason(v), "unreachable") {
			t.Fatalf("re-check of an unreachable page = %+v %q", v, reason(v))
		}
	}
	p.down.Store(false)
	p.set("/home", `<p>moved</p>`)
	for range 2 {
		verifyClaim(t, env, key, site.ID)
	}
	p.set("/home", `<meta name="svc-verification" content="`+site.Challenge.Token+`">`)
	verifyClaim(t, env, key, site.ID)
	p.set("/home", `<p>moved</p>`)
	for range 2 {
		if v := verifyClaim(t, env, key, site.ID); v.ClaimStatus != "verified" {
			t.Fatalf("claim after two mismatches in a row = %+v", v)
		}
	}
	p.down.Store(true)
	verifyClaim(t, env, key, site.ID)
	p.down.Store(false)
	v := verifyClaim(t, env, key, site.ID)
	if v.Status != "failed" || v.ClaimStatus != "lapsed" || !strings.Contains(reason(v), "no <meta") {
		t.Fatalf("third mismatch in a row = %+v %q", v, reason(v))
	}
	var got claimBody
	env.Do(t, "GET", "/api/claims/"+site.ID, key, nil).Expect(t, 200).Decode(t, &got)
	if got.Status != "lapsed" || got.LastCheck == nil || got.LastCheck.Outcome != "mismatch" || got.LastCheck.Reason == nil {
		t.Fatalf("lapsed claim = %+v", got)
	}
	// The domain claim is still verified: the mailbox stays claimed.
	time.Sleep(time.Second)
	if s := mailboxStatus(t, env, hash); s != "claimed" {
		t.Fatalf("mailbox after a lapse with another verified claim = %s", s)
	}

	// The domain's record goes away: three mismatches lapse it and the mailbox is unclaimed.
	d.set("mine.test")
	for range 3 {
		verifyClaim(t, env, key, dom.ID)
	}
	env.Do(t, "GET", "/api/claims/"+dom.ID, key, nil).Expect(t, 200).Decode(t, &got)
	if got.Status != "lapsed" {
		t.Fatalf("domain claim after three mismatches = %+v", got)
	}
	env.Eventually(t, func() bool { return mailboxStatus(t, env, hash) == "unclaimed" }, "the mailbox becomes unclaimed")
	env.Eventually(t, func() bool { return stats(t, env)["verified_claims_count"] == 0.0 }, "the network stats forget the lapsed claims")

	// A proof that comes back verifies the lapsed claim again.
	d.set("mine.test", "svc-verification="+dom.Challenge.Token)
	if v := verifyClaim(t, env, key, dom.ID); v.ClaimStatus != "verified" {
		t.Fatalf("verify of a restored proof = %+v", v)
	}
	env.Eventually(t, func() bool { return mailboxStatus(t, env, hash) == "claimed" }, "the mailbox is claimed again")
	env.Eventually(t, func() bool { return stats(t, env)["verified_claims_count"] == 1.0 }, "the network stats count the claim verified again")
}

// TestClaimsRecheckOnSchedule runs the scheduled re-check every second on two replicas of
// claims-svc: an unreachable page never lapses a claim, a missing proof does after three periods,
// and each period checks a claim once, not once per replica.
func TestClaimsRecheckOnSchedule(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p, WithEnv("CLAIMS_RECHECK_INTERVAL", "1s"), WithEnv("CLAIMS_RECHECK_SCAN", "100ms"),
		WithReplicas("claims-svc", 2))
	hash, key := env.CreateObject(t, nil)
	c := createClaim(t, env, key, hash, "meta_tag", p.URL+"/p")
	p.set("/p", `<meta name="svc-verification" content="`+c.Challenge.Token+`">`)
	if v := verifyClaim(t, env, key, c.ID); v.Status != "verified" {
		t.Fatalf("verify = %+v", v)
	}
	env.Eventually(t, func() bool { return mailboxStatus(t, env, hash) == "claimed" }, "the mailbox becomes claimed")

	p.down.Store(true)
	start, began := p.hits.Load(), time.Now()
	var got claimBody
	env.Eventually(t, func() bool {
		got = claimBody{}
		env.Do(t, "GET", "/api/claims/"+c.ID, key, nil).Expect(t, 200).Decode(t, &got)
		if got.Status != "verified" {
			t.Fatalf("a scheduled check of a down page changed the claim: %+v", got)
		}
		return got.LastCheck != nil && got.LastCheck.Outcome == "unreachable" && p.hits.Load()-start >= 3
	}, "three scheduled checks of the down page, the last one unreachable")
	// One check per period, whatever the number of replicas: never more than the periods passed
	// (and one in flight at each end).
	if n, periods := p.hits.Load()-start, int64(time.Since(began)/time.Second); n > periods+2 {
		t.Errorf("%d scheduled checks in %d one-second periods on two replicas", n, periods)
	}

	p.down.Store(false)
	p.set("/p", "<p>gone</p>")
	env.Eventually(t, func() bool {
		env.Do(t, "GET", "/api/claims/"+c.ID, key, nil).Expect(t, 200).Decode(t, &got)
		return got.Status == "lapsed"
	}, "the claim lapses after three scheduled mismatches")
	env.Eventually(t, func() bool { return mailboxStatus(t, env, hash) == "unclaimed" }, "the mailbox becomes unclaimed")
}

// TestClaimsFreeCustomHash: a verified github, x, linkedin or reddit claim of the same handle
// makes a custom hash free; other handles, other proof types and pending claims pay (402). A
// claim that lapses later does not take the hash back.
func TestClaimsFreeCustomHash(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p)
	customHash := func(key, username string) *Response {
		return env.Do(t, "POST", "/api/objects/claim-custom-hash", key, map[string]any{"username": username})
	}

	// A verified domain claim named like the username, and a pending x claim: not free.
	h1, k1 := env.CreateObject(t, nil)
	dom := createClaim(t, env, k1, h1, "domain", "octocat.test")
	d.set("octocat.test", "svc-verification="+dom.Challenge.Token)
	if v := verifyClaim(t, env, k1, dom.ID); v.Status != "verified" {
		t.Fatalf("verify the domain claim = %+v %q", v, reason(v))
	}
	createClaim(t, env, k1, h1, "x", "https://twitter.com/octocat")
	customHash(k1, "octocat").ExpectError(t, 402, "PAYMENT_REQUIRED")

	// A verified x claim: free for its handle only.
	hash, key := env.CreateObject(t, nil)
	x := createClaim(t, env, key, hash, "x", "https://twitter.com/Octo_Cat")
	p.set("/x/octo_cat", "<html><body><p>"+x.Challenge.Token+"</p></body></html>")
	if v := verifyClaim(t, env, key, x.ID); v.Status != "verified" {
		t.Fatalf("verify the x claim = %+v %q", v, reason(v))
	}
	// identity-svc's mailbox update and its hash change both rewrite the object document; wait
	// for the first before the second, as a client would see it.
	env.Eventually(t, func() bool { return mailboxStatus(t, env, hash) == "claimed" }, "the mailbox becomes claimed")
	customHash(key, "someone_else").ExpectError(t, 402, "PAYMENT_REQUIRED")
	r := customHash(key, "octo_cat").Expect(t, 200).JSON(t)
	if r["paid"] != false || r["hash"] != "svc_octo_cat" || r["previous_hash"] != hash {
		t.Fatalf("custom hash with a matching x claim answered %v", r)
	}

	// The proof goes away and the claim lapses: the mailbox is unclaimed, the hash stays.
	p.set("/x/octo_cat", "<html><body><p>no token</p></body></html>")
	for range 3 {
		verifyClaim(t, env, key, x.ID)
	}
	var got claimBody
	env.Do(t, "GET", "/api/claims/"+x.ID, key, nil).Expect(t, 200).Decode(t, &got)
	if got.Status != "lapsed" {
		t.Fatalf("x claim after three mismatches = %+v", got)
	}
	env.Eventually(t, func() bool { return mailboxStatus(t, env, "svc_octo_cat") == "unclaimed" }, "the mailbox becomes unclaimed")
	if h := Str(t, env.Do(t, "GET", "/api/objects/svc_octo_cat", "", nil).Expect(t, 200).JSON(t), "hash"); h != "svc_octo_cat" {
		t.Errorf("after the lapse the object's hash is %s", h)
	}

	// A verified reddit claim is free for its handle.
	h3, k3 := env.CreateObject(t, nil)
	rd := createClaim(t, env, k3, h3, "reddit", "https://www.reddit.com/user/Grace_H/")
	p.set("/user/grace_h", "<html><body><p>"+rd.Challenge.Token+"</p></body></html>")
	if v := verifyClaim(t, env, k3, rd.ID); v.Status != "verified" {
		t.Fatalf("verify the reddit claim = %+v %q", v, reason(v))
	}
	env.Eventually(t, func() bool { return mailboxStatus(t, env, h3) == "claimed" }, "the mailbox becomes claimed")
	if r := customHash(k3, "grace_h").Expect(t, 200).JSON(t); r["paid"] != false {
		t.Fatalf("custom hash with a matching reddit claim answered %v", r)
	}
}

// TestTrustSelfHostedHandleNeverFreesAName: a Mastodon claim on a host the claimant runs (here a
// local HTTPS server that answers WebFinger and shows the token) verifies as user@host, but never
// makes svc_<user> free: 402, also after the claim is verified and counted.
func TestTrustSelfHostedHandleNeverFreesAName(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p)
	host := strings.TrimPrefix(p.URL, "https://")
	hash, key := env.CreateObject(t, nil)

	m := createClaim(t, env, key, hash, "mastodon", "@OpenAI@"+host)
	if m.ClaimedTarget != "@OpenAI@"+host || !strings.Contains(m.Challenge.Instructions, "@openai@"+host) {
		t.Fatalf("created claim = %+v", m)
	}
	// The profile alone is not enough: the host must answer WebFinger for the account.
	p.set("/@openai", "<html><body><p>"+m.Challenge.Token+"</p></body></html>")
	if v := verifyClaim(t, env, key, m.ID); v.Status != "failed" || !strings.Contains(reason(v), "WebFinger") {
		t.Fatalf("verify without WebFinger = %+v %q", v, reason(v))
	}
	p.set(webfingerPath, webfinger("someone_else", host))
	if v := verifyClaim(t, env, key, m.ID); v.Status != "failed" || !strings.Contains(reason(v), "not about acct:openai@"+host) {
		t.Fatalf("verify with WebFinger about another account = %+v %q", v, reason(v))
	}
	p.set(webfingerPath, webfinger("openai", host))
	v := verifyClaim(t, env, key, m.ID)
	if v.Status != "verified" {
		t.Fatalf("verify on the self-hosted instance = %+v %q", v, reason(v))
	}
	env.Eventually(t, func() bool { return mailboxStatus(t, env, hash) == "claimed" }, "the mailbox becomes claimed")
	env.Do(t, "POST", "/api/objects/claim-custom-hash", key, map[string]any{"username": "openai"}).ExpectError(t, 402, "PAYMENT_REQUIRED")

	// The profile-URL form names the same user@host: still not free.
	m2 := createClaim(t, env, key, hash, "mastodon", p.URL+"/@openai")
	p.set("/@openai", "<html><body><p>"+m.Challenge.Token+" "+m2.Challenge.Token+"</p></body></html>")
	if v := verifyClaim(t, env, key, m2.ID); v.Status != "verified" {
		t.Fatalf("verify by profile URL = %+v %q", v, reason(v))
	}
	time.Sleep(500 * time.Millisecond) // let identity-svc consume the second claim.verified
	env.Do(t, "POST", "/api/objects/claim-custom-hash", key, map[string]any{"username": "openai"}).ExpectError(t, 402, "PAYMENT_REQUIRED")
	if h := Str(t, env.Do(t, "GET", "/api/objects/"+hash, "", nil).Expect(t, 200).JSON(t), "hash"); h != hash {
		t.Errorf("the object's hash became %s", h)
	}
}

// TestClaimsUnknownTarget: a claim on a hash no object has is 404, on a string that is no hash
// 400 (claims-svc once answered 503 with Retry-After, inviting a retry that could never succeed).
func TestClaimsUnknownTarget(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p)
	_, key := env.CreateObject(t, nil)
	env.Do(t, "POST", "/api/claims", key, map[string]any{"object_hash": "svc_nobody_here", "proof_type": "domain", "claimed_target": "a.test"}).
		ExpectError(t, 404, "NOT_FOUND")
	for _, bad := range []any{"nobody", "svc_", "svc_../../x", 42} {
		r := env.Do(t, "POST", "/api/claims", key, map[string]any{"object_hash": bad, "proof_type": "domain", "claimed_target": "a.test"})
		if r.Status != 400 {
			t.Errorf("object_hash %v: %d %s, want 400", bad, r.Status, r.Body)
		}
	}
}

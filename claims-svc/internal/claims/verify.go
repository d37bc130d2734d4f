package claims

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/svcdev/svc/claims-svc/internal/store"
	"github.com/svcdev/svc/pkg/outbound"
)

// Result is what one check of a proof saw: Outcome is store.Match, store.Mismatch (the proof is
// missing or differs) or store.Unreachable (nothing could be read: never held against a claim).
type Result struct {
	Outcome  string
	Reason   string
	Evidence string
}

func match(evidence string) Result { return Result{Outcome: store.Match, Evidence: evidence} }

func mismatch(format string, args ...any) Result {
	return Result{Outcome: store.Mismatch, Reason: fmt.Sprintf(format, args...)}
}

func unreachable(format string, args ...any) Result {
	return Result{Outcome: store.Unreachable, Reason: fmt.Sprintf(format, args...)}
}

// Verifier looks at proofs: DNS TXT records through Resolver, pages through the SSRF-guarded
// Pages client.
type Verifier struct {
	// Resolver is the DNS server asked for TXT records (host:port).
	Resolver string
	Pages    *outbound.Client
	// Profiles are the base URLs of the github, x, linkedin and reddit profile pages (a handle is
	// appended); MastodonScheme is the scheme of Mastodon instances (https).
	Profiles       map[string]string
	MastodonScheme string
	// BaseURL is the suite's public address: a Mastodon rel="me" link to BaseURL/<hash> proves
	// the object's claim.
	BaseURL string
}

// Check looks at the proof of claim c once.
func (v *Verifier) Check(ctx context.Context, c *store.Claim) Result {
	switch c.ProofType {
	case Domain:
		return v.checkDNS(ctx, c.Subject, c.Token)
	case Website:
		return v.checkWellKnown(ctx, c.Subject, c.Token)
	case MetaTag:
		return v.checkPage(ctx, c.Subject, func(body []byte) Result { return findMeta(body, c.Token) })
	case Mastodon:
		return v.checkMastodon(ctx, c)
	default: // github, x, linkedin, reddit
		u := strings.TrimRight(v.Profiles[c.ProofType], "/") + "/" + c.Subject
		return v.checkPage(ctx, u, func(body []byte) Result { return findOnProfile(body, c.Token, nil) })
	}
}

// checkDNS reads the TXT records of domain.
func (v *Verifier) checkDNS(ctx context.Context, domain, token string) Result {
	want := TokenPrefix + token
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(domain), dns.TypeTXT)
	m.SetEdns0(4096, false)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	in, _, err := (&dns.Client{Net: "udp"}).ExchangeContext(ctx, m, v.Resolver)
	if err == nil && in.Truncated {
		in, _, err = (&dns.Client{Net: "tcp"}).ExchangeContext(ctx, m, v.Resolver)
	}
	if err != nil {
		return unreachable("the DNS lookup of %s failed (%s): try again later", domain, shortError(err))
	}
	switch in.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		return mismatch("no DNS record found: %s does not exist; add a TXT record %s on it", domain, want)
	default:
		return unreachable("the DNS server answered %s for %s: try again later", dns.RcodeToString[in.Rcode], domain)
	}
	var others []string
	for _, rr := range in.Answer {
		txt, ok := rr.(*dns.TXT)
		if !ok {
			continue
		}
		value := strings.TrimSpace(strings.Join(txt.Txt, ""))
		if value == want {
			return match("TXT " + value)
		}
		if strings.HasPrefix(value, TokenPrefix) {
			others = append(others, value)
		}
	}
	if len(others) > 0 {
		return mismatch("the TXT record on %s holds a different token (%s): set it to %s", domain, others[0], want)
	}
	return mismatch("no DNS record found: %s has no TXT record %s; add it (DNS changes can take a while to appear)", domain, want)
}

// checkWellKnown reads the website proof file.
func (v *Verifier) checkWellKnown(ctx context.Context, u, token string) Result {
	return v.checkPage(ctx, u, func(body []byte) Result {
		for _, line := range strings.Split(string(body), "\n") {
			line = strings.TrimSpace(line)
			if line == token || line == TokenPrefix+token {
				return match(u + ": " + line)
			}
		}
		return mismatch("%s does not contain the token: put %s on a line of its own", u, token)
	})
}

// checkPage fetches u and hands a successful body to look.
func (v *Verifier) checkPage(ctx context.Context, u string, look func([]byte) Result) Result {
	resp, err := v.Pages.Get(ctx, u)
	var refused *outbound.RefusedError
	switch {
	case errors.Is(err, outbound.ErrTooLarge):
		return mismatch("the page %s is too large: proofs are read from at most 1 MiB of HTML", u)
	case errors.As(err, &refused) && refused.Reason == "port":
		return mismatch("the page %s may not be fetched: it is, or redirects to, a port other than those of http and https", u)
	case errors.Is(err, outbound.ErrRefused):
		return mismatch("the page %s may not be fetched: it is, or redirects to, a private or local network address", u)
	case err != nil:
		return unreachable("the page %s is unreachable (%s): try again later", u, shortError(err))
	}
	switch {
	case resp.Status == http.StatusNotFound || resp.Status == http.StatusGone:
		return mismatch("the page %s was not found (HTTP %d): check the address, or publish the page", u, resp.Status)
	case resp.Status == http.StatusTooManyRequests || resp.Status >= 500:
		return unreachable("the page %s is unreachable (HTTP %d): try again later", u, resp.Status)
	case resp.Status < 200 || resp.Status > 299:
		return mismatch("the page %s answered HTTP %d instead of the public page: make it public", u, resp.Status)
	}
	return look(resp.Body)
}

// shortError names a failure without internal detail.
func shortError(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "the host name does not resolve"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	}
	return "the connection failed"
}

package claims

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/svcdev/svc/claims-svc/internal/store"
)

// jrd is the part of a WebFinger answer (RFC 7033) that names an account's actor.
type jrd struct {
	Subject string   `json:"subject"`
	Aliases []string `json:"aliases"`
	Links   []struct {
		Rel  string `json:"rel"`
		Type string `json:"type"`
		Href string `json:"href"`
	} `json:"links"`
}

// checkMastodon confirms that the instance really serves the account user@host — its WebFinger
// answer for acct:user@host names that account and links its actor (rel="self") on the same
// host — and then looks for the token, or a rel="me" link to the object's page, on the profile.
// Without the WebFinger step any HTTPS host could stand in for an instance and "verify" any
// handle; with it, the claim still proves only user@host, never a bare username.
func (v *Verifier) checkMastodon(ctx context.Context, c *store.Claim) Result {
	user := mastodonUser(c.Subject)
	acct := "acct:" + user + "@" + c.Host
	wf := v.MastodonScheme + "://" + c.Host + "/.well-known/webfinger?resource=" + url.QueryEscape(acct)
	r := v.checkPage(ctx, wf, func(body []byte) Result { return webfingerSelf(body, acct, c.Host) })
	if r.Outcome != store.Match {
		r.Reason = "the instance must answer WebFinger for " + acct + ": " + r.Reason
		return r
	}
	profile := v.MastodonScheme + "://" + c.Host + "/@" + user
	links := []string{strings.TrimRight(v.BaseURL, "/") + "/" + c.ObjectHash}
	return v.checkPage(ctx, profile, func(body []byte) Result { return findOnProfile(body, c.Token, links) })
}

// webfingerSelf checks that a WebFinger answer is about acct and links its actor on host.
func webfingerSelf(body []byte, acct, host string) Result {
	var d jrd
	if err := json.Unmarshal(body, &d); err != nil {
		return mismatch("the instance's WebFinger answer for %s is not JSON: is %s a Mastodon instance?", acct, host)
	}
	named := func(name string) bool { return strings.EqualFold(name, acct) }
	if !named(d.Subject) && !slices.ContainsFunc(d.Aliases, named) {
		return mismatch("the instance's WebFinger answer is not about %s", acct)
	}
	for _, l := range d.Links {
		u, err := url.Parse(l.Href)
		if l.Rel == "self" && err == nil && strings.EqualFold(u.Host, host) && (u.Scheme == "https" || u.Scheme == "http") {
			return match("WebFinger " + acct + " → " + l.Href)
		}
	}
	return mismatch("the instance's WebFinger answer for %s links no actor (rel=\"self\") on %s", acct, host)
}

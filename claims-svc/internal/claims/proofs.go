package claims

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strings"

	"github.com/svcdev/svc/pkg/apierr"
)

// Proof types.
const (
	Domain   = "domain"
	MetaTag  = "meta_tag"
	Website  = "website"
	GitHub   = "github"
	X        = "x"
	LinkedIn = "linkedin"
	Reddit   = "reddit"
	Mastodon = "mastodon"
)

// ProofTypes are the supported proof types.
var ProofTypes = []string{Domain, MetaTag, Website, GitHub, X, LinkedIn, Reddit, Mastodon}

// Which verified claims make a custom hash free is identity-svc's rule (it decides from the
// claim.verified events it receives): only the networks with one global namespace on fixed hosts
// (github, x, linkedin, reddit). A Mastodon handle is only unique together with its host, so its
// subject is the whole user@host and never a bare username.

// TokenPrefix starts a DNS TXT proof; MetaName names the meta tag of a page proof; WellKnown is
// the path of a website proof.
const (
	TokenPrefix = "svc-verification="
	MetaName    = "svc-verification"
	WellKnown   = "/.well-known/svc.txt"
)

var (
	hostLabel  = `[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?`
	domainRe   = regexp.MustCompile(`^(` + hostLabel + `\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$`)
	hostPortRe = regexp.MustCompile(`^(` + hostLabel + `)(\.` + hostLabel + `)*(:[0-9]{1,5})?$`)
	handleRes  = map[string]*regexp.Regexp{
		GitHub:   regexp.MustCompile(`^[A-Za-z0-9](-?[A-Za-z0-9]){0,38}$`),
		X:        regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`),
		LinkedIn: regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{2,99}$`),
		Reddit:   regexp.MustCompile(`^[A-Za-z0-9_-]{3,20}$`),
		Mastodon: regexp.MustCompile(`^[A-Za-z0-9_]{1,30}$`),
	}
	// profileHosts are the hosts whose profile URLs name a handle (path prefix before it).
	profileHosts = map[string]map[string]string{
		GitHub:   {"github.com": "/", "www.github.com": "/"},
		X:        {"x.com": "/", "www.x.com": "/", "twitter.com": "/", "www.twitter.com": "/"},
		LinkedIn: {"linkedin.com": "/in/", "www.linkedin.com": "/in/"},
		Reddit:   {"reddit.com": "/user/", "www.reddit.com": "/user/", "old.reddit.com": "/user/"},
	}
)

// target is a claimed target as checked: Subject is the domain, page URL or handle (user@host
// for Mastodon); Host is a Mastodon instance.
type target struct {
	Subject string
	Host    string
}

// parseTarget checks that raw is a target of proofType and normalizes it.
func parseTarget(proofType, raw string) (target, error) {
	raw = strings.TrimSpace(raw)
	switch proofType {
	case Domain:
		d := strings.TrimSuffix(strings.ToLower(raw), ".")
		if !domainRe.MatchString(d) || len(d) > 253 {
			return target{}, apierr.BadRequest(apierr.CodeInvalidRequest, "claimed_target of a domain proof must be a domain name such as example.com")
		}
		return target{Subject: d}, nil
	case MetaTag:
		u, err := pageURL(raw)
		if err != nil {
			return target{}, err
		}
		return target{Subject: u.String()}, nil
	case Website:
		if !strings.Contains(raw, "://") {
			raw = "https://" + raw
		}
		u, err := pageURL(raw)
		if err != nil {
			return target{}, err
		}
		return target{Subject: u.Scheme + "://" + u.Host + WellKnown}, nil
	case Mastodon:
		return mastodonTarget(raw)
	case GitHub, X, LinkedIn, Reddit:
		return socialTarget(proofType, raw)
	}
	return target{}, apierr.BadRequest(apierr.CodeInvalidKind, "proof_type must be one of %s", strings.Join(ProofTypes, ", "))
}

// pageURL accepts an absolute http(s) URL without credentials.
func pageURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		!hostPortRe.MatchString(strings.ToLower(u.Host)) && !isIPHost(u.Hostname()) {
		return nil, apierr.BadRequest(apierr.CodeInvalidURL, "claimed_target must be an http or https URL such as https://example.com/")
	}
	u.Fragment = ""
	return u, nil
}

func isIPHost(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}

// socialTarget reads a handle from "name", "@name" or a profile URL of the network.
func socialTarget(network, raw string) (target, error) {
	if network == Reddit { // reddit writes its users u/name
		raw = strings.TrimPrefix(strings.TrimPrefix(raw, "/"), "u/")
	}
	handle := strings.TrimPrefix(raw, "@")
	if strings.Contains(raw, "/") {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" && !strings.Contains(raw, "://") {
			u, err = url.Parse("https://" + raw)
		}
		prefix, ok := "", false
		if err == nil {
			prefix, ok = profileHosts[network][strings.ToLower(u.Hostname())]
		}
		if !ok || !strings.HasPrefix(u.Path, prefix) {
			return target{}, badHandle(network)
		}
		handle = strings.TrimPrefix(strings.Trim(strings.TrimPrefix(u.Path, prefix), "/"), "@")
	}
	if !handleRes[network].MatchString(handle) {
		return target{}, badHandle(network)
	}
	return target{Subject: strings.ToLower(handle)}, nil
}

// mastodonTarget reads "@name@instance", "name@instance" or "https://instance/@name".
func mastodonTarget(raw string) (target, error) {
	var user, host string
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.User != nil {
			return target{}, badHandle(Mastodon)
		}
		user, host = strings.TrimPrefix(strings.Trim(u.Path, "/"), "@"), u.Host
	} else {
		parts := strings.Split(strings.TrimPrefix(raw, "@"), "@")
		if len(parts) != 2 {
			return target{}, badHandle(Mastodon)
		}
		user, host = parts[0], parts[1]
	}
	host = strings.ToLower(host)
	if !handleRes[Mastodon].MatchString(user) || !hostPortRe.MatchString(host) {
		return target{}, badHandle(Mastodon)
	}
	return target{Subject: strings.ToLower(user) + "@" + host, Host: host}, nil
}

// mastodonUser is the user part of a Mastodon claim's subject (user@host; claims stored before
// subjects carried the host hold the user alone).
func mastodonUser(subject string) string {
	user, _, _ := strings.Cut(subject, "@")
	return user
}

func badHandle(network string) error {
	examples := map[string]string{
		GitHub: "octocat or https://github.com/octocat", X: "@jack or https://x.com/jack",
		LinkedIn: "jane-doe or https://www.linkedin.com/in/jane-doe", Reddit: "u/spez or https://www.reddit.com/user/spez",
		Mastodon: "@alice@mastodon.social or https://mastodon.social/@alice",
	}
	return apierr.BadRequest(apierr.CodeInvalidRequest, "claimed_target of a %s proof must be a handle such as %s", network, examples[network])
}

// instructions tells the owner where to put the token.
func instructions(proofType string, t target, token string) string {
	switch proofType {
	case Domain:
		return fmt.Sprintf("Add a DNS TXT record on %s with the value %s%s, then call verify.", t.Subject, TokenPrefix, token)
	case MetaTag:
		return fmt.Sprintf(`Add <meta name="%s" content="%s"> to the page %s (in the HTML the server sends, not added by a script), then call verify.`, MetaName, token, t.Subject)
	case Website:
		return fmt.Sprintf("Serve a text file at %s containing %s, then call verify.", t.Subject, token)
	case Mastodon:
		return fmt.Sprintf("Put %s in the bio or a profile field of @%s@%s (the instance must answer WebFinger for it), or link this object's page from a profile field (a rel=\"me\" link), then call verify.", token, mastodonUser(t.Subject), t.Host)
	}
	return fmt.Sprintf("Put %s in the public bio of the %s profile %s, then call verify.", token, proofType, t.Subject)
}

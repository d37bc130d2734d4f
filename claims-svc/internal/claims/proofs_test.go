package claims

import (
	"strings"
	"testing"

	"github.com/svcdev/svc/claims-svc/internal/store"
)

func TestParseTarget(t *testing.T) {
	ok := []struct{ proof, in, subject, host string }{
		{Domain, "Example.COM.", "example.com", ""},
		{MetaTag, "https://example.com/about#me", "https://example.com/about", ""},
		{Website, "example.com", "https://example.com/.well-known/svc.txt", ""},
		{Website, "http://example.com:8080/a/b?c", "http://example.com:8080/.well-known/svc.txt", ""},
		{GitHub, "https://github.com/Octo-Cat/", "octo-cat", ""},
		{GitHub, "@octocat", "octocat", ""},
		{X, "twitter.com/jack_x", "jack_x", ""},
		{LinkedIn, "https://www.linkedin.com/in/jane-doe", "jane-doe", ""},
		{Reddit, "u/Spez", "spez", ""},
		{Reddit, "https://www.reddit.com/user/some-one/", "some-one", ""},
		{Mastodon, "@Alice@Mastodon.social", "alice@mastodon.social", "mastodon.social"},
		{Mastodon, "https://hachyderm.io/@bob", "bob@hachyderm.io", "hachyderm.io"},
	}
	for _, c := range ok {
		got, err := parseTarget(c.proof, c.in)
		if err != nil || got.Subject != c.subject || got.Host != c.host {
			t.Errorf("parseTarget(%s, %q) = %+v, %v; want %s %s", c.proof, c.in, got, err, c.subject, c.host)
		}
	}
	bad := []struct{ proof, in string }{
		{Domain, "https://example.com"}, {Domain, "localhost"}, {Domain, "127.0.0.1"}, {Domain, "ex ample.com"},
		{MetaTag, "example.com"}, {MetaTag, "ftp://example.com/"}, {MetaTag, "https://user:pw@example.com/"},
		{GitHub, "https://gitlab.com/octocat"}, {GitHub, "octo_cat"}, {X, "way_too_long_handle_here"},
		{LinkedIn, "https://www.linkedin.com/company/acme"}, {Mastodon, "alice"}, {Mastodon, "@alice@"},
		{Reddit, "https://www.reddit.com/r/golang"}, {Reddit, "ab"},
		{"fax", "anything"},
	}
	for _, c := range bad {
		if got, err := parseTarget(c.proof, c.in); err == nil {
			t.Errorf("parseTarget(%s, %q) = %+v, want an error", c.proof, c.in, got)
		}
	}
}

func TestFindMetaIsLenientAndIgnoresScripts(t *testing.T) {
	cases := []struct {
		page, outcome, reason string
	}{
		{`<meta name="svc-verification" content="tok">`, store.Match, ""},
		{`<HTML><HEAD><META Name=SVC-VERIFICATION Content=" tok "><BODY><p>unclosed`, store.Match, ""},
		{`<body><div><meta name="svc-verification" content="tok"></div>`, store.Match, ""},
		{`<meta name="svc-verification" content="other"><meta name="svc-verification" content="tok">`, store.Match, ""},
		{`<meta name="svc-verification" content="other">`, store.Mismatch, "different token"},
		{`<script>document.write('<meta name="svc-verification" content="tok">')</script>`, store.Mismatch, "no <meta"},
		{`<!-- <meta name="svc-verification" content="tok"> -->`, store.Mismatch, "no <meta"},
		{"", store.Mismatch, "no <meta"},
	}
	for _, c := range cases {
		r := findMeta([]byte(c.page), "tok")
		if r.Outcome != c.outcome || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("findMeta(%q) = %+v, want %s (%s)", c.page, r, c.outcome, c.reason)
		}
	}
}

func TestFindOnProfile(t *testing.T) {
	links := []string{"https://svc.example.com/svc_ada"}
	cases := []struct {
		page, outcome string
	}{
		{`<p class="bio">I am tok-ada</p>`, store.Match},
		{`<a href="https://example.com/?v=tok">site</a>`, store.Match},
		{`<script>var bio = "tok"</script><style>.tok{}</style>`, store.Mismatch},
		{`<a rel="me nofollow" href="https://svc.example.com/svc_ada/">svc</a>`, store.Match},
		{`<link REL=" Me " href="HTTPS://SVC.EXAMPLE.COM/svc_ada">`, store.Match},
		{`<a rel="nofollow" href="https://svc.example.com/svc_ada">svc</a>`, store.Mismatch},
		{`<a rel="me" href="https://svc.example.com/svc_bob">svc</a>`, store.Mismatch},
	}
	for _, c := range cases {
		if r := findOnProfile([]byte(c.page), "tok", links); r.Outcome != c.outcome {
			t.Errorf("findOnProfile(%q) = %+v, want %s", c.page, r, c.outcome)
		}
	}
}

func TestWebfingerSelf(t *testing.T) {
	const acct, host = "acct:alice@social.example", "social.example"
	cases := []struct {
		body, outcome string
	}{
		{`{"subject":"acct:alice@social.example","links":[{"rel":"self","type":"application/activity+json","href":"https://social.example/users/alice"}]}`, store.Match},
		{`{"subject":"acct:alice@other.example","aliases":["acct:Alice@Social.Example"],"links":[{"rel":"self","href":"https://social.example/users/alice"}]}`, store.Match},
		{`{"subject":"acct:bob@social.example","links":[{"rel":"self","href":"https://social.example/users/bob"}]}`, store.Mismatch},
		{`{"subject":"acct:alice@social.example","links":[{"rel":"self","href":"https://elsewhere.example/users/alice"}]}`, store.Mismatch},
		{`{"subject":"acct:alice@social.example","links":[{"rel":"http://webfinger.net/rel/profile-page","href":"https://social.example/@alice"}]}`, store.Mismatch},
		{`<html>not json</html>`, store.Mismatch},
	}
	for _, c := range cases {
		if r := webfingerSelf([]byte(c.body), acct, host); r.Outcome != c.outcome {
			t.Errorf("webfingerSelf(%s) = %+v, want %s", c.body, r, c.outcome)
		}
	}
}

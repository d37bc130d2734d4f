package claims

import (
	"bytes"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The pages of proofs are parsed as a browser parses static HTML (golang.org/x/net/html, the
// HTML5 parsing algorithm, lenient with broken markup); no script runs and script, style and
// template contents are never read as page text.

// walk calls visit for every element and text node of the document outside scripts.
func walk(body []byte, visit func(*html.Node)) bool {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template, atom.Noscript:
				return
			}
		}
		visit(n)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(doc)
	return true
}

func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, name) {
			return a.Val, true
		}
	}
	return "", false
}

// findMeta looks for <meta name="svc-verification" content="token">.
func findMeta(body []byte, token string) Result {
	var found []string
	walk(body, func(n *html.Node) {
		if n.Type != html.ElementNode || n.DataAtom != atom.Meta {
			return
		}
		if name, _ := attr(n, "name"); strings.EqualFold(strings.TrimSpace(name), MetaName) {
			content, _ := attr(n, "content")
			found = append(found, strings.TrimSpace(content))
		}
	})
	if slices.Contains(found, token) {
		return match(`<meta name="` + MetaName + `" content="` + token + `">`)
	}
	if len(found) > 0 {
		return mismatch(`the page's svc-verification meta tag holds a different token (%q): set its content to %s`, found[0], token)
	}
	return mismatch(`no <meta name="%s"> tag found in the page's HTML: add it to the page's head (a tag added by a script is not seen)`, MetaName)
}

// findOnProfile looks for the token in a profile page's visible text and attribute values, and
// for a rel="me" link to one of links (Mastodon's verified links), read leniently: any element,
// rel compared case-insensitively among space-separated values, trailing slashes ignored.
func findOnProfile(body []byte, token string, links []string) Result {
	var evidence string
	walk(body, func(n *html.Node) {
		if evidence != "" {
			return
		}
		switch n.Type {
		case html.TextNode:
			if strings.Contains(n.Data, token) {
				evidence = "the profile text contains the token"
			}
		case html.ElementNode:
			rel, _ := attr(n, "rel")
			href, _ := attr(n, "href")
			if isMe(rel) && href != "" {
				for _, l := range links {
					if sameLink(href, l) {
						evidence = `a rel="me" link to ` + l
						return
					}
				}
			}
			for _, a := range n.Attr {
				if strings.Contains(a.Val, token) {
					evidence = "the profile's " + n.Data + " " + a.Key + " contains the token"
					return
				}
			}
		}
	})
	if evidence != "" {
		return match(evidence)
	}
	if len(links) > 0 {
		return mismatch(`the token is not on the profile page and no rel="me" link points to %s: add the token to the bio or link the object's page from a profile field`, links[0])
	}
	return mismatch("the token is not on the public profile page: add it to the bio, and make sure the profile is public")
}

func isMe(rel string) bool {
	return slices.ContainsFunc(strings.Fields(rel), func(v string) bool { return strings.EqualFold(v, "me") })
}

func sameLink(a, b string) bool {
	norm := func(s string) string { return strings.TrimRight(strings.ToLower(strings.TrimSpace(s)), "/") }
	return norm(a) == norm(b)
}

package object

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/signing"
)

// JRD is a WebFinger answer (RFC 7033 §4.4).
type JRD struct {
	Subject string    `json:"subject"`
	Aliases []string  `json:"aliases"`
	Links   []JRDLink `json:"links"`
}

// JRDLink is one link of a JRD.
type JRDLink struct {
	Rel    string            `json:"rel"`
	Type   string            `json:"type,omitempty"`
	Href   string            `json:"href"`
	Titles map[string]string `json:"titles,omitempty"`
}

// WebFinger answers a WebFinger query (RFC 7033) for a public object: resource is
// acct:<hash or username>@<svc's host>, the object's DID, or its box page or object URL; rels,
// when given, keep only the links of those relations. The links lead to the box page, the DID
// document, the agent card, the signing keys and llm.txt.
func (s *Service) WebFinger(ctx context.Context, resource string, rels []string) (*JRD, error) {
	if resource == "" {
		return nil, apierr.MissingField("resource")
	}
	hash, ok := s.resourceHash(resource)
	if !ok {
		return nil, apierr.NotFound("resource")
	}
	doc, err := s.DID(ctx, hash, "")
	if err != nil {
		return nil, err
	}
	base, at := s.BaseURL, s.BaseURL+objectPath(hash)
	jrd := &JRD{Subject: resource, Aliases: slices.Concat([]string{doc.ID}, doc.AlsoKnownAs), Links: []JRDLink{}}
	for _, l := range []JRDLink{
		{Rel: "http://webfinger.net/rel/profile-page", Type: "text/html", Href: base + "/" + url.PathEscape(hash)},
		{Rel: "describedby", Type: signing.DIDContentType, Href: at + "/did.json", Titles: map[string]string{"und": "DID document"}},
		{Rel: "describedby", Type: "application/json", Href: at + "/agent-card.json", Titles: map[string]string{"und": "A2A agent card"}},
		{Rel: "describedby", Type: "application/jwk-set+json", Href: at + "/jwks.json", Titles: map[string]string{"und": "signing keys"}},
		{Rel: "describedby", Type: "text/markdown", Href: at + "/llm.txt", Titles: map[string]string{"und": "profile"}},
	} {
		if len(rels) == 0 || slices.Contains(rels, l.Rel) {
			jrd.Links = append(jrd.Links, l)
		}
	}
	return jrd, nil
}

// resourceHash is the object hash a WebFinger resource names, if it names one on svc's host.
func (s *Service) resourceHash(resource string) (string, bool) {
	base, err := url.Parse(s.BaseURL)
	if err != nil {
		return "", false
	}
	var hash string
	switch {
	case strings.HasPrefix(resource, "acct:"):
		user, host, ok := strings.Cut(strings.TrimPrefix(resource, "acct:"), "@")
		if !ok || !strings.EqualFold(host, base.Host) {
			return "", false
		}
		hash = user
		if !strings.HasPrefix(hash, "svc_") {
			hash = "svc_" + hash // a custom hash's username
		}
	case strings.HasPrefix(resource, "did:web:"):
		prefix, err := signing.DIDWeb(s.BaseURL, "/api/objects/")
		if err != nil || !strings.HasPrefix(resource, prefix+":") {
			return "", false
		}
		hash = strings.TrimPrefix(resource, prefix+":")
	default:
		u, err := url.Parse(resource)
		if err != nil || !strings.EqualFold(u.Host, base.Host) {
			return "", false
		}
		p := strings.TrimPrefix(u.Path, strings.TrimRight(base.Path, "/"))
		hash = strings.TrimPrefix(strings.TrimPrefix(p, "/api/objects"), "/")
	}
	return hash, apikey.ValidHash(hash)
}

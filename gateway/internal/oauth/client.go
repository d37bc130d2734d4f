package oauth

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/svcdev/svc/pkg/outbound"
)

// MaxClientDocumentBytes caps a Client ID Metadata Document (the draft's recommended 5 KB, with
// room): the fetch fails past it.
const MaxClientDocumentBytes = 8 << 10

// ClientCacheTTL is how long a fetched document is used before it is fetched again.
const ClientCacheTTL = 5 * time.Minute

// Client is what the server keeps of a client's metadata document.
type Client struct {
	ID           string   `json:"client_id"`
	Name         string   `json:"client_name"`
	URI          string   `json:"client_uri"`
	RedirectURIs []string `json:"redirect_uris"`
	AuthMethod   string   `json:"token_endpoint_auth_method"`
}

// Origin is the host that publishes the client's document, which the consent page shows: a
// client may name itself anything, but not where its id lives.
func (c *Client) Origin() string {
	u, err := url.Parse(c.ID)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// DisplayName is the client's name, or its origin when it gives none.
func (c *Client) DisplayName() string { return cmp.Or(c.Name, c.Origin()) }

// AllowsRedirect reports whether uri is one of the client's redirect URIs, compared exactly.
func (c *Client) AllowsRedirect(uri string) bool { return slices.Contains(c.RedirectURIs, uri) }

// clients fetches and caches Client ID Metadata Documents.
type clients struct {
	fetch *outbound.Client
	cache *expirable.LRU[string, *Client]
}

func newClients(fetch *outbound.Client) *clients {
	return &clients{fetch: fetch, cache: expirable.NewLRU[string, *Client](1000, nil, ClientCacheTTL)}
}

// errClient is a client id the server cannot use; its message is shown to the person, never
// sent to a redirect URI (which is not known to be the client's).
type errClient struct{ msg string }

func (e errClient) Error() string { return e.msg }

func clientErrorf(format string, args ...any) error {
	return errClient{msg: fmt.Sprintf(format, args...)}
}

// checkClientID accepts an https URL with a path and nothing that could make two spellings of
// one id (a fragment, credentials, dot segments).
func checkClientID(id string) error {
	u, err := url.Parse(id)
	switch {
	case err != nil || u.Scheme != "https" || u.Host == "":
		return clientErrorf("client_id must be the https URL of the client's metadata document")
	case u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil || strings.Contains(u.Path, "/.") || u.String() != id:
		return clientErrorf("client_id must be an https URL with a path, without fragment, credentials or dot segments")
	}
	return nil
}

// get returns the client an id names, from the cache or by fetching its document through the
// outbound guard (no private addresses unless configured for tests, no redirects, size-capped).
func (c *clients) get(ctx context.Context, id string) (*Client, error) {
	if err := checkClientID(id); err != nil {
		return nil, err
	}
	if cl, ok := c.cache.Get(id); ok {
		return cl, nil
	}
	resp, err := c.fetch.Get(ctx, id)
	if err != nil {
		return nil, clientErrorf("the client's metadata document could not be fetched: %v", err)
	}
	if resp.Status != http.StatusOK {
		return nil, clientErrorf("the client's metadata document answered %d", resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
		return nil, clientErrorf("the client's metadata document is not application/json")
	}
	var cl Client
	if err := json.Unmarshal(resp.Body, &cl); err != nil {
		return nil, clientErrorf("the client's metadata document is not valid JSON")
	}
	switch {
	case cl.ID != id:
		return nil, clientErrorf("the client's metadata document names another client_id")
	case len(cl.RedirectURIs) == 0:
		return nil, clientErrorf("the client's metadata document lists no redirect_uris")
	case cl.AuthMethod != "" && cl.AuthMethod != "none":
		return nil, clientErrorf("token_endpoint_auth_method %q is not supported: use none (PKCE)", cl.AuthMethod)
	}
	if r := []rune(cl.Name); len(r) > 100 {
		cl.Name = string(r[:100])
	}
	c.cache.Add(id, &cl)
	return &cl, nil
}

// Package rpc is the one JSON client of svc's internal APIs: every service-to-service call goes
// through Client.Do, which maps statuses to errors, caps what it reads and relies on an
// *http.Client that adds internal tokens. Typed clients of each internal API are built on it.
package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ErrNotFound says that the called service answered 404.
var ErrNotFound = errors.New("not found")

// DefaultMaxBody caps a decoded answer unless the client is told otherwise.
const DefaultMaxBody = 1 << 20

// StatusError is a non-2xx answer other than 404. Its message names the service and the status,
// never the body, which may hold what a caller must not log.
type StatusError struct {
	Service string
	Status  int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %d %s", e.Service, e.Status, http.StatusText(e.Status))
}

// Client calls one service's internal API.
type Client struct {
	service string
	base    string
	http    *http.Client
	maxBody int64
}

// New returns a client of service at base. httpClient must add internal tokens; maxBody caps a
// decoded answer (0: DefaultMaxBody). An empty base means that the service is not deployed:
// Configured reports it, and callers decide what that means.
func New(service, base string, httpClient *http.Client, maxBody int64) *Client {
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	return &Client{service: service, base: strings.TrimRight(base, "/"), http: httpClient, maxBody: maxBody}
}

// Configured reports whether the client has an address to call.
func (c *Client) Configured() bool { return c.base != "" }

// Do sends in (when not nil) as JSON and decodes a 2xx answer into out (when not nil). A 404 is
// ErrNotFound; any other non-2xx is a *StatusError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	if c.base == "" {
		return fmt.Errorf("%s: no address configured", c.service)
	}
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s request: %w", c.service, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("%s request: %w", c.service, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.service, method, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		return &StatusError{Service: c.service, Status: resp.StatusCode}
	case out == nil:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, c.maxBody))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, c.maxBody)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", c.service, method, err)
	}
	return nil
}

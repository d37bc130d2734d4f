// Package rules reads an object's mailbox rules from context-svc, which owns them. A send must
// not wait on context-svc: every lookup has a short deadline and falls back to the default.
package rules

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/contract"
)

// Client reads rules from context-svc's internal API.
type Client struct {
	base    string
	http    *http.Client
	timeout time.Duration
	log     *slog.Logger
}

// New returns a client of context-svc at base (an empty base means that context-svc is not
// deployed, and every object has the default rules). httpClient must add internal tokens.
func New(base string, httpClient *http.Client, timeout time.Duration, log *slog.Logger) *Client {
	return &Client{base: strings.TrimRight(base, "/"), http: httpClient, timeout: timeout, log: log}
}

// Admission returns the participant_admission mode of an object's rules, or the default when
// the object has none or context-svc does not answer in time.
func (c *Client) Admission(ctx context.Context, objectID string) string {
	r, err := c.rules(ctx, objectID)
	if err != nil {
		c.log.Warn("rules lookup failed; using the default admission", "object_id", objectID, "error", err)
	}
	if r == nil || r.ParticipantAdmission == nil || r.ParticipantAdmission.Mode == "" {
		return mailbox.DefaultAdmission
	}
	return r.ParticipantAdmission.Mode
}

func (c *Client) rules(ctx context.Context, objectID string) (*contract.Rules, error) {
	if c.base == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/internal/v1/objects/"+url.PathEscape(objectID)+"/rules", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{resp.StatusCode}
	}
	var r *contract.Rules
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil {
		return nil, err
	}
	return r, nil
}

type statusError struct{ status int }

func (e *statusError) Error() string { return "context-svc answered " + http.StatusText(e.status) }

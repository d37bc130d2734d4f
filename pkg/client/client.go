// Package client is a small Go client of svc's public API, for programs and the svc command:
// create an object, send and read messages, list a mailbox, follow it. Each method is one route
// of the gateway's OpenAPI document (Routes lists them; a test checks them against it), and an
// error answer comes back as *Error with the API's code.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Route is one route of the API a method calls.
type Route struct{ Method, Path string }

// Routes are the routes the client calls, as the OpenAPI document names them.
var Routes = []Route{
	{"POST", "/api/objects"},
	{"GET", "/api/objects/{hash}"},
	{"POST", "/api/messages"},
	{"GET", "/api/objects/{hash}/mailbox"},
	{"GET", "/api/threads/{threadId}"},
	{"GET", "/api/objects/{hash}/events"},
}

// Client calls one svc deployment, with an API key or without (public routes).
type Client struct {
	BaseURL string
	// Key is an owner key (svc_sk_…) or a sub-key (ksvc_…); empty for public calls.
	Key  string
	HTTP *http.Client
}

// New returns a client of the deployment at baseURL (e.g. http://127.0.0.1:8080).
func New(baseURL, key string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Key: key, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Error is an error answer of the API.
type Error struct {
	Status    int    `json:"-"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("svc: %d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// NewObject is what CreateObject sends.
type NewObject struct {
	InitialLLMTxt string `json:"initial_llm_txt,omitempty"`
	Visibility    string `json:"visibility,omitempty"` // public (default) or private
}

// Object is an object as the API shows it; APIKey is set only in the answer that creates it.
type Object struct {
	Hash          string `json:"hash"`
	APIKey        string `json:"api_key,omitempty"`
	MailboxStatus string `json:"mailbox_status"`
	Visibility    string `json:"visibility,omitempty"`
	Version       int    `json:"version"`
	CreatedAt     string `json:"created_at"`
}

// NewMessage is what Send sends; ThreadID continues a thread, IdempotencyKey makes a retry safe.
type NewMessage struct {
	FromHash       string `json:"from_hash"`
	ToHash         string `json:"to_hash"`
	Kind           string `json:"kind"` // note, question, request, artifact_update, system
	Body           string `json:"body"`
	ThreadID       string `json:"thread_id,omitempty"`
	IdempotencyKey string `json:"-"`
}

// Message is a stored message.
type Message struct {
	ID        string  `json:"id"`
	ThreadID  string  `json:"thread_id,omitempty"`
	FromHash  string  `json:"from_hash"`
	ToHash    string  `json:"to_hash"`
	Kind      string  `json:"kind"`
	Body      string  `json:"body"`
	CreatedAt string  `json:"created_at"`
	ReadAt    *string `json:"read_at,omitempty"`
}

// ThreadSummary is a thread in a mailbox listing.
type ThreadSummary struct {
	ID            string   `json:"id"`
	Participants  []string `json:"participants"`
	Status        string   `json:"status"`
	LastMessageAt string   `json:"last_message_at"`
	MessageCount  int      `json:"message_count"`
	UnreadCount   int      `json:"unread_count"`
}

// Mailbox is one page of an object's threads, most recent first.
type Mailbox struct {
	Threads    []ThreadSummary `json:"threads"`
	NextCursor *string         `json:"next_cursor"`
}

// Thread is a thread with one page of its messages; reading it marks them read.
type Thread struct {
	ThreadSummary
	Messages   []Message `json:"messages"`
	NextCursor *string   `json:"next_cursor"`
}

// CreateObject creates an object; the answer's APIKey is shown only here.
func (c *Client) CreateObject(ctx context.Context, o NewObject) (*Object, error) {
	var out Object
	return &out, c.call(ctx, "POST", "/api/objects", o, nil, &out)
}

// Object reads an object's public record.
func (c *Client) Object(ctx context.Context, hash string) (*Object, error) {
	var out Object
	return &out, c.call(ctx, "GET", "/api/objects/"+url.PathEscape(hash), nil, nil, &out)
}

// Send writes a message to a mailbox (no key is needed to write).
func (c *Client) Send(ctx context.Context, m NewMessage) (*Message, error) {
	var h http.Header
	if m.IdempotencyKey != "" {
		h = http.Header{"Idempotency-Key": {m.IdempotencyKey}}
	}
	var out Message
	return &out, c.call(ctx, "POST", "/api/messages", m, h, &out)
}

// Mailbox lists a page of the threads of the object whose key the client holds (cursor "" for
// the first page).
func (c *Client) Mailbox(ctx context.Context, hash, cursor string) (*Mailbox, error) {
	var out Mailbox
	return &out, c.call(ctx, "GET", withCursor("/api/objects/"+url.PathEscape(hash)+"/mailbox", cursor), nil, nil, &out)
}

// Thread reads a page of a thread the client's object takes part in (messages oldest first;
// cursor "" for the first page), marking the page's messages read.
func (c *Client) Thread(ctx context.Context, threadID, cursor string) (*Thread, error) {
	var out Thread
	return &out, c.call(ctx, "GET", withCursor("/api/threads/"+url.PathEscape(threadID), cursor), nil, nil, &out)
}

// withCursor asks path for the page at cursor ("" for the first page).
func withCursor(path, cursor string) string {
	if cursor != "" {
		path += "?cursor=" + url.QueryEscape(cursor)
	}
	return path
}

// followWait is how long one long poll of Follow waits for an event: under the HTTP client's
// 30-second timeout.
const followWait = "25s"

// Follow calls fn with each message that arrives in hash's mailbox from now on, with its
// thread_id, until ctx ends or fn returns an error. It long-polls the object's event stream
// (GET /api/objects/{hash}/events?types=message&wait=…), so it marks nothing read: the mailbox
// still counts the messages unread. The key must be one of hash's, with the read scope.
func (c *Client) Follow(ctx context.Context, hash string, fn func(Message) error) error {
	after := ""
	for {
		q := url.Values{"types": {"message"}, "wait": {followWait}}
		if after != "" {
			q.Set("after", after)
		}
		var page struct {
			Events []struct {
				Type string `json:"type"`
				Data struct {
					MessageID string `json:"message_id"`
					Message
				} `json:"data"`
			} `json:"events"`
			NextAfter *string `json:"next_after"`
		}
		if err := c.call(ctx, "GET", "/api/objects/"+url.PathEscape(hash)+"/events?"+q.Encode(), nil, nil, &page); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		for _, e := range page.Events {
			if e.Type != "message" {
				continue
			}
			m := e.Data.Message
			m.ID = e.Data.MessageID
			if err := fn(m); err != nil {
				return err
			}
		}
		if page.NextAfter != nil {
			after = *page.NextAfter
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Watch calls fn with each message to hash that it has not shown yet, found in the threads of
// hash's mailbox that have unread messages, every interval, until ctx ends or fn returns an
// error. Reading a thread marks its messages read, so the next look passes it by; Follow marks
// nothing.
func (c *Client) Watch(ctx context.Context, hash string, interval time.Duration, fn func(Message) error) error {
	const remembered = 100_000 // ids of messages shown, forgotten all at once past this many
	seen := map[string]bool{}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		box, err := c.Mailbox(ctx, hash, "")
		if err != nil {
			return err
		}
		for _, s := range box.Threads {
			if s.UnreadCount == 0 {
				continue
			}
			for cursor := ""; ; {
				page, err := c.Thread(ctx, s.ID, cursor)
				if err != nil {
					return err
				}
				for _, m := range page.Messages {
					if m.ToHash != hash || seen[m.ID] {
						continue
					}
					if len(seen) >= remembered {
						clear(seen)
					}
					seen[m.ID] = true
					m.ThreadID = s.ID // a thread's messages do not repeat its id
					if err := fn(m); err != nil {
						return err
					}
				}
				if page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (c *Client) call(ctx context.Context, method, path string, in any, header http.Header, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("svc: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return fmt.Errorf("svc: %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("svc: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("svc: %s %s: read answer: %w", method, path, err)
	}
	if res.StatusCode >= 300 {
		var e struct{ Error Error }
		if json.Unmarshal(raw, &e) != nil || e.Error.Code == "" {
			return &Error{Status: res.StatusCode, Code: http.StatusText(res.StatusCode), Message: strings.TrimSpace(string(raw))}
		}
		e.Error.Status = res.StatusCode
		return &e.Error
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("svc: %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

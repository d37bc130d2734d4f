package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/httpx"
)

// page is how many entries a reader takes from its log at a time: what one stream holds in
// memory at once.
const page = 100

// MaxWait bounds a long poll's wait.
const MaxWait = 30 * time.Second

// Server serves logs as Server-Sent Events and as long polls.
type Server struct {
	Log *Log
	Hub *Hub
	// Heartbeat is how often an idle stream sends a comment, so that proxies keep it open; the
	// stream also re-reads its log then, should a wake have been missed.
	Heartbeat time.Duration
	// Retry is the reconnection delay the stream announces (SSE retry:).
	Retry time.Duration
	open  chan struct{}
}

// NewServer returns a server of at most maxOpen streams and long polls at once.
func NewServer(l *Log, h *Hub, heartbeat, retry time.Duration, maxOpen int) *Server {
	return &Server{Log: l, Hub: h, Heartbeat: heartbeat, Retry: retry, open: make(chan struct{}, maxOpen)}
}

// acquire takes one of the process's stream slots, or answers 503 with Retry-After.
func (s *Server) acquire() (release func(), err error) {
	select {
	case s.open <- struct{}{}:
		return func() { <-s.open }, nil
	default:
		e := httpx.Errorf(http.StatusServiceUnavailable, httpx.CodeUnavailable,
			"this replica serves as many event streams as it may: retry after Retry-After seconds")
		e.RetryAfter = s.Retry
		return nil, e
	}
}

// Lost is the data of the `lost` event (and of a long poll's `lost`): the resume point is past
// the retention window, so events may be missing; what the log still holds follows.
type Lost struct {
	LastEventID      string `json:"last_event_id"`
	RetentionSeconds int64  `json:"retention_seconds"`
	RetentionEvents  int64  `json:"retention_events"`
	Message          string `json:"message"`
}

func (s *Server) lost(lastID string) *Lost {
	r := s.Log.Retention()
	return &Lost{LastEventID: lastID, RetentionSeconds: int64(r.Age / time.Second), RetentionEvents: r.Max,
		Message: "this event id is past the retention window: events after it may be missing; the oldest retained events follow"}
}

// start finds where a reader resumes: after lastID, or at the tail when lastID is empty (then
// tailID is the newest event's id, where a later resume may start). A lastID past retention
// starts at the oldest retained entry, with lost set.
func (s *Server) start(ctx context.Context, list, lastID string) (p Position, tailID string, lost bool, err error) {
	if lastID == "" {
		p, tailID, err = s.Log.Tail(ctx, list)
		return p, tailID, false, err
	}
	p, err = s.Log.After(ctx, list, lastID)
	if errors.Is(err, ErrLost) {
		return Start, "", true, nil
	}
	return p, "", false, err
}

// SSE streams list from after lastID (Last-Event-ID; empty: from now on) until the client goes
// away, sending the entries keep accepts.
func (s *Server) SSE(c *gin.Context, list, lastID string, keep func(Entry) bool) error {
	release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	ctx := c.Request.Context()
	w := s.Hub.Watch(list) // before the first read: no append is missed between read and wait
	defer w.Close()
	p, _, lost, err := s.start(ctx, list, lastID)
	if err != nil {
		return httpx.Unavailable(err)
	}
	rc := http.NewResponseController(c.Writer)
	// A stream outlives the server's read and write timeouts; each write gets its own deadline.
	_ = rc.SetReadDeadline(time.Time{})
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	out := fmt.Sprintf("retry: %d\n\n", s.Retry.Milliseconds())
	if lost {
		data, _ := json.Marshal(s.lost(lastID))
		out += "event: lost\ndata: " + string(data) + "\n\n"
	}
	if err := s.write(rc, c.Writer, out); err != nil {
		return nil
	}
	beat := time.NewTicker(s.Heartbeat)
	defer beat.Stop()
	for {
		var entries []Entry
		for {
			entries, p, err = s.Log.Read(ctx, list, p, page)
			if err != nil {
				return nil // the client reconnects with its Last-Event-ID
			}
			buf := make([]byte, 0, 4096)
			for _, e := range entries {
				if keep(e) {
					buf = fmt.Appendf(buf, "id: %s\nevent: %s\ndata: %s\n\n", e.EventID, e.Event, e.Data)
				}
			}
			if len(buf) > 0 {
				if err := s.write(rc, c.Writer, string(buf)); err != nil {
					return nil
				}
			}
			if len(entries) < page {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.Hub.Done():
			return nil
		case <-w.C:
		case <-beat.C:
			if err := s.write(rc, c.Writer, ": heartbeat\n\n"); err != nil {
				return nil
			}
		}
	}
}

// write sends out and flushes it, within a deadline: a client that stops reading is dropped.
func (s *Server) write(rc *http.ResponseController, w gin.ResponseWriter, out string) error {
	_ = rc.SetWriteDeadline(time.Now().Add(s.Heartbeat + 10*time.Second))
	if _, err := w.WriteString(out); err != nil {
		return err
	}
	return rc.Flush()
}

// Polled is the answer of a long poll: the events after `after`, oldest first, and the id to
// pass as `after` next (the last event read, also when the types filter left it out).
type Polled struct {
	Events    []json.RawMessage `json:"events"`
	NextAfter *string           `json:"next_after"`
	Lost      *Lost             `json:"lost,omitempty"`
}

// Poll answers the entries after lastID (empty: from now on) that keep accepts, waiting up to
// wait for the first one; at most one page.
func (s *Server) Poll(ctx context.Context, list, lastID string, wait time.Duration, keep func(Entry) bool) (*Polled, error) {
	release, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer release()
	w := s.Hub.Watch(list)
	defer w.Close()
	p, tailID, lost, err := s.start(ctx, list, lastID)
	if err != nil {
		return nil, httpx.Unavailable(err)
	}
	out := &Polled{Events: []json.RawMessage{}}
	if from := max(lastID, tailID); from != "" {
		out.NextAfter = &from
	}
	if lost {
		out.Lost = s.lost(lastID)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		entries, next, err := s.Log.Read(ctx, list, p, page)
		if err != nil {
			return nil, httpx.Unavailable(err)
		}
		p = next
		for _, e := range entries {
			id := e.EventID
			out.NextAfter = &id
			if keep(e) {
				out.Events = append(out.Events, e.Data)
			}
		}
		if len(out.Events) > 0 || len(entries) == page {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, nil
		case <-s.Hub.Done():
			return out, nil
		case <-deadline.C:
			return out, nil
		case <-w.C:
		}
	}
}

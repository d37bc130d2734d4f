// Package graph holds graph-svc's use cases: the graph of a thread (message nodes projected from
// mailbox-svc, nodes and edges written by the thread's participants, reads as of a time),
// decisions that supersede without deleting, private guidance, and ingest into tracked sources.
package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/rpc"
)

// Node types, edge types and visibilities of the spec.
var (
	NodeTypes = []string{"message", "evidence", "context_dump", "question", "answer", "hypothesis", "decision",
		"correction", "private_goal", "summary"}
	EdgeTypes    = []string{"replies_to", "supports", "contradicts", "supersedes", "depends_on", "derived_from", "decides", "reopens"}
	Visibilities = []string{Participants, Public, OwnerOnly}
)

// Node and edge types with a meaning of their own.
const (
	TypeMessage    = "message"
	TypeDecision   = "decision"
	TypeEvidence   = "evidence"
	TypeContext    = "context_dump"
	EdgeRepliesTo  = "replies_to"
	EdgeSupersedes = "supersedes"
)

// Visibilities.
const (
	Participants = "participants"
	Public       = "public"
	OwnerOnly    = "owner_only"
)

// Limits of what a write may hold.
const (
	MaxBody     = 64 << 10
	MaxTitle    = 200
	MaxThreadID = 64
	MaxNodeID   = 64
	// MaxSupersedes bounds the nodes one decision supersedes.
	MaxSupersedes = 50
)

// ThreadStore is what every use case reads and writes of threads: who takes part, the hashes
// first seen with them, and who wrote into them.
type ThreadStore interface {
	Thread(ctx context.Context, id string) (*store.Thread, error)
	AddThread(ctx context.Context, t *store.Thread) error
	RememberHashes(ctx context.Context, hs []store.ObjectHash) error
	MarkTookPart(ctx context.Context, pairs [][2]string) error
}

// Store is what the use cases need of graph-svc's repository: the narrow interfaces each of them
// declares beside it, all satisfied by *store.Store.
type Store interface {
	ThreadStore
	ProjectionStore
	NodeStore
	DecisionStore
	MessageStore
	GraphReadStore
	GuidanceStore
	MemoryStore
	SourceStore
	OverviewStore
}

// Outbox stages events before the insert that records them and confirms them after it.
type Outbox interface {
	Stage(ctx context.Context, collection string, id any, evs ...events.Pending) error
	Confirm(evs ...events.Pending)
}

// Mailbox tells who takes part in a mailbox thread (mailbox-svc's internal API). It is asked only
// for a thread graph-svc has not heard of yet (a graph call racing the projection of the
// thread's first message); once known, a thread is answered from graph-svc's own data.
//
// It is also asked whether an object blocks a sender now, while graph-svc's projection of the
// blocks has not applied the object's latest block or unblock (see checkNotBlocked).
type Mailbox interface {
	Thread(ctx context.Context, threadID string) (*contract.Thread, error)
	Blocked(ctx context.Context, objectID, senderID string) (bool, error)
}

// BlockGuard decides whether graph-svc's projection of an object's blocks has applied the
// object's latest block control (controls.Guard): when it has not, mailbox-svc is asked.
type BlockGuard interface {
	Get(ctx context.Context, objectID, key string, projection, owner func(context.Context) (bool, error)) (bool, error)
}

// Profiles reads an object's composed public profile (context-svc's internal API).
type Profiles interface {
	ComposedProfile(ctx context.Context, objectID, hash string) (string, error)
}

// Limits are the quotas of what callers write into graphs (GRAPH_MAX_* in docs/operations.md).
type Limits struct {
	// NodesPerThread bounds the nodes written into one thread (messages, which mailbox-svc
	// bounds, aside); NodesPerAuthor those one participant writes into one thread, and
	// EdgesPerAuthor its edges. Keep NodesPerThread at least twice NodesPerAuthor, so that one
	// side of a thread never uses up the other's room.
	NodesPerThread, NodesPerAuthor, EdgesPerAuthor int64
	// NodeBytes bounds the body of a node written through the thread routes.
	NodeBytes int
	// SourcesPerOwner bounds the sources one object tracks.
	SourcesPerOwner int64
}

// DefaultLimits are the quotas when configuration sets none.
var DefaultLimits = Limits{NodesPerThread: 10000, NodesPerAuthor: 5000, EdgesPerAuthor: 10000, NodeBytes: MaxBody,
	SourcesPerOwner: 200}

// Schedule is when tracked sources are pulled again: every Interval, found by scans every Scan.
type Schedule struct {
	Interval, Scan time.Duration
	// IngestBudget bounds an ingest's wait for its turn and its fetches, from the request's
	// start, well inside the gateway's httpx.UpstreamTimeout (0: DefaultIngestBudget).
	IngestBudget time.Duration
}

// DefaultIngestBudget leaves an ingest 10 s of the gateway's 30 s to write what it fetched and
// answer.
const DefaultIngestBudget = 20 * time.Second

// Service holds the use cases.
type Service struct {
	Limits   Limits
	Schedule Schedule
	Store    Store
	Mailbox  Mailbox
	// BlockGuard tells when a write's block check must ask mailbox-svc; nil: never.
	BlockGuard BlockGuard
	Profiles   Profiles
	Outbox     Outbox
	Fetcher    Fetcher
	// Limiter bounds the fetches and parses the process runs at once (ingest, pulls).
	Limiter *outbound.Limiter
	// MaxFetchBytes is the fetcher's cap on a page, named in the error of a larger one.
	MaxFetchBytes int64
	Log           *slog.Logger

	// projecting is held by the projection of message batches under way; pending are the batches
	// waiting for the next turn, which projects them together (see ProjectMessages).
	projecting chan struct{}
	pendingMu  sync.Mutex
	pending    []*pendingProjection

	knownOnce sync.Once
	known     *lru.Cache[string, struct{}]    // threads recorded by this process
	hashed    *lru.Cache[string, struct{}]    // objects whose hash this process recorded
	tookPart  *lru.Cache[[2]string, struct{}] // participation marks this process wrote
	// threads are threads read or recorded by this process: a thread's record never changes
	// once stored (its participants are fixed), so a graph read polled while its thread fills
	// reads it once.
	threads *lru.Cache[string, store.Thread]
	// learned are threads this process recorded from mailbox-svc's answer to a read: their first
	// message takes position 1 with no read (a position taken meanwhile is renumbered).
	learned *lru.Cache[string, struct{}]
}

// knownThreads bounds how many recorded threads a process remembers, so that a message of a
// known thread costs one insert, its node.
const knownThreads = 10000

func (s *Service) initKnown() {
	s.known, _ = lru.New[string, struct{}](knownThreads)
	s.hashed, _ = lru.New[string, struct{}](knownThreads)
	s.tookPart, _ = lru.New[[2]string, struct{}](knownThreads)
	s.threads, _ = lru.New[string, store.Thread](knownThreads)
	s.learned, _ = lru.New[string, struct{}](knownThreads)
	s.projecting = make(chan struct{}, 1)
}

// markTookPart records that objects wrote into threads (pairs of thread and object), leaving out
// the marks this process wrote already: one insert at most.
func (s *Service) markTookPart(ctx context.Context, pairs ...[2]string) error {
	s.knownOnce.Do(s.initKnown)
	var fresh [][2]string
	for _, p := range pairs {
		if !s.tookPart.Contains(p) && !slices.Contains(fresh, p) {
			fresh = append(fresh, p)
		}
	}
	if err := s.Store.MarkTookPart(ctx, fresh); err != nil {
		return err
	}
	for _, p := range fresh {
		s.tookPart.Add(p, struct{}{})
	}
	return nil
}

// thread returns the thread threadID when the caller takes part in it. Any other thread,
// existing or not, is not found: its existence is never revealed. A mailbox thread graph-svc
// has not heard of yet is asked of mailbox-svc and remembered (its participants never change).
func (s *Service) thread(ctx context.Context, threadID, objectID string) (*store.Thread, error) {
	if threadID == "" || len(threadID) > MaxThreadID {
		return nil, apierr.NotFound("thread")
	}
	s.knownOnce.Do(s.initKnown)
	th, ok := s.threads.Get(threadID)
	if !ok {
		stored, err := s.Store.Thread(ctx, threadID)
		if errors.Is(err, mongox.ErrNotFound) {
			stored, err = s.learnThread(ctx, threadID)
		}
		if err != nil {
			return nil, err
		}
		th = *stored
		s.threads.Add(th.ID, th)
	}
	if !slices.Contains(th.Participants, objectID) {
		return nil, apierr.NotFound("thread")
	}
	return &th, nil
}

// learnThread asks mailbox-svc who takes part in a thread and records it.
func (s *Service) learnThread(ctx context.Context, threadID string) (*store.Thread, error) {
	if strings.HasPrefix(threadID, selfPrefix) {
		return nil, apierr.NotFound("thread")
	}
	mt, err := s.Mailbox.Thread(ctx, threadID)
	if errors.Is(err, rpc.ErrNotFound) {
		return nil, apierr.NotFound("thread")
	}
	if err != nil {
		return nil, apierr.Unavailable(fmt.Errorf("read the thread: %w", err))
	}
	th := &store.Thread{ID: mt.ThreadID, CreatedAt: parseTime(mt.CreatedAt)}
	for _, p := range mt.Participants {
		th.Participants = append(th.Participants, p.ObjectID)
	}
	if err := s.rememberParticipants(ctx, mt.Participants); err != nil {
		return nil, err
	}
	if err := s.Store.AddThread(ctx, th); err != nil {
		return nil, err
	}
	s.learned.Add(th.ID, struct{}{})
	return th, nil
}

// parseTime reads a timestamp of the public API; the zero time when it is not one.
func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t.UTC()
}

// checkText refuses an empty or too long text field.
func checkText(field, v string, max int) error {
	if strings.TrimSpace(v) == "" {
		return apierr.BadRequest(apierr.CodeInvalidRequest, "%s must not be empty", field)
	}
	if len(v) > max {
		return apierr.BadRequest(apierr.CodeInvalidRequest, "%s is longer than %d bytes", field, max)
	}
	return nil
}

// visibility returns v, participants when empty, or INVALID_VISIBILITY.
func visibility(v string) (string, error) {
	if v == "" {
		return Participants, nil
	}
	if !slices.Contains(Visibilities, v) {
		return "", apierr.BadRequest(apierr.CodeInvalidVisibility, "visibility must be one of %s", strings.Join(Visibilities, ", "))
	}
	return v, nil
}

// visibleTo reports whether a participant's owner may see a node: every node but the other
// side's owner_only ones.
func visibleTo(n *store.Node, objectID string) bool {
	return n.Visibility != OwnerOnly || n.AuthorID == objectID
}

// turn takes a turn of the process's outbound work for a caller: 503 UNAVAILABLE with
// Retry-After when the process runs as much as it may.
func (s *Service) turn(ctx context.Context) (func(), error) {
	return s.Limiter.Turn(ctx, "fetching and reading pages")
}

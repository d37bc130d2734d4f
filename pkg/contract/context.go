package contract

import (
	"strings"
	"unicode/utf8"

	"github.com/svcdev/svc/pkg/apierr"
)

// ContextUpdatedData is the data of a context.updated event (webhook event context_updated): the
// object's composed profile changed and its context version moved. It names what changed, never
// the owner-only content. Decision memory, owner-only, has versions of its own and no event.
type ContextUpdatedData struct {
	Version   int    `json:"version"`
	UpdatedAt string `json:"updated_at"`
	Title     string `json:"title"`
	// Change is what the write changed: llm_txt, context, rules, sources or sync.
	Change string `json:"change"`
	// Admission is what the version's rules say of admission, for mailbox-svc's projection. It is
	// internal: no public payload carries it (events.Public). Events from before it was
	// carried have none.
	Admission *Admission `json:"admission,omitempty"`
}

// ContextSourceChangedData is the data of a context.source_changed event (webhook event
// context_source). Text sources carry no text here.
type ContextSourceChangedData struct {
	SourceID string `json:"source_id"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	URL      string `json:"url,omitempty"`
	Included bool   `json:"included"`
	// Change is created, updated or deleted.
	Change string `json:"change"`
}

// DecisionRecordedData is the data of a decision.recorded event (topic svc.graph.v1): a decision
// node recorded in a thread of the event's object.
type DecisionRecordedData struct {
	ThreadID   string   `json:"thread_id"`
	NodeID     string   `json:"node_id"`
	Title      string   `json:"title"`
	Body       string   `json:"body"`
	Confidence *float64 `json:"confidence"`
	// Supersedes names the nodes of the thread the decision superseded, so that decision memory
	// stops presenting them as current.
	Supersedes []string `json:"supersedes_node_ids,omitempty"`
	CreatedAt  string   `json:"created_at"`
	// ValidFrom and ValidUntil are the decision's world time, when given.
	ValidFrom  *string `json:"valid_from,omitempty"`
	ValidUntil *string `json:"valid_until,omitempty"`
	// AuthorHash is the hash of the participant who recorded the decision (empty in events of
	// earlier releases).
	AuthorHash string `json:"author_hash,omitempty"`
	// Accepted says whether the decision belongs in the decision memory of the event's object:
	// it recorded the decision, or it had written into the thread (a message, a node, an edge or
	// a decision) before, which accepts the relationship. A stranger's decisions in a thread the
	// object never answered are false, so they never crowd its own out of a rebuild. Events of
	// earlier releases leave it nil.
	Accepted *bool `json:"accepted,omitempty"`
}

// MaxTitle bounds a profile title.
const MaxTitle = 200

// ProfileTitle is the title of a profile markdown: its first heading, else its first non-empty
// line, cut to MaxTitle bytes on a character boundary. identity-svc stores it at creation and
// context-svc reports it after every write, so both must derive it the same way.
func ProfileTitle(md string) string {
	first := ""
	for line := range strings.Lines(md) {
		// Bidirectional controls would reorder the title wherever it is shown (directory, agent
		// card, feed authors, box page): they are left out.
		line = strings.TrimSpace(apierr.StripBidiControls(line))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			return Truncate(strings.TrimSpace(strings.TrimLeft(line, "#")), MaxTitle)
		}
		if first == "" {
			first = line
		}
	}
	return Truncate(first, MaxTitle)
}

// Truncate cuts s to at most n bytes without splitting a UTF-8 character.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ComposedProfile is the answer of context-svc's GET /internal/v1/objects/{object_id}/profile:
// the composed profile markdown that the object's public llm.txt read shows.
type ComposedProfile struct {
	Markdown string `json:"markdown"`
}

package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svcdev/svc/pkg/clock"
)

// MajorConfidence is the confidence from which a decision counts as major; a decision recorded
// without a confidence counts too.
const MajorConfidence = 0.5

// Decision is a decision recorded in one of the object's threads. Supersedes names the nodes
// it superseded; SupersededBy is set by Current on a decision a later one superseded.
type Decision struct {
	ThreadID   string
	NodeID     string
	Title      string
	Body       string
	Confidence *float64
	Supersedes []string
	CreatedAt  time.Time
	ValidFrom  *time.Time
	ValidUntil *time.Time
	// AuthorHash is who recorded it ("" when the event did not say).
	AuthorHash   string
	SupersededBy *Decision
}

// Major reports whether d belongs in decision memory.
func Major(d Decision) bool { return d.Confidence == nil || *d.Confidence >= MajorConfidence }

// Current splits the recorded decisions (newest first) into the major ones still current and the
// major ones a later decision superseded (each with SupersededBy set). A decision superseded by
// any recorded decision, major or not, is no longer current: the graph marked it invalid.
func Current(recorded []Decision) (current, superseded []Decision) {
	by := map[string]*Decision{}
	for i := len(recorded) - 1; i >= 0; i-- { // oldest first, so the newest superseder wins
		for _, old := range recorded[i].Supersedes {
			by[old] = &recorded[i]
		}
	}
	for _, d := range recorded {
		if !Major(d) {
			continue
		}
		if s := by[d.NodeID]; s != nil {
			d.SupersededBy = s
			superseded = append(superseded, d)
			continue
		}
		current = append(current, d)
	}
	return current, superseded
}

// DecisionMemory renders the current major decisions (newest first, as given), each naming what
// it superseded, then the superseded ones, marked as no longer current.
func DecisionMemory(current, superseded []Decision, at time.Time) string {
	var b strings.Builder
	b.WriteString("# Decision memory\n\n")
	if len(current) == 0 && len(superseded) == 0 {
		fmt.Fprintf(&b, "Rebuilt %s: no major thread decisions are recorded yet.\n", clock.Format(at))
		return b.String()
	}
	fmt.Fprintf(&b, "Rebuilt %s from %d current major thread decisions, newest first.\n", clock.Format(at), len(current))
	titles := map[string]string{}
	for _, d := range append(slices.Clone(current), superseded...) {
		titles[d.NodeID] = d.Title
	}
	for _, d := range current {
		fmt.Fprintf(&b, "\n## %s\n\n", oneLine(d.Title))
		if body := strings.TrimSpace(d.Body); body != "" {
			b.WriteString(body)
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Thread %s, decided %s%s, confidence %s.\n", d.ThreadID, clock.Format(d.CreatedAt), by(d), confidence(d))
		if w := worldTime(d); w != "" {
			b.WriteString(w + "\n")
		}
		if len(d.Supersedes) > 0 {
			names := make([]string, 0, len(d.Supersedes))
			for _, id := range d.Supersedes {
				if t, ok := titles[id]; ok {
					names = append(names, fmt.Sprintf("%q (node %s)", oneLine(t), id))
				} else {
					names = append(names, "node "+id)
				}
			}
			fmt.Fprintf(&b, "Supersedes %s.\n", strings.Join(names, ", "))
		}
	}
	if len(superseded) > 0 {
		b.WriteString("\n## Superseded decisions (no longer current)\n\n")
		for _, d := range superseded {
			fmt.Fprintf(&b, "- SUPERSEDED: %q (node %s, thread %s, decided %s%s), replaced by %q (node %s) on %s.\n",
				oneLine(d.Title), d.NodeID, d.ThreadID, clock.Format(d.CreatedAt), by(d), oneLine(d.SupersededBy.Title),
				d.SupersededBy.NodeID, clock.Format(d.SupersededBy.CreatedAt))
		}
	}
	return b.String()
}

// by names who recorded a decision, as " by <hash>" ("" when the event did not say).
func by(d Decision) string {
	if d.AuthorHash == "" {
		return ""
	}
	return " by " + d.AuthorHash
}

// worldTime says when what the decision says holds in the world, "" when its author gave no
// bound.
func worldTime(d Decision) string {
	switch {
	case d.ValidFrom != nil && d.ValidUntil != nil:
		return fmt.Sprintf("Holds from %s until %s.", clock.Format(*d.ValidFrom), clock.Format(*d.ValidUntil))
	case d.ValidFrom != nil:
		return fmt.Sprintf("Holds from %s.", clock.Format(*d.ValidFrom))
	case d.ValidUntil != nil:
		return fmt.Sprintf("Holds until %s.", clock.Format(*d.ValidUntil))
	}
	return ""
}

func confidence(d Decision) string {
	if d.Confidence == nil {
		return "not given"
	}
	return strconv.FormatFloat(*d.Confidence, 'f', -1, 64)
}

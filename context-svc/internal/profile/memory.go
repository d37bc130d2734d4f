package profile

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/svcdev/svc/pkg/clock"
)

// MajorConfidence is the confidence from which a decision counts as major; a decision recorded
// without a confidence counts too.
const MajorConfidence = 0.5

// Decision is a decision recorded in one of the object's threads.
type Decision struct {
	ThreadID   string
	NodeID     string
	Title      string
	Body       string
	Confidence *float64
	CreatedAt  time.Time
}

// Major reports whether d belongs in decision memory.
func Major(d Decision) bool { return d.Confidence == nil || *d.Confidence >= MajorConfidence }

// DecisionMemory renders the major decisions (newest first, as given) as markdown.
func DecisionMemory(decisions []Decision, at time.Time) string {
	var b strings.Builder
	b.WriteString("# Decision memory\n\n")
	if len(decisions) == 0 {
		fmt.Fprintf(&b, "Rebuilt %s: no major thread decisions are recorded yet.\n", clock.Format(at))
		return b.String()
	}
	fmt.Fprintf(&b, "Rebuilt %s from %d major thread decisions, newest first.\n", clock.Format(at), len(decisions))
	for _, d := range decisions {
		fmt.Fprintf(&b, "\n## %s\n\n", oneLine(d.Title))
		if body := strings.TrimSpace(d.Body); body != "" {
			b.WriteString(body)
			b.WriteString("\n\n")
		}
		conf := "not given"
		if d.Confidence != nil {
			conf = strconv.FormatFloat(*d.Confidence, 'f', -1, 64)
		}
		fmt.Fprintf(&b, "Thread %s, decided %s, confidence %s.\n", d.ThreadID, clock.Format(d.CreatedAt), conf)
	}
	return b.String()
}

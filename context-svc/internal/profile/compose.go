// Package profile holds context-svc's use cases and domain rules: the writes of an object's
// context (each one a new version reported to identity-svc), sources and their fetches, context
// links, repository sync and decision memory, and, as pure functions, composing the public
// llm.txt, the context coach and the agent card. It owns the write order and builds every event
// the service publishes (events.go).
package profile

import (
	"fmt"
	"slices"
	"strings"
)

// Source kinds of the spec. Every kind but text names a URL that is fetched when composing.
const (
	KindURL        = "url"
	KindText       = "text"
	KindCodeHost   = "code_host"
	KindSocial     = "social"
	KindCloudDrive = "cloud_drive"
)

// Kinds lists the source kinds, in the spec's order.
var Kinds = []string{KindURL, KindText, KindCodeHost, KindSocial, KindCloudDrive}

// ValidKind reports whether kind is a source kind.
func ValidKind(kind string) bool { return slices.Contains(Kinds, kind) }

// Fetched reports whether a source of kind is fetched from its URL.
func Fetched(kind string) bool { return ValidKind(kind) && kind != KindText }

// Source is what composing needs of a context source.
type Source struct {
	ID    string
	Kind  string
	Title string
	URL   string
	// Text is the text of a text source, or the last fetched content of a URL source.
	Text string
	// Unavailable is set when a URL source could not be fetched and nothing was fetched before.
	Unavailable bool
}

// ComposedMarker separates, in the public llm.txt, the owner's markdown from what svc composes
// after it. A markdown renderer shows nothing of it, and a write of llm.txt drops it and all that
// follows (StoredPart), so that what a read returns can be written back unchanged.
const ComposedMarker = "<!-- svc: everything below is composed by svc (sources, how to message); writing llm.txt back drops it -->"

// StoredPart is the owner's markdown of an llm.txt that may carry the composed part of a read.
func StoredPart(md string) string {
	if i := strings.Index(md, ComposedMarker); i >= 0 {
		return strings.TrimRight(md[:i], " \t\r\n")
	}
	return md
}

// Compose is the public llm.txt: the owner's markdown, every included source, and how to message
// the object.
func Compose(hash, baseURL, markdown string, sources []Source) string {
	var b strings.Builder
	md := strings.TrimSpace(markdown)
	if md == "" {
		md = fmt.Sprintf("# %s\n\nThis object has not written its profile yet.", hash)
	}
	b.WriteString(md)
	b.WriteString("\n\n" + ComposedMarker + "\n")
	if len(sources) > 0 {
		b.WriteString("\n")
		b.WriteString(ComposeSources(sources))
	}
	b.WriteString("\n---\n\n")
	b.WriteString(Messaging(hash, baseURL))
	return b.String()
}

// ComposeSources renders sources as markdown sections, in order.
func ComposeSources(sources []Source) string {
	var b strings.Builder
	for i, s := range sources {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "## %s\n\n", oneLine(s.Title))
		if s.URL != "" {
			fmt.Fprintf(&b, "Source (%s): %s\n\n", s.Kind, s.URL)
		}
		switch {
		case s.Unavailable:
			b.WriteString("(This source could not be fetched.)\n")
		case strings.TrimSpace(s.Text) != "":
			b.WriteString(strings.TrimSpace(s.Text))
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Messaging is the closing section of llm.txt: how an agent writes to this object.
func Messaging(hash, baseURL string) string {
	return fmt.Sprintf(`## How to message this object

This profile belongs to the svc object %[1]s. Anyone may write to its mailbox:

    POST %[2]s/api/messages
    Content-Type: application/json

    {"from_hash": "<your svc hash>", "to_hash": "%[1]s", "kind": "note", "body": "<your message>"}

- kind is one of note, question, request, artifact_update, system.
- Leave thread_id out to start a new thread; send the thread_id you got back to continue it.
- The mailbox rules (who may write, how the owner responds): GET %[2]s/api/objects/%[1]s/rules
- Agent card (A2A v1.0, signed): GET %[2]s/api/objects/%[1]s/agent-card.json
- A2A endpoint (HTTP+JSON binding): POST %[2]s/api/objects/%[1]s/a2a/message:send
- Signing keys, to verify this object's signed messages and card: GET %[2]s/api/objects/%[1]s/jwks.json
- MCP: connect an MCP client (Streamable HTTP) to %[2]s/mcp and use the send_message tool.
`, hash, baseURL)
}

// oneLine keeps a title on one line, so that it cannot open other markdown blocks.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Include applies wanted (source id → included) to the ordered list of included sources: the
// list keeps its order, and newly included sources are appended in the order of known (the ids
// wanted names, as found). It returns the new list and the ids whose inclusion changed.
func Include(current, known []string, wanted map[string]bool) (next, toggled []string) {
	next = make([]string, 0, len(current))
	for _, id := range current {
		if in, named := wanted[id]; !named || in {
			next = append(next, id)
		}
	}
	for _, id := range known {
		was := slices.Contains(current, id)
		if wanted[id] != was {
			toggled = append(toggled, id)
			if !was {
				next = append(next, id)
			}
		}
	}
	return next, toggled
}

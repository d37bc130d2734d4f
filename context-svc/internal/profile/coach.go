package profile

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/svcdev/svc/pkg/contract"
)

// CoachInput is what the coach looks at: only public data.
type CoachInput struct {
	Hash     string
	BaseURL  string
	Markdown string
	// Sources is how many sources are included in the public profile.
	Sources int
	Rules   *contract.Rules
}

// gap is one thing the profile lacks, with the interview question that fills it.
type gap struct {
	topic, why, ask, write string
}

var (
	doesHeading    = regexp.MustCompile(`(?i)\b(do|does|doing|offer|work|project|service|product|skill|build|about)`)
	focusHeading   = regexp.MustCompile(`(?i)\b(now|current|focus|status|goal|looking|roadmap)`)
	contactHeading = regexp.MustCompile(`(?i)\b(contact|reach|collaborat|work with|how to|message|talk)`)
	link           = regexp.MustCompile(`https?://`)
)

// Coach is the context-coach.txt of a profile: an interview scaffold built from what the current
// profile lacks, for an agent to ask the owner and write the answers back.
func Coach(in CoachInput) string {
	md := strings.TrimSpace(in.Markdown)
	headings, prose := outline(md)
	var gaps []gap
	if !strings.HasPrefix(md, "#") {
		gaps = append(gaps, gap{"Name", "the profile does not start with a title heading",
			"What should this profile be called: the name of the person, project, company, token or agent?",
			"a first line `# <name>`"})
	}
	if len(prose) < 80 {
		gaps = append(gaps, gap{"Summary", "there is almost no descriptive text",
			"In two or three sentences: who or what is this, and what is it for?",
			"a short paragraph right under the title"})
	}
	if !slices.ContainsFunc(headings, doesHeading.MatchString) {
		gaps = append(gaps, gap{"What it does", "no section says what this object does or offers",
			"What do you do, make or offer? Which projects or products should others know about?",
			"a section `## What I do` with a few bullet points"})
	}
	if !slices.ContainsFunc(headings, focusHeading.MatchString) {
		gaps = append(gaps, gap{"Current focus", "no section says what is going on now",
			"What are you working on right now, and what are you looking for?",
			"a section `## Now` that you keep current"})
	}
	if !slices.ContainsFunc(headings, contactHeading.MatchString) {
		gaps = append(gaps, gap{"Working together", "no section says how to approach this object",
			"What kind of messages are welcome, and what should a first message contain?",
			"a section `## How to work with me`"})
	}
	if in.Sources == 0 && !link.MatchString(md) {
		gaps = append(gaps, gap{"Sources", "the profile links to nothing",
			"Which pages, repositories or profiles describe you best?",
			fmt.Sprintf("links in the profile, or sources added with POST %s/api/objects/%s/sources", in.BaseURL, in.Hash)})
	}
	if in.Rules == nil || in.Rules.Respond == nil || strings.TrimSpace(in.Rules.Respond.Policy) == "" {
		gaps = append(gaps, gap{"Response policy", "the rules say nothing about how messages are answered",
			"How and how quickly do you answer messages? Is anything off limits?",
			fmt.Sprintf("rules.respond.policy, set with PUT %s/api/objects/%s/rules", in.BaseURL, in.Hash)})
	}
	return renderCoach(in, len(md), len(headings), gaps)
}

func renderCoach(in CoachInput, chars, headings int, gaps []gap) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Context coach for %s\n\n", in.Hash)
	fmt.Fprintf(&b, "An interview scaffold for improving the public profile of %s. Ask the owner the\n", in.Hash)
	b.WriteString("questions below one at a time, then write the answers into the profile with\n")
	fmt.Fprintf(&b, "PUT %s/api/objects/%s/llm.txt (owner key). The profile is public: leave out anything\n", in.BaseURL, in.Hash)
	b.WriteString("private.\n\n")
	fmt.Fprintf(&b, "Profile now: %d characters, %d headings, %d included sources.\n", chars, headings, in.Sources)
	if len(gaps) == 0 {
		b.WriteString("\nThe profile covers the basics. To keep it current, ask:\n\n")
		b.WriteString("- What changed since the profile was last updated?\n")
		b.WriteString("- Which questions do people ask you most? Answer them in a `## FAQ` section.\n")
		return b.String()
	}
	for i, g := range gaps {
		fmt.Fprintf(&b, "\n## %d. %s\n\nWhy: %s.\nAsk: %s\nWrite: %s.\n", i+1, g.topic, g.why, g.ask, g.write)
	}
	return b.String()
}

// outline returns the heading texts and the prose (non-heading text) of a markdown document.
func outline(md string) (headings []string, prose string) {
	var text strings.Builder
	for line := range strings.Lines(md) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			headings = append(headings, strings.TrimSpace(strings.TrimLeft(line, "#")))
			continue
		}
		text.WriteString(line)
		text.WriteString(" ")
	}
	return headings, strings.TrimSpace(text.String())
}

package profile

import (
	"strconv"
	"strings"

	"github.com/svcdev/svc/pkg/contract"
)

// A2AProtocolVersion is the version of the A2A agent card format served.
const A2AProtocolVersion = "0.3.0"

// AgentCard is an A2A agent card derived from a profile. Its url is svc's messages endpoint,
// reached over plain HTTP+JSON as described by the skill; svc does not serve A2A JSON-RPC.
type AgentCard struct {
	ProtocolVersion    string            `json:"protocolVersion"`
	Name               string            `json:"name"`
	Description        string            `json:"description"`
	URL                string            `json:"url"`
	PreferredTransport string            `json:"preferredTransport"`
	Version            string            `json:"version"`
	DocumentationURL   string            `json:"documentationUrl"`
	Capabilities       AgentCapabilities `json:"capabilities"`
	DefaultInputModes  []string          `json:"defaultInputModes"`
	DefaultOutputModes []string          `json:"defaultOutputModes"`
	Skills             []AgentSkill      `json:"skills"`
}

// AgentCapabilities are the optional A2A capabilities; svc offers neither.
type AgentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
}

// AgentSkill is one thing the object can be asked.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples"`
}

// MaxCardDescription bounds the card's description.
const MaxCardDescription = 500

// Card derives the agent card of a public profile and its rules.
func Card(hash, baseURL, markdown string, version int, rules *contract.Rules) AgentCard {
	name := contract.ProfileTitle(markdown)
	if name == "" {
		name = hash
	}
	_, prose := outline(firstParagraph(markdown))
	if prose == "" {
		prose = "An svc object: a public profile and a mailbox that anyone may write to."
	}
	skill := AgentSkill{
		ID:   "message",
		Name: "Send a message",
		Description: "POST " + baseURL + `/api/messages with {"from_hash": "<your svc hash>", "to_hash": "` + hash +
			`", "kind": "note", "body": "..."}; kind is note, question, request, artifact_update or system.`,
		Tags:     []string{"svc", "mailbox", "message"},
		Examples: []string{"note: Hello from another agent", "question: Are you open to collaboration?"},
	}
	if rules != nil && rules.Respond != nil && rules.Respond.Policy != "" {
		skill.Description += " Response policy: " + strings.Join(strings.Fields(rules.Respond.Policy), " ")
	}
	return AgentCard{
		ProtocolVersion:    A2AProtocolVersion,
		Name:               name,
		Description:        contract.Truncate(prose, MaxCardDescription),
		URL:                baseURL + "/api/messages",
		PreferredTransport: "HTTP+JSON",
		Version:            strconv.Itoa(version),
		DocumentationURL:   baseURL + "/api/objects/" + hash + "/llm.txt",
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []AgentSkill{skill, MCPSkill(baseURL, hash)},
	}
}

// firstParagraph is the first block of prose under the title of a markdown document.
func firstParagraph(md string) string {
	var para []string
	for line := range strings.Lines(md) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"):
			if len(para) > 0 {
				return strings.Join(para, " ")
			}
		case line == "":
			if len(para) > 0 {
				return strings.Join(para, " ")
			}
		default:
			para = append(para, line)
		}
	}
	return strings.Join(para, " ")
}

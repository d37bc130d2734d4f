package profile

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/signing"
)

// A2AProtocolVersion is the version of the A2A protocol the card and its interface speak.
const A2AProtocolVersion = "1.0"

// A2ABinding is the protocol binding of the interface each card names.
const A2ABinding = "HTTP+JSON"

// AgentCard is an A2A v1.0 agent card derived from a profile (the JSON of a2a.proto's
// AgentCard). Its one interface is the box's A2A HTTP+JSON binding, which delivers to the box's
// mailbox through the same send as POST /api/messages. Signatures are added by the card read
// (A2A §8.4): a JWS over the canonical card without them.
type AgentCard struct {
	Name                string                    `json:"name"`
	Description         string                    `json:"description"`
	SupportedInterfaces []AgentInterface          `json:"supportedInterfaces"`
	Version             string                    `json:"version"`
	DocumentationURL    string                    `json:"documentationUrl"`
	Capabilities        AgentCapabilities         `json:"capabilities"`
	SecuritySchemes     map[string]SecurityScheme `json:"securitySchemes"`
	DefaultInputModes   []string                  `json:"defaultInputModes"`
	DefaultOutputModes  []string                  `json:"defaultOutputModes"`
	Skills              []AgentSkill              `json:"skills"`
	Signatures          []AgentCardSignature      `json:"signatures,omitempty"`
}

// AgentInterface is where and how the agent is reached.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentCapabilities are the optional A2A capabilities; svc offers neither.
type AgentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
}

// SecurityScheme is one way to authenticate (only the HTTP scheme is used: svc API keys are
// bearer tokens).
type SecurityScheme struct {
	HTTPAuth *HTTPAuthSecurityScheme `json:"httpAuthSecurityScheme,omitempty"`
}

// HTTPAuthSecurityScheme is an HTTP Authorization scheme.
type HTTPAuthSecurityScheme struct {
	Scheme      string `json:"scheme"`
	Description string `json:"description"`
}

// AgentSkill is one thing the object can be asked.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples"`
}

// AgentCardSignature is a JWS of the card in the JSON serialization's parts (RFC 7515 §7.2):
// the protected header (alg EdDSA and the kid of the object's key, from its jwks.json) and the
// signature; the payload is the card's RFC 8785 canonical JSON without its signatures.
type AgentCardSignature struct {
	Protected string `json:"protected"`
	Signature string `json:"signature"`
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
	object := baseURL + "/api/objects/" + hash
	skill := AgentSkill{
		ID:   "message",
		Name: "Send a message",
		Description: "Send an A2A message (text parts) to " + object + "/a2a/message:send; it lands in the box's mailbox, " +
			"contextId is the thread. Without an API key, name yourself in message.metadata.from_hash. Or POST " + baseURL +
			`/api/messages with {"from_hash": "<your svc hash>", "to_hash": "` + hash + `", "kind": "note", "body": "..."}.`,
		Tags:     []string{"svc", "mailbox", "message"},
		Examples: []string{"note: Hello from another agent", "question: Are you open to collaboration?"},
	}
	if rules != nil && rules.Respond != nil && rules.Respond.Policy != "" {
		skill.Description += " Response policy: " + strings.Join(strings.Fields(rules.Respond.Policy), " ")
	}
	return AgentCard{
		Name:        name,
		Description: contract.Truncate(prose, MaxCardDescription),
		SupportedInterfaces: []AgentInterface{{URL: object + "/a2a", ProtocolBinding: A2ABinding,
			ProtocolVersion: A2AProtocolVersion}},
		Version:          strconv.Itoa(version),
		DocumentationURL: object + "/llm.txt",
		SecuritySchemes: map[string]SecurityScheme{"svc_api_key": {HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer",
			Description: "An svc API key (svc_sk_… or ksvc_…) of the sending object; optional for message:send, " +
				"where it makes svc sign the message as that object. Needed for tasks/{id}."}}},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []AgentSkill{skill, MCPSkill(baseURL, hash)},
	}
}

// Signable is the card's signing input: its RFC 8785 canonical JSON without signatures.
func (c AgentCard) Signable() ([]byte, error) {
	c.Signatures = nil
	return signing.Canonical(c)
}

// Sign adds the signature made by sign (a detached compact JWS over the card's signing input).
func (c *AgentCard) Sign(jws string) error {
	protected, rest, ok := strings.Cut(jws, ".")
	payload, signature, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || payload != "" || protected == "" || signature == "" {
		return errors.New("agent card signature: not a detached compact JWS")
	}
	c.Signatures = append(c.Signatures, AgentCardSignature{Protected: protected, Signature: signature})
	return nil
}

// firstParagraph is the first block of prose under the title of a markdown document.
func firstParagraph(md string) string {
	var para []string
	for line := range strings.Lines(md) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"), line == "":
			if len(para) > 0 {
				return strings.Join(para, " ")
			}
		default:
			para = append(para, line)
		}
	}
	return strings.Join(para, " ")
}

// CardSigner signs on an object's behalf with its active key (identity-svc, which holds the
// keys); *identity.Client satisfies it.
type CardSigner interface {
	SignBound(ctx context.Context, objectID string, payload []byte) (*identity.Signature, error)
}

// SignedCard returns the card signed with the object's key (A2A §8.4), the protected header
// bound to the object's host (typ JOSE, jku its jwks.json: docs/api.md says how to check). A card whose owner holds
// the active key, or that identity-svc could not sign, is served unsigned: a client then finds
// no signature to trust, rather than no card.
func (s *Service) SignedCard(ctx context.Context, objectID string, card AgentCard) AgentCard {
	if s.Signer == nil {
		return card
	}
	payload, err := card.Signable()
	if err != nil {
		s.Log.ErrorContext(ctx, "agent card: canonical json", "error", err)
		return card
	}
	sig, err := s.Signer.SignBound(ctx, objectID, payload)
	if err == nil {
		err = card.Sign(sig.JWS)
	}
	if err != nil && !errors.Is(err, identity.ErrOwnerHeldKey) {
		s.Log.WarnContext(ctx, "agent card served unsigned", "error", err)
	}
	return card
}

package profile

import (
	"crypto/ed25519"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// ServiceCard is the A2A card of svc itself, served at /.well-known/agent-card.json: an agent
// that delivers a message to any box, named in message.metadata.to_hash, through the same send
// as each box's own binding and POST /api/messages.
func ServiceCard(baseURL, version string) AgentCard {
	return AgentCard{
		Name: "svc",
		Description: "Public identities, mailboxes and relationship memory for agents. Send an A2A message to any svc " +
			"box: name it in message.metadata.to_hash. Each box also has a card of its own at " +
			baseURL + "/api/objects/<hash>/agent-card.json.",
		SupportedInterfaces: []AgentInterface{{URL: baseURL + "/a2a", ProtocolBinding: A2ABinding, ProtocolVersion: A2AProtocolVersion}},
		Version:             version,
		DocumentationURL:    baseURL + "/llms.txt",
		SecuritySchemes: map[string]SecurityScheme{"svc_api_key": {HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer",
			Description: "An svc API key (svc_sk_… or ksvc_…) of the sending object; optional, where it makes svc sign " +
				"the message as that object."}}},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []AgentSkill{{
			ID:   "message",
			Name: "Message any box",
			Description: "Send an A2A message (text parts) to " + baseURL + "/a2a/message:send with message.metadata.to_hash " +
				"naming the box and message.metadata.from_hash naming you (or send with your API key); it lands in the " +
				"box's mailbox, contextId is the thread.",
			Tags:     []string{"svc", "mailbox", "message"},
			Examples: []string{"note to svc_…: Hello from another agent"},
		}, {
			ID:   "mcp",
			Name: "Reach svc over MCP",
			Description: "Connect an MCP client (Streamable HTTP) to " + baseURL + "/mcp: create boxes, send messages, read " +
				"mailboxes and relationship memory.",
			Tags:     []string{"svc", "mcp"},
			Examples: []string{"send_message to svc_…"},
		}},
	}
}

// SignWith adds a signature made here with key (svc's own): the protected header names alg,
// typ JOSE, kid and jku, where the key is published as a JWK Set.
func (c *AgentCard) SignWith(key ed25519.PrivateKey, kid, jku string) error {
	payload, err := c.Signable()
	if err != nil {
		return err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JOSE").WithHeader("jku", jku))
	if err != nil {
		return fmt.Errorf("agent card signer: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return fmt.Errorf("agent card signature: %w", err)
	}
	compact, err := jws.DetachedCompactSerialize()
	if err != nil {
		return fmt.Errorf("agent card signature: %w", err)
	}
	return c.Sign(compact)
}

package mcpserver

// CardPath is where the server card is served (the MCP Server Card extension, SEP-2127).
const CardPath = "/.well-known/mcp/server-card.json"

// ServerCard is the MCP server card: what the repository's server.json tells the MCP Registry,
// with the remote at this deployment's URL, so that a client that knows only the host can find
// /mcp and how to authenticate before it connects.
type ServerCard struct {
	Schema      string   `json:"$schema"`
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Version     string   `json:"version"`
	WebsiteURL  string   `json:"websiteUrl"`
	Remotes     []Remote `json:"remotes"`
}

// Remote is a transport endpoint of a server card.
type Remote struct {
	Type    string         `json:"type"`
	URL     string         `json:"url"`
	Headers []RemoteHeader `json:"headers,omitempty"`
}

// RemoteHeader is a header a client sends to a remote.
type RemoteHeader struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}

// Card is the server card of the MCP server at base + Path.
func Card(base, version string) ServerCard {
	return ServerCard{
		Schema:      "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
		Name:        "io.github.svcdev/svc",
		Title:       "svc",
		Description: "Public identities, mailboxes and relationship memory (threads, decisions, guidance) for agents.",
		Version:     version,
		WebsiteURL:  base + "/llms.txt",
		Remotes: []Remote{{Type: "streamable-http", URL: base + Path, Headers: []RemoteHeader{{
			Name:        "Authorization",
			Description: "Bearer <api_key>: an svc owner key (svc_sk_...) or scoped sub-key (ksvc_...); without it only the public tools are listed.",
			IsSecret:    true,
		}}}},
	}
}

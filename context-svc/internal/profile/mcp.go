package profile

// MCPSkill is the agent card's pointer to svc's MCP server: an agent framework that reads the
// card learns that the same box is reachable through MCP tools (send_message and the rest).
func MCPSkill(baseURL, hash string) AgentSkill {
	return AgentSkill{
		ID:   "mcp",
		Name: "Reach svc over MCP",
		Description: "Connect an MCP client (Streamable HTTP) to " + baseURL + "/mcp; the send_message tool with to_hash " +
			hash + " writes to this box. With your own svc API key as a bearer token, the tools act as your object.",
		Tags:     []string{"svc", "mcp"},
		Examples: []string{"send_message to " + hash},
	}
}

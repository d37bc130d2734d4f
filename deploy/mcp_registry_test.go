package deploy

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMCPRegistryServerJSON checks the repository's server.json against the MCP Registry's
// rules that a publish would enforce: a reverse-DNS name, a description of at most 100
// characters, a version, and a streamable-http remote at /mcp whose key header is secret.
func TestMCPRegistryServerJSON(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../server.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Schema      string `json:"$schema"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Version     string `json:"version"`
		Remotes     []struct {
			Type    string `json:"type"`
			URL     string `json:"url"`
			Headers []struct {
				Name     string `json:"name"`
				IsSecret bool   `json:"isSecret"`
			} `json:"headers"`
		} `json:"remotes"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("server.json: %v", err)
	}
	if !strings.HasPrefix(s.Schema, "https://static.modelcontextprotocol.io/schemas/") ||
		!regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`).MatchString(s.Name) ||
		s.Description == "" || len(s.Description) > 100 || s.Version == "" {
		t.Errorf("server.json header: %+v", s)
	}
	if len(s.Remotes) != 1 || s.Remotes[0].Type != "streamable-http" || !strings.HasSuffix(s.Remotes[0].URL, "/mcp") ||
		!strings.HasPrefix(s.Remotes[0].URL, "https://") {
		t.Fatalf("server.json remotes: %+v", s.Remotes)
	}
	for _, h := range s.Remotes[0].Headers {
		if h.Name == "Authorization" && !h.IsSecret {
			t.Error("the Authorization header of server.json is not marked secret")
		}
	}
}

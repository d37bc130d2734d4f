# The MCP server's protocol checks, included by the root Makefile; recipes run from the repository root.

.PHONY: test-mcp

## test-mcp: the official MCP conformance suite's server requirement sets (2026-07-28, 2025-11-25)
## and the TypeScript SDK client (with a key, and through its own OAuth flow from the server URL
## alone; needs openssl) against /mcp of a fresh all-in-one, and the suite's authorization-server
## scenarios against its issuer (npm installs the pinned suite, SDK and a Node 22 binary into a temp dir)
test-mcp:
	deploy/mcp/check.sh

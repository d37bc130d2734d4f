# The MCP server's protocol checks, included by the root Makefile; recipes run from the repository root.

.PHONY: test-mcp

## test-mcp: the official MCP conformance suite and the TypeScript SDK client (with a key, and through
## its own OAuth flow from the server URL alone; needs openssl) against /mcp of a fresh all-in-one,
## and the newest suite's authorization-server scenarios against its issuer
## (npm installs the pinned suites, SDK and a Node 22 binary into a temp dir)
test-mcp:
	deploy/mcp/check.sh

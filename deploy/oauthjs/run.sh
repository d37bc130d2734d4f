#!/usr/bin/env bash
# make test-oauth-js: starts the all-in-one on a free loopback port with a throw-away data
# directory, trusting a throw-away certificate for the client's metadata document that check.mjs
# serves on loopback, installs the pinned npm oauth4webapi, and runs check.mjs against it.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --silent
root=$(cd ../.. && pwd)
data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$data/cimd.key" -out "$data/cimd.pem" 2>/dev/null
(cd "$root" && go build -o "$data/allinone" ./deploy/allinone)
SVC_ADDR=127.0.0.1:$port SVC_DATA_DIR=$data/store SVC_LOG_LEVEL=warn SVC_OUTBOUND_ALLOW_PRIVATE=true \
  SVC_OUTBOUND_CA_FILE=$data/cimd.pem "$data/allinone" >"$data/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 120); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { cat "$data/log"; exit 1; }
  sleep 0.5
done
SVC_URL=http://127.0.0.1:$port CIMD_CERT=$data/cimd.pem CIMD_KEY=$data/cimd.key node check.mjs || { tail -50 "$data/log"; exit 1; }

#!/usr/bin/env bash
# make test-did-js: start the all-in-one on a free loopback port behind a TLS front (did:web
# resolves over HTTPS only) with a throwaway certificate, install the pinned did-resolver,
# web-did-resolver and jose into a temporary directory, and run check.mjs against it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port="$(free_port)"
tls_port="$(free_port)"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent \
  did-resolver@6.0.0 web-did-resolver@2.0.32 jose@6.2.17)
cp "$here/check.mjs" "$work/"
(cd "$root" && go build -o "$work/allinone" ./deploy/allinone)
SVC_ADDR="127.0.0.1:$port" SVC_BASE_URL="https://127.0.0.1:$tls_port" SVC_DATA_DIR="$work/data" SVC_LOG_LEVEL=warn \
  "$work/allinone" >"$work/allinone.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$work/allinone.log"; exit 1; }
(cd "$work" && NODE_EXTRA_CA_CERTS="$work/cert.pem" UPSTREAM="http://127.0.0.1:$port" TLS_PORT="$tls_port" \
  TLS_CERT="$work/cert.pem" TLS_KEY="$work/key.pem" node check.mjs) || { tail -50 "$work/allinone.log"; exit 1; }

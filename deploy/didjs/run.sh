#!/usr/bin/env bash
# make test-did-js: start the all-in-one on a free loopback port behind a TLS front (did:web
# resolves over HTTPS only) with a throwaway certificate, install the pinned did-resolver,
# web-did-resolver and jose into a temporary directory, and run check.mjs against it.
source "$(dirname "$0")/../allinone.sh"
port="$(free_port)"
tls_port="$(free_port)"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent \
  did-resolver@6.0.0 web-did-resolver@2.0.32 jose@6.2.17)
cp "$root/deploy/didjs/check.mjs" "$work/"
start_allinone "$port" SVC_BASE_URL="https://127.0.0.1:$tls_port"
(cd "$work" && NODE_EXTRA_CA_CERTS="$work/cert.pem" UPSTREAM="http://127.0.0.1:$port" TLS_PORT="$tls_port" \
  TLS_CERT="$work/cert.pem" TLS_KEY="$work/key.pem" node check.mjs) || fail_with_log

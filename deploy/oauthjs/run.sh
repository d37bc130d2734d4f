#!/usr/bin/env bash
# make test-oauth-js: starts the all-in-one on a free loopback port with a throw-away data
# directory, trusting a throw-away certificate for the client's metadata document that check.mjs
# serves on loopback, installs the pinned npm oauth4webapi, and runs check.mjs against it.
source "$(dirname "$0")/../allinone.sh"
cd "$root/deploy/oauthjs"
npm ci --no-audit --no-fund --silent
port="$(free_port)"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$work/cimd.key" -out "$work/cimd.pem" 2>/dev/null
start_allinone "$port" SVC_OUTBOUND_ALLOW_PRIVATE=true SVC_OUTBOUND_CA_FILE="$work/cimd.pem"
SVC_URL=http://127.0.0.1:$port CIMD_CERT=$work/cimd.pem CIMD_KEY=$work/cimd.key node check.mjs || fail_with_log

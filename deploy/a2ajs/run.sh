#!/usr/bin/env bash
# make test-a2a-js: start the all-in-one on a free loopback port with a throwaway data dir, install
# the pinned @a2a-js/sdk, jose and canonicalize into a temporary directory, and run check.mjs
# against it.
source "$(dirname "$0")/../allinone.sh"
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent @a2a-js/sdk@1.3.0 jose@6.2.18 canonicalize@5.1.0)
cp "$root/deploy/a2ajs/check.mjs" "$work/"
port="$(free_port)"
start_allinone "$port"
(cd "$work" && BASE="http://127.0.0.1:$port" node check.mjs) || fail_with_log

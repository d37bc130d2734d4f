#!/usr/bin/env bash
# make test-sse-js: starts the all-in-one on a free loopback port with a throw-away data
# directory, installs the pinned npm eventsource package, and runs check.mjs against it.
source "$(dirname "$0")/../allinone.sh"
cd "$root/deploy/ssejs"
npm ci --no-audit --no-fund --silent
port="$(free_port)"
start_allinone "$port"
SVC_URL=http://127.0.0.1:$port node check.mjs || fail_with_log

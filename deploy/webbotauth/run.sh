#!/usr/bin/env bash
# make test-web-bot-auth: start the all-in-one on a free loopback port with a throwaway data dir,
# install Cloudflare's pinned web-bot-auth verifier into a temporary directory, and run check.mjs:
# requests signed by `svc sign-request` verify with it, and changed or expired ones do not.
source "$(dirname "$0")/../allinone.sh"
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent web-bot-auth@0.1.3)
cp "$root/deploy/webbotauth/check.mjs" "$work/"
(cd "$root" && go build -o "$work/svc" ./deploy/cmd/svc)
port="$(free_port)"
start_allinone "$port"
(cd "$work" && BASE="http://127.0.0.1:$port" SVC="$work/svc" node check.mjs) || fail_with_log

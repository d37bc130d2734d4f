# Sourced by the scripts that check svc with other ecosystems' clients (make test-a2a-js,
# test-did-js, test-web-bot-auth, test-sse-js, test-oauth-js). After sourcing:
#   $root           the repository's root
#   $work           a temporary directory, removed on exit
#   free_port       prints a free loopback port
#   start_allinone PORT [NAME=value ...]
#                   builds the all-in-one into $work and starts it on 127.0.0.1:PORT with a
#                   throw-away data directory and the given environment, waits until it is ready
#                   (or prints its log and fails), and stops it on exit
#   fail_with_log   prints the end of the all-in-one's log and fails: `node check.mjs || fail_with_log`
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
allinone_pid=""
cleanup() {
  if [ -n "$allinone_pid" ]; then kill "$allinone_pid" 2>/dev/null || true; wait "$allinone_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_allinone() {
  local port=$1
  shift
  (cd "$root" && go build -o "$work/allinone" ./deploy/allinone)
  env SVC_ADDR="127.0.0.1:$port" SVC_DATA_DIR="$work/data" SVC_LOG_LEVEL=warn "$@" "$work/allinone" >"$work/allinone.log" 2>&1 &
  allinone_pid=$!
  for _ in $(seq 1 240); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$allinone_pid" 2>/dev/null || break
    sleep 0.5
  done
  cat "$work/allinone.log"
  echo "the all-in-one is not ready" >&2
  return 1
}

fail_with_log() {
  tail -50 "$work/allinone.log"
  exit 1
}

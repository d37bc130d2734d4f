#!/bin/sh
# Builds one service's binary the way its container image does: static (no cgo), with module
# paths trimmed and symbols stripped. The Dockerfile's build stage runs this script, and so does
# `make deploy-check` for every service in go.work, so a broken image build shows without Docker.
#
# Usage: deploy/build.sh SERVICE OUTDIR    (GOOS and GOARCH are honoured for cross builds)
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 SERVICE OUTDIR" >&2
	exit 2
fi
service=$1
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)

case $service in
'' | */* | .*)
	echo "$0: '$service' is not a service name" >&2
	exit 2
	;;
esac
if [ ! -d "$root/$service/cmd/$service" ]; then
	echo "$0: $service has no $service/cmd/$service in $root" >&2
	exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$out/$service" "./$service/cmd/$service"

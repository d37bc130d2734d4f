# svc: every module of the workspace is tested, vetted and benchmarked from here.
MODULES := $(shell go work edit -json | sed -n 's/.*"DiskPath": "\.\/\(.*\)".*/\1/p')
# The timeout guards against a hang; the end-to-end package alone takes about ten minutes on two cores.
GO_TEST_FLAGS ?= -count=1 -timeout 25m

.PHONY: test-ferretdb ferretdb-patch test test-browser test-system test-a2a-js test-did-js test-web-bot-auth lint run bench build fmt-check bench-embedded bench-range bench-stack bench-fresh test-sse-js test-oauth-js bench-scale

include deploy/deploy.mk
include deploy/mcp.mk

## test: every test of every module (embedded FerretDB, kfake and miniredis; nothing to install),
## then FerretDB's unit tests of the packages third_party/ferretdb patches (FERRETDB_TEST_PKGS).
## Every module runs, also after one fails; the failed ones are named at the end.
test:
	@failed=""; for m in $(MODULES); do echo "== go test $$m"; (cd $$m && go test $(GO_TEST_FLAGS) ./...) || failed="$$failed $$m"; done; \
	if [ -n "$(FERRETDB_TEST_PKGS)" ]; then $(MAKE) -s test-ferretdb || failed="$$failed third_party/ferretdb"; fi; \
	if [ -n "$$failed" ]; then echo "FAILED modules:$$failed"; exit 1; fi

# The patched FerretDB's packages whose tests need no database server (internal/backends' own tests
# need PostgreSQL). It is its own module, outside go.work, hence GOWORK=off.
FERRETDB_TEST_PKGS ?= ./internal/backends/sqlite/... ./internal/handler/ ./internal/handler/common/... ./internal/handler/sjson/ ./internal/util/fsql/ ./internal/util/resource/
FERRETDB_MODULE = github.com/FerretDB/FerretDB@v1.24.0
WIRE_MODULE = github.com/FerretDB/wire@v0.0.7

## test-ferretdb: FerretDB's unit tests of the packages third_party/ferretdb patches, the patch's own among them
test-ferretdb:
	@echo "== go test third_party/ferretdb"
	cd third_party/ferretdb && GOWORK=off go test $(GO_TEST_FLAGS) $(FERRETDB_TEST_PKGS)
	@echo "== go test third_party/wire"
	cd third_party/wire && GOWORK=off go test $(GO_TEST_FLAGS) -short ./...

## ferretdb-patch: rewrite third_party/ferretdb/svc.patch and third_party/wire/svc.patch, the diffs
## from the published modules to the trees
ferretdb-patch:
	@$(call module-patch,$(FERRETDB_MODULE),third_party/ferretdb)
	@$(call module-patch,$(WIRE_MODULE),third_party/wire)

# module-patch writes $(2)/svc.patch: the diff from the published module $(1) to the tree $(2),
# leaving out the README and the patch itself.
define module-patch
set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
dir=$$(cd "$$tmp" && GOWORK=off go mod download -json $(1) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
cp -r "$$dir" "$$tmp/a"; cp -r $(2) "$$tmp/b"; chmod -R u+w "$$tmp/a"; \
rm -f "$$tmp/a/README.md" "$$tmp/b/README.md" "$$tmp/b/svc.patch"; \
(cd "$$tmp" && diff -ruN a b > patch) || test $$? -eq 1; mv "$$tmp/patch" $(2)/svc.patch
endef

## test-browser: the home page and box pages in a real headless Chromium (Debian: apt-get install -y
## chromium), at phone and desktop size: screenshots (SCREENSHOT_DIR) and axe-core's accessibility
## check, axe-core installed pinned from npm into deploy/axe (needs npm). Without Chromium it skips,
## saying so, unless CI is set; CI installs Chromium and sets it.
test-browser:
	cd deploy/axe && npm ci --no-audit --no-fund --silent
	cd deploy && go vet -tags browser ./e2e && AXE_CORE_JS=$(CURDIR)/deploy/axe/node_modules/axe-core/axe.min.js \
		go test $(GO_TEST_FLAGS) -tags browser -run 'InChromium' -v ./e2e

## test-sse-js: an owner's event stream of the all-in-one followed by the npm eventsource package
## (pinned in deploy/ssejs; needs node >= 18 and npm)
test-sse-js:
	deploy/ssejs/run.sh

## test-oauth-js: the npm oauth4webapi client (pinned in deploy/oauthjs; needs node >= 20, npm and
## openssl) connects to the all-in-one's /mcp through OAuth: code + PKCE with a Client ID Metadata
## Document served on loopback, the consent page, iss validated, then tools/call send_message; and
## client_credentials with private_key_jwt signed by the box's own Ed25519 key
test-oauth-js:
	deploy/oauthjs/run.sh

## test-a2a-js: the official A2A JavaScript SDK (@a2a-js/sdk) and jose, pinned and installed from npm
## into a temporary directory, against the all-in-one on a free port: a box's signed card verifies
## against its jwks.json and a message sent through the card lands in the box's mailbox (needs node).
test-a2a-js:
	deploy/a2ajs/run.sh

## test-did-js: the DIF's did:web resolver (npm did-resolver and web-did-resolver) with jose, pinned
## and installed from npm into a temporary directory, against the all-in-one behind a TLS front on
## loopback: objects' DIDs resolve to their jwks.json keys, before and after a rotation (needs node,
## openssl).
test-did-js:
	deploy/didjs/run.sh

## test-web-bot-auth: Cloudflare's web-bot-auth verifier, pinned and installed from npm into a
## temporary directory, checks requests signed by `svc sign-request` as an object of the all-in-one
## (needs node).
test-web-bot-auth:
	deploy/webbotauth/run.sh

## test-system: pkg's tests and the end-to-end suite on FerretDB over a real PostgreSQL and a real
## redis-server, which .ci/with-system-backends starts in a temporary directory (Debian: apt-get
## install -y postgresql redis-server); the PostgreSQL checks of the embedded store fail, not skip.
test-system:
	.ci/with-system-backends sh -c 'cd pkg && go test $(GO_TEST_FLAGS) ./... && cd ../deploy && go test $(GO_TEST_FLAGS) ./e2e'

## lint: go vet on every module, and gofmt drift
lint: fmt-check
	@set -e; for m in $(MODULES); do echo "== go vet $$m"; (cd $$m && go vet ./...); done

fmt-check:
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## build: every binary
build:
	@set -e; for m in $(MODULES); do (cd $$m && go build ./...); done

## run: the whole suite in one process, gateway on SVC_ADDR (default 127.0.0.1:8080)
run:
	@echo "compiling the suite (the first time with empty Go caches: several minutes; each package is named as it builds)" >&2
	go build -v -o bin/allinone ./deploy/allinone
	./bin/allinone

## bench: benchmarks that print figures (gateway auth and proxy path, …)
bench:
	@set -e; for m in $(MODULES); do (cd $$m && go test -run '^$$' -bench . -benchmem ./...); done

## bench-embedded: FindOne({_id}) at 1,000 and 100,000 documents on both FerretDB handlers;
## needs FERRETDB_POSTGRESQL_URL (see pkg/embedded/idindex_test.go)
bench-embedded:
	@test -n "$$FERRETDB_POSTGRESQL_URL" || { echo "bench-embedded: set FERRETDB_POSTGRESQL_URL (apt-get install postgresql; see pkg/embedded/idindex_test.go)"; exit 1; }
	cd pkg && go test -count=1 -run '^$$' -bench FindOneByID ./embedded/

## bench-range: a page of 50 of a list (mongox.Find of an _id range, _id sort and limit) at 1,000
## and 100,000 documents, ascending, descending and after a cursor, on SQLite, and on PostgreSQL
## when FERRETDB_POSTGRESQL_URL is set (see pkg/embedded/idrange_test.go)
bench-range:
	cd pkg && go test -count=1 -timeout 30m -run '^$$' -bench IDRangePage ./embedded/

## bench-stack: load the all-in-one and print its figures (docs/benchmarks.md "Stack benchmark");
## BENCH_STACK_FLAGS passes flags, e.g. "-send-phase 5s -phase 3s -idle 5s" for a short run
bench-stack:
	go run ./deploy/benchstack $(BENCH_STACK_FLAGS)

## bench-fresh: ramp the send rate on the all-in-one and print, per rate, the p99 from a send's 201 to
## its recipient's mailbox, graph node, webhook delivery and stream event, and the highest rate at
## which all four stay within 1 s, beside raw insertOne on the same store (and their ratio); then an overload
## burst through the front door (LAG_LIMIT 2 s): its share of 503s, the freshness of what was accepted and
## any accepted send never seen (docs/benchmarks.md "Freshness benchmark");
## BENCH_FRESH_FLAGS passes flags, e.g. "-phase 5s"
bench-fresh:
	go run ./deploy/benchstack -fresh $(BENCH_FRESH_FLAGS)

## bench-scale: preload the stores to 1,000 then 100,000 (BENCH_SCALE_SIZES, comma-separated) and
## print p50/p99 of each list route at both sizes, their ratio and peak RSS under 16 readers
## (docs/benchmarks.md "Scale benchmark"); make test runs it small (TestScaleSmoke)
bench-scale:
	cd deploy && go test -count=1 -timeout 0 -run '^$$' -bench '^BenchmarkScale$$' -benchtime 1x ./e2e

# Deployment checks, included by the root Makefile; recipes run from the repository root.

# The services: every module go.work uses except pkg and deploy (as deploy/internal/suite reads it).
DEPLOY_SERVICES = $(filter-out pkg deploy,$(patsubst ./%,%,$(shell go work edit -json | sed -n 's/^[[:space:]]*"DiskPath": "\(.*\)",*$$/\1/p')))

.PHONY: deploy-check deploy-test deploy-build

# deploy-check: the chart, compose and image tests, then every service built as its image builds it.
deploy-check: deploy-test deploy-build

# -count=1: the tests read go.work, which lies outside the deploy module, so Go's test cache
# would not notice a service being added to it.
deploy-test:
	go test -count=1 ./deploy/...

deploy-build:
	@set -e; out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; \
	for service in $(DEPLOY_SERVICES); do \
		echo "deploy/build.sh $$service"; \
		deploy/build.sh "$$service" "$$out"; \
	done

# ratekit: make run (demo server), make test, make bench, make lint,
# make api (record the exported API), make release VERSION=vX.Y.Z.
GO      ?= go
MODULES := . store/redisstore store/redisstore/rueidisstore store/redisstore/integration internal/redistest examples adapters/gin adapters/echo adapters/fiber adapters/grpc adapters/paritytest examples/gin examples/echo examples/fiber examples/grpc observe/prometheus observe/otel tools
ARGS    ?=

.PHONY: run test bench bench-peers lint api release

# The demo server on :8080, on the in-process store unless -redis or
# REDIS_URL names a Redis: make run ARGS="-addr 127.0.0.1:8080 -quota 5".
run:
	$(GO) run ./examples/server $(ARGS)

# Every module's tests with the race detector. Tests start redis-server from
# PATH when present (REDIS_ADDR to use your own); without it they say so and
# the tests that need a real server skip (CI sets RATEKIT_REQUIRE_REDIS=1).
test:
	@command -v redis-server >/dev/null 2>&1 || echo "note: redis-server is not on PATH: the tests that need a real Redis skip (CI requires one)"
	@set -e; for m in $(MODULES); do echo "== $$m"; (cd $$m && $(GO) test -race -count=1 -p 1 ./...); done

bench:
	@set -e; for m in $(MODULES); do echo "== $$m"; (cd $$m && $(GO) test -run '^$$' -bench . -benchmem ./...); done

lint:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) vet ./...); done
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@if command -v staticcheck >/dev/null 2>&1; then for m in $(MODULES); do (cd $$m && staticcheck ./...); done; fi

# Ratekit against a floor and other Go limiters on a private redis-server
# (bench/ is its own module, outside MODULES: it pulls in the peers).
bench-peers:
	cd bench && $(GO) run ./cmd/compare -rounds 3 -duration 2s $(ARGS)
	cd bench && $(GO) test -run '^$$' -bench . -benchmem -count 3 .

# Write the exported API of every released module to api/ (review the diff,
# name the change in CHANGELOG.md); tools/repo's TestAPI fails until it is.
api:
	$(GO) run ./tools/cmd/apirecord

# Release every library module at VERSION (docs/releasing.md): requirements
# set and committed, lint and tests run, tags made; nothing is pushed.
release:
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=vX.Y.Z"; exit 2; }
	$(GO) run ./tools/cmd/release $(VERSION)

# termkeep — the two commands a new user types are `make run` and `make test`.

GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# The holder is built lean: no symbol tables, so its text (shared, not
# private) is small, and nothing of the CLI or the registry linked in.
HOLDER_LDFLAGS := -s -w

.PHONY: all build run test test-short test-web web chromium fuzz bench bench-quick deps clean

all: build

# Go modules, and the npm packages of web/ (xterm.js and its addons,
# esbuild, TypeScript, Playwright's driver; the screen model's tests also
# run xterm.js under node as their reference). npm ci runs again only when
# package.json or package-lock.json changed.
deps:
	$(GO) mod download
	@if [ -f web/package-lock.json ]; then \
		if command -v npm >/dev/null 2>&1; then \
			if [ ! -f web/node_modules/.termkeep-ci ] || [ web/package-lock.json -nt web/node_modules/.termkeep-ci ] || [ web/package.json -nt web/node_modules/.termkeep-ci ]; then \
				npm ci --prefix web --no-audit --no-fund && touch web/node_modules/.termkeep-ci; \
			fi; \
		else \
			echo "npm is missing: install Node.js and npm (apt-get install nodejs npm), then run make again; without them the binary has no web UI and the screen model's xterm.js tests fail" >&2; \
		fi; \
	fi

# The browser UI: web/src bundled by esbuild into web/dist, which the
# termkeep binary embeds (package termkeep/web). Rebuilt when a source
# changed; without npm the binary serves a page saying how to build it.
WEB_SRC := $(wildcard web/src/*) web/build.mjs web/package-lock.json
web/dist/index.html: $(WEB_SRC)
	@if command -v npm >/dev/null 2>&1; then \
		npm run --silent build --prefix web; \
	else \
		echo "npm is missing: building termkeep without its web UI" >&2; \
	fi

web: deps web/dist/index.html

build: deps web
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/termkeep ./cmd/termkeep
	$(GO) build -trimpath -ldflags '$(HOLDER_LDFLAGS)' -o $(BIN)/termkeep-holder ./cmd/termkeep-holder

# Builds everything and runs the server in the foreground. Sessions keep
# running when it stops (Ctrl-C).
run: build
	./$(BIN)/termkeep serve

# The whole suite: vet, then every test with the race detector, a real pty,
# a real shell, a real SQLite file and real sockets; then the browser UI's
# tests in a real (headless) Chromium.
test: build chromium
	@command -v tmux >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq tmux) || echo "tmux is missing and could not be installed: the screen model's tmux test will fail" >&2
	@(command -v zsh && command -v fish) >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh fish >/dev/null) || echo "zsh or fish is missing and could not be installed: their shell integration tests are skipped" >&2
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...
	$(MAKE) test-web

# The browser tests (web/test/ui): each starts bin/termkeep with its own
# state directory and drives Debian's Chromium with playwright-core (no
# browser is downloaded). Screenshots go to test-artifacts/ui/.
CHROMIUM ?= /usr/bin/chromium
test-web: build chromium
	cd web && npx tsc --noEmit -p .
	CHROMIUM=$(CHROMIUM) TERMKEEP_BIN=$(CURDIR)/$(BIN) TERMKEEP_ARTIFACTS=$(CURDIR)/test-artifacts/ui npm test --prefix web

# Debian's Chromium, installed when missing (as root; otherwise it says how).
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; \
		else \
			echo "Chromium is missing ($(CHROMIUM)): run 'sudo apt-get install -y chromium' (or set CHROMIUM=/path/to/chromium), then make test-web again" >&2; exit 1; \
		fi; \
	fi

test-short: deps
	$(GO) test -short -count=1 ./...

# Each decoder's fuzz target for a while (not part of `make test`, which runs
# their seed corpora).
FUZZTIME ?= 30s
fuzz: deps
	$(GO) test -run='^$$' -fuzz=FuzzReadFrame -fuzztime=$(FUZZTIME) ./internal/wire/
	$(GO) test -run='^$$' -fuzz=FuzzOpen -fuzztime=$(FUZZTIME) ./internal/outlog/
	$(GO) test -run='^$$' -fuzz=FuzzAppendRead -fuzztime=$(FUZZTIME) ./internal/outlog/

# Throughput against the raw pty (and tmux), written to docs/PERFORMANCE.md.
bench: build
	@command -v tmux >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq tmux) || true
	$(GO) run ./bench -bin $(BIN) -out docs/PERFORMANCE.md

bench-quick: build
	$(GO) run ./bench -bin $(BIN) -quick

clean:
	rm -rf $(BIN) test-artifacts
	find web/dist -mindepth 1 ! -name .gitkeep -delete

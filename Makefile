# termkeep — the two commands a new user types are `make run` and `make test`.

GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# The holder is built lean: no symbol tables, so its text (shared, not
# private) is small, and nothing of the CLI or the registry linked in.
HOLDER_LDFLAGS := -s -w

.PHONY: all build run test test-short fuzz bench bench-quick deps clean

all: build

# Go modules, and the npm packages of web/ (xterm.js, which the screen
# model's tests run under node as their reference).
deps:
	$(GO) mod download
	@if [ -f web/package-lock.json ]; then \
		if command -v npm >/dev/null 2>&1; then \
			npm ci --prefix web --no-audit --no-fund; \
		else \
			echo "npm is missing: install Node.js and npm (apt-get install nodejs npm), then run make again; without them the screen model's xterm.js tests fail" >&2; \
		fi; \
	fi

build: deps
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/termkeep ./cmd/termkeep
	$(GO) build -trimpath -ldflags '$(HOLDER_LDFLAGS)' -o $(BIN)/termkeep-holder ./cmd/termkeep-holder

# Builds everything and runs the server in the foreground. Sessions keep
# running when it stops (Ctrl-C).
run: build
	./$(BIN)/termkeep serve

# The whole suite: vet, then every test with the race detector, a real pty,
# a real shell, a real SQLite file and real sockets.
test: deps
	@command -v tmux >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq tmux) || echo "tmux is missing and could not be installed: the screen model's tmux test will fail" >&2
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

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
	rm -rf $(BIN)

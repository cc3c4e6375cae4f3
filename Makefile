# termkeep — the two commands a new user types are `make run` and `make test`.

GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# The holder is built lean: no symbol tables, so its text (shared, not
# private) is small, and nothing of the CLI or the registry linked in; and
# static (CGO_ENABLED=0: it resolves no names, and without libc an idle
# holder is about 100 KiB smaller).
HOLDER_LDFLAGS := -s -w
# and with the collector Go had before Green Tea (Go 1.26's default): an
# idle holder never collects (its hot paths allocate nothing), yet Green
# Tea's spans cost it about 65 KiB more resident memory (PSS 1039 against
# 975 KiB, 50 idle holders). Green Tea pays off on large heaps and many
# cores; a holder has a small heap and one P. A Go that no longer knows
# the old collector builds the holder with its default.
HOLDER_GC := $(shell GOEXPERIMENT=nogreenteagc $(GO) version >/dev/null 2>&1 && echo GOEXPERIMENT=nogreenteagc)
HOLDER_GOENV := CGO_ENABLED=0 $(HOLDER_GC)

.PHONY: all build run install test test-deps test-short test-web web chromium fuzz bench bench-quick soak parity deps tidy clean

all: build

# Go modules, and the npm packages of web/ (xterm.js and its addons,
# esbuild, TypeScript, Playwright's driver; the screen model's tests also
# run xterm.js under node as their reference). npm ci runs again only when
# package.json or package-lock.json changed. A web/node_modules that is a
# symbolic link (one install shared by several checkouts) is left alone:
# npm ci would empty the directory it points to, under the other checkouts.
deps:
	$(GO) mod download
	@if [ -f web/package-lock.json ]; then \
		if [ -L web/node_modules ]; then \
			: ; \
		elif command -v npm >/dev/null 2>&1; then \
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

# termkeep is the lean build (tag lean): every command but serve, mcp and
# doctor, which it hands to termkeep-server, the full build, by exec; so
# attach and the other client commands start without the server's package
# initialisers (docs/architecture.md, "Processes"). It is static, as
# the holder: without libc's dynamic loading and start-up it starts 0.8 ms
# sooner (3.2 against 4.0 ms, perf stat -r 60), and it looks up no names.
build: deps web
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -tags lean -ldflags '$(LDFLAGS)' -o $(BIN)/termkeep ./cmd/termkeep
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/termkeep-server ./cmd/termkeep
	$(HOLDER_GOENV) $(GO) build -trimpath -ldflags '$(HOLDER_LDFLAGS)' -o $(BIN)/termkeep-holder ./cmd/termkeep-holder

# Builds everything and runs the server in the foreground. Sessions keep
# running when it stops (Ctrl-C).
run: build
	./$(BIN)/termkeep serve

# Installs termkeep, termkeep-server and termkeep-holder in $(PREFIX)/bin (default
# ~/.local/bin), so that plain `termkeep` works from any directory.
PREFIX ?= $(HOME)/.local
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN)/termkeep $(BIN)/termkeep-server $(BIN)/termkeep-holder $(DESTDIR)$(PREFIX)/bin/
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "$(PREFIX)/bin is not on PATH: add it (export PATH=\"$(PREFIX)/bin:\$$PATH\") to run termkeep by name" >&2;; esac

# The whole suite: vet, then every test with the race detector, a real pty,
# a real shell, a real SQLite file and real sockets; and the browser UI's
# tests in a real (headless) Chromium, started first, beside all of that:
# they mostly wait on Chromium and the page, and need only the plain build.
# The end-to-end tests are split by area (internal/e2e/core, bulk, viewers,
# cli, security, restart, web, chaos, soak) so that go test runs them side by
# side with the other packages; none needs more than a third of the
# timeout on a quiet 2-core machine. Their termkeep and termkeep-holder,
# with the race detector, are built once here for all of them (run alone,
# each package builds its own); GORACE turns off the second a -race binary
# sleeps at exit, once per test binary and per CLI run.
RACE_BIN := $(BIN)/race
# Every package instrumented but modernc's SQLite and libc, C translated to
# Go (internal/e2e/bins.go says why; the driver stays instrumented): a
# race server's start, ls and shutdown took 0.47 CPU-s, now 0.30;
# internal/store's tests 20 CPU-s, now 5.
RACE := -race -gcflags=modernc.org/sqlite/lib=-race=false -gcflags=modernc.org/libc/...=-race=false
RACE_BUILD = $(GO) build $(RACE) $(TEST_LDFLAGS) -o $(RACE_BIN)/ ./cmd/termkeep-holder && \
	$(GO) build $(RACE) $(TEST_LDFLAGS) -tags lean -o $(RACE_BIN)/termkeep ./cmd/termkeep && \
	$(GO) build $(RACE) $(TEST_LDFLAGS) -o $(RACE_BIN)/termkeep-server ./cmd/termkeep
GORACE ?= atexit_sleep_ms=0
# On a fresh machine the compiler is a third of the suite's CPU. vet runs
# with -race, so the packages it compiles for its type checks are the ones
# the tests link; go test's own vet pass repeats what go vet did; and no
# test binary needs DWARF (stack traces and race reports use the symbol
# table): together 850 CPU-s of building became 650.
TEST_LDFLAGS := -ldflags=-w
VET = $(GO) vet $(RACE) ./... && $(GO) vet $(RACE) -tags lean ./cmd/termkeep
# go test starts its packages' test binaries in the order of its list, so
# the longest come first and the short ones fill in beside them, two at a
# time (its default on 2 cores). Four at a time, beside the browser tests,
# kept the machine at a load of 20: packages took up to 516 s and timed
# floods (TestListenerFlood) and the soak's drift checks failed.
GO_TEST_P := 2
# The end-to-end packages that start hundreds of servers and CLI runs, or
# kill them in a loop (restart, cli, security, bulk, crashloop:
# e2e.MainPlain) run the plain build in $(BIN); the others the race build.
GO_TEST_ENV = TK_E2E_BIN_DIR=$(CURDIR)/$(RACE_BIN) TK_E2E_PLAIN_BIN_DIR=$(CURDIR)/$(BIN) GORACE='$(GORACE)'
# The browser tests run one file at a time until this file exists, then
# two (web/test/run-ui.mjs): the Go tests need the other core until then.
GO_DONE = $(CURDIR)/test-artifacts/go-tests-done
GO_TEST_FIRST := ./internal/e2e/restart ./internal/e2e/crashloop ./internal/e2e/chaos ./internal/e2e/bulk \
	./internal/e2e/security ./internal/e2e/cli ./internal/e2e/core ./internal/e2e/viewers \
	./internal/e2e/web ./internal/e2e/soak ./internal/holder
test: build chromium test-deps
	@mkdir -p test-artifacts
	@echo "make test-web runs beside vet and the Go tests (it mostly waits on Chromium); its output follows theirs"
	@began=$$(date +%s); rm -f $(GO_DONE); \
	{ export TK_UI_WIDEN=$(GO_DONE); $(TEST_WEB); } > test-artifacts/test-web.log 2>&1 & web=$$!; \
	gostatus=0; \
	echo "$(VET) && $(GO) mod tidy -diff"; \
	{ $(VET) && ( $(TIDY_CHECK) ); } || gostatus=1; \
	echo "$(RACE_BUILD)"; \
	if $(RACE_BUILD); then \
		echo "$(GO_TEST_ENV) $(GO) test $(RACE) -vet=off $(TEST_LDFLAGS) -count=1 -p $(GO_TEST_P) -timeout 15m $(GO_TEST_FIRST) ./..."; \
		$(GO_TEST_ENV) $(GO) test $(RACE) -vet=off $(TEST_LDFLAGS) -count=1 -p $(GO_TEST_P) -timeout 15m $(GO_TEST_FIRST) ./... || gostatus=1; \
		echo "$(GO) test -trimpath -vet=off $(TEST_LDFLAGS) -count=1 -run '$(FLOOD_TESTS)' ./internal/server  # timed: not under the race detector"; \
		$(GO) test -trimpath -vet=off $(TEST_LDFLAGS) -count=1 -run '$(FLOOD_TESTS)' ./internal/server || gostatus=1; \
	else gostatus=1; fi; \
	touch $(GO_DONE); echo "make test: vet and the Go tests ended after $$(( $$(date +%s) - began )) s; the browser tests go on two files at a time"; \
	wait $$web; webstatus=$$?; \
	echo "== the browser tests (make test-web; test-artifacts/test-web.log), ended after $$(( $$(date +%s) - began )) s"; cat test-artifacts/test-web.log; \
	if [ $$gostatus != 0 ]; then echo "make test: vet or the Go tests failed (above the browser tests' output)" >&2; fi; \
	if [ $$webstatus != 0 ]; then echo "make test: the browser tests failed (make test-web runs them alone)" >&2; fi; \
	[ $$gostatus = 0 ] && [ $$webstatus = 0 ]

# The programs some tests run, installed with apt-get when missing (as
# root, saying which and why first; otherwise it says how and those tests
# are skipped, but for tmux's, which fails): tmux (the screen model is
# checked against tmux's, and attach runs in a tmux pane), zsh and fish
# (their shell integration), dbus-daemon (the logind tests run a private
# bus with a fake logind), vim-tiny (send's and attach's vim cases).
test-deps:
	@missing=; why=; \
	command -v tmux >/dev/null 2>&1 || { missing="$$missing tmux"; why="$$why, tmux (the screen model is checked against it; attach runs in its pane)"; }; \
	command -v zsh >/dev/null 2>&1 || { missing="$$missing zsh"; why="$$why, zsh (its shell integration)"; }; \
	command -v fish >/dev/null 2>&1 || { missing="$$missing fish"; why="$$why, fish (its shell integration)"; }; \
	command -v dbus-daemon >/dev/null 2>&1 || { missing="$$missing dbus-daemon"; why="$$why, dbus-daemon (the logind tests' private bus)"; }; \
	{ command -v vim || command -v vim.tiny; } >/dev/null 2>&1 || { missing="$$missing vim-tiny"; why="$$why, vim-tiny (send's and attach's vim cases)"; }; \
	[ -x /usr/sbin/sshd ] || { missing="$$missing openssh-server"; why="$$why, openssh-server (attach HOST:SESSION runs against a private sshd)"; }; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "make test: installing Debian packages with apt-get for tests that run them: $${why#, }"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) || \
			echo "make test: apt-get could not install$$missing: the tests that run them are skipped (tmux's fails)" >&2; \
	else \
		echo "make test: not root, so not installing$$missing, which some tests run: $${why#, }. Those tests are skipped (tmux's fails); to run them: sudo apt-get install -y$$missing" >&2; \
	fi

# Tests that time the server under a flood of viewers: the race detector
# would time itself, so make test runs them once more without it, with
# -trimpath as make build: its compiled packages serve again (from a cold
# cache, 10 CPU-s instead of 168).
FLOOD_TESTS = ^(TestViewerFloodSparesTheOwner|TestShareLinkCrowdIsCapped)$$

# go.mod and go.sum say exactly what the code imports: a module imported
# directly is not marked indirect, and nothing unused is listed.
TIDY_CHECK = $(GO) mod tidy -diff || { \
	echo "go.mod or go.sum is not tidy (the diff above is what it would change): run 'go mod tidy' and commit the result" >&2; exit 1; }
tidy:
	@$(TIDY_CHECK)

# The browser tests (web/test/ui): each file starts bin/termkeep with its
# own state directory and drives a Chromium of its own, Debian's, with
# playwright-core (no browser is downloaded); two files at a time
# (web/test/run-ui.mjs), but one while make test's Go tests run: beside
# them, two at a time loaded the machine so that pages answered clicks in
# 3 s and timed checks failed. Screenshots go to test-artifacts/ui/. Before
# them, the page's pure modules (tabs' order, the key encoder, replay's
# clock) run under node --test (web/test/unit), bundled by esbuild.
CHROMIUM ?= /usr/bin/chromium
TEST_WEB = (cd web && npx tsc --noEmit -p .) && \
	npm run --silent test:unit --prefix web && \
	$(GO) build -o $(BIN)/reaprun ./internal/testproc/reaprun && \
	CHROMIUM=$(CHROMIUM) TK_UI_BIN=$(CURDIR)/$(BIN) TK_UI_ARTIFACTS=$(CURDIR)/test-artifacts/ui $(BIN)/reaprun npm test --prefix web
test-web: build chromium
	$(TEST_WEB)

# Debian's Chromium, installed when missing (as root, saying so first;
# otherwise it says how).
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "make: installing Debian's chromium with apt-get: the browser tests drive it (playwright-core downloads no browser)"; \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; \
		else \
			echo "Chromium is missing ($(CHROMIUM)): run 'sudo apt-get install -y chromium' (or set CHROMIUM=/path/to/chromium), then make test-web again" >&2; exit 1; \
		fi; \
	fi

# The developer's fast loop: vet, then every test with the race detector
# and -short, which skips the end-to-end tests that take more than about
# 10 s (e2e.SkipShort). Under 4 minutes on a quiet 2-core machine.
test-short: deps
	$(GO) vet ./...
	$(RACE_BUILD)
	TK_E2E_BIN_DIR=$(CURDIR)/$(RACE_BIN) GORACE='$(GORACE)' $(GO) test $(RACE) -short -count=1 -timeout 5m ./...

# run_command against `SHELL -c` for every command of
# internal/e2e/web/testdata/parity.txt, in bash, zsh and fish (those
# installed): the same text and status but for the differences
# docs/agents.md lists. make test runs the commands marked fast.
parity: deps
	$(RACE_BUILD)
	TK_PARITY=1 TK_E2E_BIN_DIR=$(CURDIR)/$(RACE_BIN) GORACE='$(GORACE)' $(GO) test $(RACE) -count=1 -v -run '^TestMCPRunCommandParity$$' ./internal/e2e/web

# Each decoder's fuzz target for a while (not part of `make test`, which runs
# their seed corpora). A target that stops at its -fuzztime deadline with
# "context deadline exceeded" and no failing input met a known race in Go's
# fuzzing coordinator (go.dev/issue/75804): said, and the next one runs. Any
# other failure, or a failing input written to testdata/fuzz, fails the run
# once every target has had its time.
FUZZTIME ?= 30s
FUZZ_TARGETS := wire:FuzzReadFrame wire:FuzzParseTermMode wire:FuzzParseFgState wire:FuzzPlainTyping holder:FuzzParseProcStat api:FuzzInputMode api:FuzzNameRE outlog:FuzzOpen outlog:FuzzAppendRead outlog:FuzzTimeRecords outlog:FuzzDamage \
	server:FuzzHTTPBodies server:FuzzWSFrames screen:FuzzScreen screen:FuzzPrintFastPath screen:FuzzUnmarshal screen:FuzzViewport \
	replay:FuzzDecodeCheckpoint replay:FuzzMarks vtscan:FuzzScan termq:FuzzQueryScanner \
	termq:FuzzAnswers server:FuzzWSAuth server:FuzzRedirectPath outerterm:FuzzOutputSplit \
	export:FuzzCast export:FuzzRedact export:FuzzGrepMatch mcp:FuzzClean mcp:FuzzBadID mcp:FuzzIDFromPrefix server:FuzzQueryBool \
	session/flow:FuzzProgress session/flow:FuzzResume bootid:FuzzParse session/liveness:FuzzPinger \
	keys:FuzzEncode keys:FuzzSanitizePaste store:FuzzJudgeGeneration replay:FuzzCheckpointOffset session/catchup:FuzzNext sessiondir:FuzzDecodeStatus sessiondir:FuzzSalvage procinfo:FuzzStatTTY \
	procinfo:FuzzParsePPid procinfo:FuzzParseStatPPid procinfo:FuzzStatField agents:FuzzRolloutID shellmark:FuzzScanner runout:FuzzTextFilter cmdpolicy:FuzzDecide mcp:FuzzScreenRef \
	service:FuzzParseEnvFile service:FuzzParseShow service:FuzzExecSplit logind:FuzzMachine ../bench:FuzzParsePredict session/lanegate:FuzzGate \
	../cmd/termkeep:FuzzCommandFor remote:FuzzParse remote:FuzzParsePreamble remote:FuzzRedial predict:FuzzPredictor
fuzz: SHELL := /bin/bash
fuzz: deps
	@set -o pipefail; failed=; \
	for t in $(FUZZ_TARGETS); do \
		pkg=./internal/$${t%%:*}; name=$${t#*:}; out=$$(mktemp); \
		echo "== $$name ($$pkg)"; \
		if ! $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $$pkg 2>&1 | tee $$out; then \
			if grep -q 'context deadline exceeded' $$out && ! grep -q 'Failing input written' $$out; then \
				echo "$$name: stopped at its deadline with no failing input (Go's fuzzing coordinator, go.dev/issue/75804); not a failure" >&2; \
			else \
				failed="$$failed $$name"; \
			fi; \
		fi; \
		rm -f $$out; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed (failing inputs are kept in each package's testdata/fuzz)" >&2; exit 1; fi

# The long versions of the chaos and soak tests (`make test` runs their
# short ones): the server SIGKILLed 100 times and hung 5 times for 5 s while
# a session prints, 20 holders killed while writing meta.json, and 500
# sessions with two viewers each for an hour (TK_SOAK_SESSIONS,
# TK_SOAK_DURATION, TK_SOAK_WARMUP; TK_SOAK_MAX_RSS in MiB stops a server
# whose memory runs away). Without the race detector, so the figures are the
# product's. The whole output goes to test-artifacts/soak.log, the figures
# to test-artifacts/soak-summary.txt (docs/reliability.md quotes them).
SOAK_RUN ?= CrashLoop|HolderKilledMidWrite|Soak
soak: deps
	@mkdir -p test-artifacts
	@echo "soak: $(SOAK_RUN), output in test-artifacts/soak.log (an hour or more)"
	@{ TK_SOAK=1 TK_SOAK_PROFILES=$(CURDIR)/test-artifacts/soak-profiles $(GO) test -race=false -count=1 -v -timeout 3h -run '$(SOAK_RUN)' ./internal/e2e/... 2>&1; echo $$? > test-artifacts/soak.status; } \
		| tee test-artifacts/soak.log | grep --line-buffered -E '^(=== RUN|--- |ok|FAIL)|_test\.go:[0-9]+: '; \
	{ echo "# make soak, $$(date -u +%Y-%m-%dT%H:%MZ), $$($(GO) version), $$(nproc) cores"; \
		grep -h 'SUMMARY' test-artifacts/soak.log | sed 's/^ *[a-z_]*_test\.go:[0-9]*: SUMMARY //'; } > test-artifacts/soak-summary.txt; \
	cat test-artifacts/soak-summary.txt; \
	exit $$(cat test-artifacts/soak.status)

# Throughput, latency, reattach, restart, memory and scale against the raw
# pty, tmux and dtach, and predictive echo in Chromium over a slow link
# (web/bench/predict.mjs), written to docs/PERFORMANCE.md. Debian's tmux and
# dtach are installed when missing (as root); without them, or without
# Chromium, their rows say skipped.
bench: build
	@command -v tmux >/dev/null 2>&1 || { echo "make bench: installing tmux with apt-get, a contender"; apt-get update -qq && apt-get install -y -qq tmux; } || true
	@command -v dtach >/dev/null 2>&1 || { echo "make bench: installing dtach with apt-get, a contender"; apt-get update -qq && apt-get install -y -qq dtach; } || true
	$(GO) run ./bench -bin $(BIN) -out docs/PERFORMANCE.md

bench-quick: build
	$(GO) run ./bench -bin $(BIN) -quick

clean:
	rm -rf $(BIN) test-artifacts
	find web/dist -mindepth 1 ! -name .gitkeep -delete

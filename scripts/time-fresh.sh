#!/usr/bin/env bash
# How long a newcomer waits (README, "How long they take"): a fresh clone of this
# checkout's HEAD built and tested with every cache empty: a new HOME (no cargo
# registry, build cache, tools folder, npm or pip cache), the rustup toolchains shared
# (rustup installs one in about 15 s). Debian's packages are not removed. Prints each
# output line after the seconds since the start, to target/time-fresh.log by default:
# first `make build-tools build-release` (what `make run` does before serving), then
# `bash .ci/run` (make test as CI runs it).
# Takes about 32 minutes of both cores (2026-12-04; 45 on the slower machine of
# 2026-12-02) and up to 35 GB of disk (measured when the test binaries still carried
# line tables); deletes its folder at the end.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
log=${1:-$repo/target/time-fresh.log}
mkdir -p "$(dirname "$log")"
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
work=$(mktemp -d /tmp/petstore-fresh.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/bin"
# rustup's proxies only, not the cargo subcommands already installed beside them.
for tool in cargo rustc rustup rustfmt cargo-fmt cargo-clippy clippy-driver rustdoc; do
  ln -s "$(command -v rustup)" "$work/bin/$tool"
done
git clone -q "$repo" "$work/petstore"
# For both steps what .ci/run sets (the build cache under HOME, CI=true, no incremental
# artifacts), so that make test reuses the first step's release build.
export HOME=$work/home RUSTUP_HOME=$rustup_home CARGO_HOME=$work/home/.cargo
export CARGO_TARGET_DIR=$HOME/.cache/petstore/target CI=true CARGO_INCREMENTAL=0
export PATH=$work/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
start=$(date +%s)
stamp() { while IFS= read -r line; do printf '%5d %s\n' $(($(date +%s) - start)) "$line"; done; }
cd "$work/petstore"
{
  echo "== make build-tools build-release"
  make build-tools build-release
  echo "== built as make run would serve it"
  bash .ci/run
  echo "== make test passed"
} 2>&1 | stamp | tee "$log"

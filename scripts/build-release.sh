#!/usr/bin/env bash
# make build-release: the release build (`cargo leptos build --release` with hashed asset
# names), then its WASM, JavaScript and CSS compressed once (scripts/precompress.sh).
#
# Skipped when nothing it is built from changed since this checkout last built it and
# that build is still in place: with nothing to compile, cargo-leptos still runs
# wasm-bindgen and wasm-opt again (about a minute on 2 cores), so a second `make run`
# would wait that long for the same files. "Built from" is the content of every file
# of the workspace that is not ignored in app/, frontend/, server/, style/ and public/
# (but the tests and benches, which are no part of the binary or the site),
# the manifests, the toolchain, the Makefile and these scripts; the tools' versions;
# and the RUSTFLAGS, CARGO_PROFILE_*, CARGO_BUILD_* and LEPTOS_* variables. "In place" is the
# binary, hash.txt and the hashed assets as this checkout's last build left them (the
# target folder may be shared with other checkouts, and `cargo build --release`
# writes the same binary without cargo-leptos's settings).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target_dir=${TARGET_DIR:?the cargo target folder}
record=target/release-build.state

# The files under these paths that git knows of (tracked, or new and not ignored) and
# that exist, NUL-separated: a file deleted but still in git's index is left out.
files_of() {
  git ls-files -z --cached --others --exclude-standard -- "$@" \
    | sort -zu | while IFS= read -r -d '' file; do
        if [[ -f $file ]]; then printf '%s\0' "$file"; fi
      done
}

sources() {
  files_of app frontend server style public Cargo.toml Cargo.lock rust-toolchain.toml .cargo \
      Makefile scripts/build-release.sh scripts/precompress.sh scripts/site-files.sh \
      ':!app/tests' ':!server/tests' ':!server/benches' \
    | xargs -0 --no-run-if-empty sha256sum
  cargo leptos --version
  wasm-bindgen --version
  wasm-opt --version
  # What else steers cargo and cargo-leptos (a variable set for another reason, such
  # as LEPTOS_SITE_ADDR, only costs one build more).
  env | grep -E '^(RUSTFLAGS|CARGO_ENCODED_RUSTFLAGS|CARGO_PROFILE_[A-Z_]+|CARGO_BUILD_[A-Z_]+|LEPTOS_[A-Z_]+)=' | sort || true
}

built() {
  local hashes=$target_dir/release/hash.txt
  sha256sum "$target_dir/release/server" "$hashes"
  local file
  for file in $(scripts/site-files.sh target/site/pkg "$hashes"); do
    sha256sum "$file" "$file.br" "$file.gz"
  done
}

# Outside a git checkout (an unpacked tarball) there is no list of sources: always build.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  wanted=$(sources | sha256sum | cut -d' ' -f1)
  if [[ -f $record ]] && [[ $(head -1 "$record") == "$wanted" ]] \
    && [[ $(tail -n +2 "$record") == "$(built 2>/dev/null)" ]]; then
    echo "ok: the release build is up to date (nothing it is built from has changed)"
    exit 0
  fi
else
  wanted=
fi

rm -f "$record"
# cargo judges a crate fresh by its files' times, and a target folder that several
# checkouts share (CARGO_TARGET_DIR) names the workspace's crates alike for all of them:
# a checkout whose files are older than another's last build would get that build's
# WASM, whose islands the server does not know (the page never hydrates). So when
# another checkout built here last, this one's crates are made newer first: they
# compile again, their dependencies do not.
# (Outside a git checkout there is no list of this checkout's files to touch.)
owner=$target_dir/release-build.checkout
if [[ -n $wanted ]] && [[ $(cat "$owner" 2>/dev/null) != "$root" ]]; then
  files_of app frontend server | xargs -0 --no-run-if-empty touch
fi
echo "$root" >"$owner"
# The site and the server side by side: with hashed names, one `cargo leptos build`
# builds them one after the other, and the site's last minutes (its largest crate
# alone, then wasm-bindgen and wasm-opt, one thread each) leave a core idle that the
# server's build can use. So they are two builds of their own, at once (their target
# folders differ: the site's is target/front).
# --split with lazy-islands: the staff console's islands in WASM files of their own
# (app/Cargo.toml). The site's build also writes hash.txt beside the server.
export LEPTOS_HASH_FILES=true
cargo leptos build --release --server-only &
server=$!
site=0
cargo leptos build --release --frontend-only --split --lib-features lazy-islands \
  && scripts/precompress.sh target/site/pkg "$target_dir/release/hash.txt" || site=$?
wait "$server" || { echo "the server's release build failed" >&2; exit 1; }
[[ $site == 0 ]] || { echo "the site's release build failed" >&2; exit 1; }
if [[ -n $wanted ]]; then
  { echo "$wanted"; built; } >"$record"
fi

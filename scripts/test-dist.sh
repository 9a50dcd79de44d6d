#!/usr/bin/env bash
# make test-dist: the release bundle as an operator meets it (docs/operations.md,
# "Deploying"). Unpacked into a new folder and started from another one, with no
# LEPTOS_* variable: it finds its site beside itself, serves pages whose hashed assets
# load (and keep linking them when hash.txt goes), writes the first admin key to a 0600 file (standard output is no terminal),
# reads /metrics with the scrape token only, takes a scheduled backup; the scrape passes
# promtool and has every metric the alert rules and the dashboard read; SIGTERM stops it
# cleanly. Then, with its site or its hash.txt taken away, it refuses to start.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
archive=$(ls "$root"/target/dist/petstore-*-linux.tar.gz)
work=$(mktemp -d)
pid=
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; [[ -f $work/server.log ]] && tail -20 "$work/server.log" >&2; exit 1; }

(cd "$root/target/dist" && sha256sum --quiet --check "$(basename "$archive").sha256") || fail "the archive's checksum"
mkdir -p "$work/opt" "$work/state" "$work/elsewhere"
tar -C "$work/opt" -xzf "$archive"
bundle=$(echo "$work"/opt/petstore-*)
server=$bundle/server
"$server" --version | grep -Eq '^server [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{12}\)$' || fail "server --version"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token=$(head -c 32 /dev/urandom | sha256sum | cut -d' ' -f1)
base=http://127.0.0.1:$port
start() {
  (cd "$work/elsewhere" && exec env -u LEPTOS_SITE_ROOT -u LEPTOS_OUTPUT_NAME -u LEPTOS_HASH_FILES \
     DATABASE_URL="sqlite://$work/state/petstore.db" PETSTORE_ADDR="127.0.0.1:$port" \
     PETSTORE_METRICS_TOKEN="$token" PETSTORE_BACKUP_DIR="$work/state/backups" PETSTORE_BACKUP_EVERY=1s \
     PETSTORE_SHUTDOWN_DRAIN=1 RUST_LOG=info "$server" "$@" >"$work/server.out" 2>"$work/server.log") &
  pid=$!
}

start
for _ in $(seq 300); do
  grep -q "is running at" "$work/server.out" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "the bundle's server did not start"
  sleep 0.1
done
grep -q "is running at" "$work/server.out" || fail "the bundle's server did not start within 30 s"

# The first admin key: in a file only this user reads, its path printed, never the key.
key_file=$work/state/first-admin-key
grep -q "Wrote the first admin key to $key_file" "$work/server.out" || fail "no path of the first admin key"
[[ $(stat -c %a "$key_file") == 600 ]] || fail "the key file's mode is $(stat -c %a "$key_file")"
admin=$(cat "$key_file")
! grep -q "$admin" "$work/server.out" "$work/server.log" || fail "the key was printed"
[[ ! -e $work/elsewhere/first-admin-key ]] || fail "a key file in the working directory"

# The pages link the hashed assets, and those load.
page=$(curl -fsS "$base/")
for kind in js wasm css; do
  hash=$(sed -n "s/^$kind: //p" "$bundle/hash.txt")
  asset=/pkg/petstore.$hash.$kind
  grep -qF "$asset" <<<"$page" || fail "the catalog page does not link $asset"
  [[ $(curl -s -o /dev/null -w '%{http_code}' "$base$asset") == 200 ]] || fail "$asset does not load"
  # Compressed when the release was built, and sent as it was packed.
  for encoding in br:br gzip:gz; do
    curl -fsS -H "Accept-Encoding: ${encoding%:*}" -o "$work/sent" "$base$asset"
    cmp -s "$work/sent" "$bundle/site$asset.${encoding#*:}" || fail "$asset as ${encoding%:*} is not the packed $asset.${encoding#*:}"
  done
done
# The lazy islands' files (the staff console's) are packed and load, compressed as built.
lazy=$("$root/scripts/site-files.sh" "$bundle/site/pkg" "$bundle/hash.txt" | grep -E '/(__wasm_split\.|split_)' || true)
[[ $(wc -l <<<"$lazy") -gt 1 ]] || fail "the bundle holds no lazy island: $lazy"
while read -r file; do
  asset=/pkg/$(basename "$file")
  curl -fsS -H "Accept-Encoding: br" -o "$work/sent" "$base$asset" || fail "$asset does not load"
  cmp -s "$work/sent" "$file.br" || fail "$asset as br is not the packed $asset.br"
done <<<"$lazy"
# Read once, at start: a hash.txt removed or replaced under a running server (a new
# release unpacked over it) changes nothing in the pages it serves.
# (A query parameter no page reads: rendered afresh, never a kept page.)
links() { curl -fsS "$base/?render=$1" | grep -o '/pkg/petstore[^"]*' | sort -u; }
before=$(links 1)
[[ $(wc -l <<<"$before") == 3 ]] || fail "the catalog page links $before"
mv "$bundle/hash.txt" "$bundle/hash.away"
[[ $(links 2) == "$before" ]] || fail "without hash.txt the page links other assets"
printf 'js: 0000000000\nwasm: 0000000000\ncss: 0000000000\n' >"$bundle/hash.txt"
[[ $(links 3) == "$before" ]] || fail "after hash.txt changed the page links other assets"
mv "$bundle/hash.away" "$bundle/hash.txt"
curl -fsS "$base/readyz" | grep -q '"ready"' || fail "/readyz"

# The scrape token reads /metrics and nothing else; admin keys still read it.
[[ $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$base/api/v1/store/inventory") == 401 ]] \
  || fail "the scrape token opened the API"
curl -fsS -H "Authorization: Bearer $admin" "$base/metrics" >/dev/null || fail "an admin key reads /metrics"
# Scraped until a scheduled backup was taken and the webhook dispatcher measured its
# backlog once (its first round may meet the store busy with the backup).
measured() {
  grep -q '^petstore_backup_last_success_timestamp_seconds ' "$work/metrics.txt" \
    && grep -q '^petstore_webhook_pending_deliveries ' "$work/metrics.txt"
}
for _ in $(seq 300); do
  curl -fsS -H "Authorization: Bearer $token" "$base/metrics" >"$work/metrics.txt" || fail "the scrape token reads /metrics"
  measured && break
  sleep 0.1
done
measured || fail "no scheduled backup or webhook backlog measured within 30 s"
grep -q '^petstore_build_info{version=' "$work/metrics.txt" || fail "no petstore_build_info"
PROMTOOL=${PROMTOOL:-promtool} "$root/scripts/check-deploy.py" metrics "$work/metrics.txt"

kill -TERM "$pid"
wait "$pid" || fail "the server did not stop cleanly on SIGTERM"
pid=

# A bundle missing a part refuses to start, and says what is missing.
refused() {
  start
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "$1: the server started and runs"
  if wait "$pid"; then pid=; fail "$1: the server exited 0"; fi
  pid=
  grep -q "$2" "$work/server.log" || fail "$1: no clear message"
  echo "refused as it should ($1): $(grep -m1 "$2" "$work/server.log")"
}
mv "$bundle/site" "$bundle/site.away"
refused "no site beside the binary" "no built site found"
mv "$bundle/site.away" "$bundle/site"
mv "$bundle/hash.txt" "$bundle/hash.away"
refused "no hash.txt" "no hash.txt beside the binary"
mv "$bundle/hash.away" "$bundle/hash.txt"
echo "ok: the bundle $(basename "$archive") runs from any folder, and refuses to run incomplete"

# Sourced by the scripts that test the release server from outside (api-fuzz/run.sh,
# api-client/run.sh): starts "$server_bin" on "$addr" over a throw-away database with
# the demo catalog, waits until it listens, and stops it (and removes "$work") when the
# script exits. Sets $work, $pid, and $admin_key (the first start's admin key). The
# server's log goes to "$log".
work="$(mktemp -d)"

stop_server() {
  if [[ -n "${pid:-}" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap stop_server EXIT

DATABASE_URL="sqlite://$work/store.db" PETSTORE_ADDR="$addr" PETSTORE_DEMO_DATA=true RUST_LOG=warn \
  LEPTOS_SITE_ROOT="$root/target/site" "$server_bin" >"$work/server.out" 2>"$log" &
pid=$!
for _ in $(seq 300); do
  grep -q "is running at" "$work/server.out" && break
  kill -0 "$pid" 2>/dev/null || { echo "the server did not start:"; cat "$log"; exit 1; }
  sleep 0.1
done
admin_key="$(awk '$1 ~ /^psk_/ { print $1; exit }' "$work/server.out")"
[[ -n "$admin_key" ]] || { echo "no admin key in the server's first-start output"; exit 1; }

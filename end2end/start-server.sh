# Sourced by the scripts that test the release server from outside (api-fuzz/run.sh,
# api-client/run.sh): starts "$server_bin" on "$addr" over a throw-away database with
# the demo catalog, waits until it listens, and stops it (and removes "$work") when the
# script exits. Sets $work, $pid, and $admin_key (the first start's admin key, from the
# file it writes when standard output is not a terminal). The server's log goes to
# "$log".
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
# Not a terminal: the key is in the file (beside the store) whose path is printed.
[[ -s "$work/first-admin-key" ]] && grep -q "Wrote the first admin key to $work/first-admin-key" "$work/server.out" \
  || { echo "no first admin key file in $work:"; cat "$work/server.out"; exit 1; }
admin_key="$(cat "$work/first-admin-key")"

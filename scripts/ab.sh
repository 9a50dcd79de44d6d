#!/usr/bin/env bash
# A/B of two release builds of the server on this machine, by wrk in turns (so that the
# machine's drift falls on both alike): the pet read (GET /api/v1/pets/1) and orders
# (POST /api/v1/store/orders, one unit of pet 1, durability full), each over the demo
# store with an admin key of the Enterprise plan.
#   scripts/ab.sh DIR_A DIR_B [ROUNDS=3] [SECONDS=5]
# Each DIR holds a `server` binary (and its hash.txt); the site is target/site.
set -euo pipefail
A=$1; B=$2; ROUNDS=${3:-3}; SECS=${4:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
lua=$(mktemp --suffix=.lua)
trap 'rm -f "$lua"; kill $(cat "$A/pid" "$B/pid" 2>/dev/null) 2>/dev/null || true' EXIT
printf '%s\n' 'wrk.method = "POST"' "wrk.body = '{\"petId\":1,\"quantity\":1}'" \
  'wrk.headers["content-type"] = "application/json"' > "$lua"
start() { # DIR PORT
  local dir=$1 port=$2 db="sqlite://$1/data/p.db" key
  rm -rf "$dir/data"; mkdir -p "$dir/data"
  key=$(DATABASE_URL=$db RUST_LOG=warn "$dir/server" keys create --name bench --role admin --plan enterprise \
    --per-minute 1000000000 --per-day 1000000000 2>/dev/null)
  echo "$key" > "$dir/key"
  env -C "$root" DATABASE_URL="$db" PETSTORE_ADDR=127.0.0.1:"$port" LEPTOS_SITE_ROOT=target/site LEPTOS_ENV=PROD \
    RUST_LOG=warn "$dir/server" > /dev/null 2>&1 &
  echo $! > "$dir/pid"
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
  curl -sf -X PUT -H "x-api-key: $key" -H 'content-type: application/json' -d '{"quantity":1000000}' \
    "http://127.0.0.1:$port/api/v1/store/inventory/1" >/dev/null
}
start "$A" 3101; start "$B" 3102
KA=$(cat "$A/key"); KB=$(cat "$B/key")
read_() { wrk -t2 -c32 -d"${SECS}s" -H "x-api-key: $2" "http://127.0.0.1:$1/api/v1/pets/1" \
  | awk -v l="$3" '/Non-2xx/ {print l, "read NON-2xx:", $0} /Requests\/sec/ {print l, "read", $2}'; }
order() { wrk -t2 -c32 -d"${SECS}s" -s "$lua" -H "x-api-key: $2" "http://127.0.0.1:$1/api/v1/store/orders" \
  | awk -v l="$3" '/Non-2xx/ {print l, "orders NON-2xx:", $0} /Requests\/sec/ {print l, "orders", $2}'; }
for _ in $(seq "$ROUNDS"); do
  read_ 3101 "$KA" A; read_ 3102 "$KB" B; read_ 3102 "$KB" B; read_ 3101 "$KA" A
  order 3101 "$KA" A; order 3102 "$KB" B; order 3102 "$KB" B; order 3101 "$KA" A
done

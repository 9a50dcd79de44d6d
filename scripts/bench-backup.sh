#!/usr/bin/env bash
# `make bench-backup`: what backups cost at a million pets (docs/PERFORMANCE.md,
# "Backups at a million pets"). The release server in its default configuration over a
# SQLite store of 1,000,000 pets in 200 categories and 1,000,000 orders (filled by bulk
# SQL as `make bench-scale` fills its own), measured by wrk (Debian's):
#   1. `server backup` of the idle store: seconds and bytes;
#   2. the pet read (GET /api/v1/pets/{id}) and orders (POST /api/v1/store/orders) by
#      wrk -t2 -c32, without a backup, then while `server backup` runs again and again
#      (as is, and at the lowest priority, `nice -n 19 ionice -c 3`): the second as a
#      share of the first, and how long each backup took meanwhile;
#   3. the same while the server takes scheduled snapshots back to back
#      (--backup-dir, --backup-every 1s; each at the lowest priority);
#   4. a restore: the server stopped, `server restore`, the server started again, until
#      its first 200: seconds in all.
# Environment: SERVER_BIN (the release server), PETS (default 1000000), SECONDS_EACH
# (wrk's run, default 10).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SERVER_BIN:?set SERVER_BIN to the release server}
pets=${PETS:-1000000}
secs=${SECONDS_EACH:-10}
work=$root/target/bench/backup
rm -rf "$work"; mkdir -p "$work"
db=$work/store.db url=sqlite://$work/store.db port=3191 base=http://127.0.0.1:3191
lua=$work/order.lua
pid=
stop_server() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap 'stop_server; kill $(jobs -p) 2>/dev/null || true' EXIT

seconds_since() { echo "$(date +%s.%N) - $1" | bc; }

echo "seeding $pets pets and as many orders into $db"
started=$(date +%s.%N)
key=$(DATABASE_URL=$url RUST_LOG=warn "$bin" keys create --name bench --role admin \
  --plan enterprise --per-minute 2000000000 --per-day 2000000000)
names=$(printf "(%s, '%s')," 0 Rex 1 Fluffy 2 Max 3 Bella 4 Luna 5 Charlie 6 Coco 7 Milo 8 Daisy 9 Rocky 10 Bailey \
  11 Simba 12 Nala 13 Oscar 14 Ruby 15 Teddy 16 Ziggy 17 Pepper 18 Ginger 19 Shadow)
sqlite3 "$db" <<SQL
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
  INSERT INTO categories (name, name_key, description) SELECT 'Kind ' || i, 'kind ' || i, 'Animals of kind ' || i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $pets), w(k, name) AS (VALUES ${names%,})
  INSERT INTO pets (name, name_key, category_id, status, price)
  SELECT a.name || ' ' || b.name || ' ' || n.i, lower(a.name || ' ' || b.name || ' ' || n.i), 1 + (n.i * 7919) % 200,
         CASE n.i % 3 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' ELSE 'sold' END, 100 * (10 + (n.i * 37) % 900)
  FROM n JOIN w a ON a.k = (n.i * 13) % 20 JOIN w b ON b.k = (n.i / 20 * 7) % 20;
INSERT INTO inventory (pet_id, quantity) SELECT id, 5 FROM pets;
UPDATE inventory SET quantity = 1000000000 WHERE pet_id = 3;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $pets)
  INSERT INTO orders (pet_id, key_id, quantity, complete, created_at, unit_price, total)
  SELECT 1 + (n.i * 104729) % $pets, (SELECT MIN(id) FROM api_keys), 1, n.i % 2,
         strftime('%s', 'now') - (($pets - n.i) * 1000000 / $pets), 1000, 1000 FROM n;
COMMIT;
ANALYZE;
SQL
printf 'seeded in %.0f s: %s bytes\n' "$(seconds_since "$started")" "$(stat -c %s "$db")"

# Pet 3 is available with a billion units: orders never run out.
printf '%s\n' 'wrk.method = "POST"' "wrk.body = '{\"petId\":3,\"quantity\":1}'" \
  'wrk.headers["content-type"] = "application/json"' > "$lua"

start_server() { # extra flags…
  env -C "$root" DATABASE_URL="$url" PETSTORE_ADDR=127.0.0.1:$port LEPTOS_SITE_ROOT=target/site LEPTOS_ENV=PROD \
    RUST_LOG=${LOG:-warn} "$bin" "$@" > /dev/null 2>> "$work/server.log" &
  pid=$!
  until curl -sf "$base/healthz" > /dev/null; do sleep 0.05; done
}
read_rate() { wrk -t2 -c32 -d"${secs}s" -H "x-api-key: $key" "$base/api/v1/pets/2" | awk '/Non-2xx/ {print "NON-2xx " $0 > "/dev/stderr"} /Requests\/sec/ {print $2}'; }
order_rate() { wrk -t2 -c32 -d"${secs}s" -s "$lua" -H "x-api-key: $key" "$base/api/v1/store/orders" \
  | awk '/Non-2xx/ {print "NON-2xx " $0 > "/dev/stderr"} /Requests\/sec/ {print $2}'; }
share() { echo "scale=0; 100 * $2 / $1" | bc; }

start_server
started=$(date +%s.%N)
DATABASE_URL=$url RUST_LOG=warn "$bin" backup --to "$work/idle.db" 2> "$work/backup.out"
backup_seconds=$(seconds_since "$started")
printf '1. server backup, idle store: %.1f s, %s bytes (%s)\n' "$backup_seconds" "$(stat -c %s "$work/idle.db")" \
  "$(cat "$work/backup.out")"

read_alone=$(read_rate); orders_alone=$(order_rate)
backups_meanwhile() { # writes backups back to back until killed, noting each one's seconds
  while :; do
    local began; began=$(date +%s.%N)
    DATABASE_URL=$url RUST_LOG=warn $nice "$bin" backup --force --to "$work/during.db" 2> /dev/null
    seconds_since "$began" >> "$work/durations"
  done
}
during() { # what: read_rate or order_rate
  backups_meanwhile & local looping=$!
  $1
  kill $looping; pkill -f "backup --force --to $work/during.db" || true; wait $looping 2> /dev/null || true
}
for nice in "" "nice -n 19 ionice -c 3"; do
  rm -f "$work/durations"
  read_during=$(during read_rate); orders_during=$(during order_rate)
  echo "2. wrk -t2 -c32 ${secs}s, without a backup / while \`${nice:+$nice }server backup\` runs back to back:"
  echo "   pet read: $read_alone / $read_during req/s ($(share "$read_alone" "$read_during") %)"
  echo "   orders:   $orders_alone / $orders_during orders/s ($(share "$orders_alone" "$orders_during") %)"
  echo "   backups finished meanwhile, seconds each: $(paste -sd' ' "$work/durations" 2>/dev/null || echo none)"
done
stop_server

LOG=warn,app::services::backups=info start_server --backup-dir "$work/scheduled" --backup-every 1s --backup-keep 2
read_scheduled=$(read_rate); orders_scheduled=$(order_rate)
stop_server
taken=$(grep -c "took a scheduled backup" "$work/server.log" || true)
took=$( (grep "took a scheduled backup" "$work/server.log" || true) | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' \
  | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : "none finished")}')
echo "3. scheduled snapshots back to back (--backup-every 1s; $taken finished, median seconds: $took):"
echo "   pet read: $read_scheduled req/s ($(share "$read_alone" "$read_scheduled") % of without)"
echo "   orders:   $orders_scheduled orders/s ($(share "$orders_alone" "$orders_scheduled") % of without)"

started=$(date +%s.%N)
DATABASE_URL=$url RUST_LOG=warn "$bin" restore --from "$work/idle.db" 2> "$work/restore.out"
start_server
until [ "$(curl -s -o /dev/null -w '%{http_code}' -H "x-api-key: $key" "$base/api/v1/pets/2")" = 200 ]; do sleep 0.05; done
printf '4. restore and serve again (server restore, start, first 200): %.1f s\n' "$(seconds_since "$started")"
stop_server

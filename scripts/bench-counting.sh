#!/usr/bin/env bash
# Where counting against shared rate limits spends PostgreSQL's time (docs/PERFORMANCE.md,
# "PostgreSQL and several servers"). Run by `make bench-counting`, beside the throwaway
# PostgreSQL and Redis of scripts/with-databases.sh; SERVER_BIN is the release server.
#  1. pgbench, 4 clients, one row: the compare-and-set UPDATE a round of this server
#     stores, against the rule in PL/pgSQL (`rate_limit_steps`, a round of 10).
#  2. One server over PostgreSQL, counters in PostgreSQL (in Redis with REDIS=1), wrk on
#     one pet with one key: requests/s, the transactions PostgreSQL committed for them,
#     and the CPU each process took.
set -euo pipefail
: "${SERVER_BIN:?the release server}" "${PETSTORE_TEST_POSTGRES:?run through scripts/with-databases.sh}"
bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -n 1)")
base=${PETSTORE_TEST_POSTGRES%/postgres}
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

echo "== 1. pgbench, 4 clients, 3 s each, one row"
psql -q "$PETSTORE_TEST_POSTGRES" -c "CREATE DATABASE counting_pgbench"
url=$base/counting_pgbench
# The server applies the migrations; `keys create` is the shortest command that opens the store.
DATABASE_URL=$url RUST_LOG=warn "$SERVER_BIN" keys create --name pgbench --role customer >/dev/null
psql -q "$url" -c "INSERT INTO rate_limit_usage VALUES ('k', 0, 0, 0, 0, 0, 0, 0)"
now=$(date +%s)
measure() {
  echo "$2" >"$work/statement.sql"
  printf '%-48s %s\n' "$1" "$("$bin/pgbench" -n -M prepared -c 4 -j 1 -T 3 -f "$work/statement.sql" "$url" 2>&1 | grep '^tps')"
}
measure "compare-and-set UPDATE (swap)" \
  "UPDATE rate_limit_usage SET minute_start = 0, minute_count = 0, day_start = 0, day_count = 0, refusals = 0, refusals_until = 0, banned_until = 0 WHERE subject = 'k' AND (minute_start, minute_count, day_start, day_count, refusals, refusals_until, banned_until) = (0, 0, 0, 0, 0, 0, 0);"
measure "rate_limit_steps, a round of 10 (locked)" \
  "SELECT * FROM rate_limit_steps('k', $now, 1000000000, 1000000000, 10, 900, 10);"

echo "== 2. one server, wrk -t2 -c32, one key, counters in $([ "${REDIS:-0}" = 1 ] && echo Redis || echo PostgreSQL)"
psql -q "$PETSTORE_TEST_POSTGRES" -c "CREATE DATABASE counting_wrk"
url=$base/counting_wrk
export DATABASE_URL=$url RUST_LOG=warn
[ "${REDIS:-0}" = 1 ] && export PETSTORE_REDIS_URL=$PETSTORE_TEST_REDIS
key=$("$SERVER_BIN" keys create --name wrk --role admin --plan pro)
"$SERVER_BIN" --addr 127.0.0.1:3098 --demo-data on >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do curl -fs http://127.0.0.1:3098/readyz >/dev/null && break; sleep 0.2; done
pet=$(curl -fs -H "X-API-Key: $key" "http://127.0.0.1:3098/api/v1/pets?limit=1" | python3 -c 'import json, sys; page = json.load(sys.stdin); print((page if isinstance(page, list) else page["items"])[0]["id"])')
target="http://127.0.0.1:3098/api/v1/pets/$pet"
wrk -t2 -c32 -d2s -H "X-API-Key: $key" "$target" >/dev/null
ticks() { for stat in /proc/[0-9]*/stat; do awk '{print $1, $2, $14 + $15}' "$stat" 2>/dev/null || true; done; }
commits() { psql -tAc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()" "$url"; }
before_commits=$(commits)
ticks >"$work/before"
wrk -t2 -c32 -d8s -H "X-API-Key: $key" "$target" >"$work/wrk" &
wrk=$!
sleep 7.5
ticks >"$work/after"
wait "$wrk"
sleep 1
grep -E 'Latency|requests in|Requests/sec' "$work/wrk"
echo "transactions committed meanwhile: $(($(commits) - before_commits))"
python3 - "$work/before" "$work/after" <<'PY'
import collections, sys
def read(path):
    return {pid: (name, int(t)) for pid, name, t in (line.split() for line in open(path))}
before, after = read(sys.argv[1]), read(sys.argv[2])
cores = collections.Counter()
for pid, (name, t) in after.items():
    cores[name] += t - before.get(pid, (name, 0))[1]
ticks_per_second = 100
for name, t in cores.most_common(4):
    print(f"{name:20} {t / ticks_per_second / 7.5:.2f} cores")
PY

#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL server and a throwaway Redis, each on a
# free port of 127.0.0.1, and stops both when the command ends (also on failure or
# Ctrl-C). The command sees:
#   PETSTORE_TEST_POSTGRES  postgres://petstore@127.0.0.1:<port>/postgres (may create databases)
#   PETSTORE_TEST_REDIS     redis://127.0.0.1:<port>/
# Debian's `postgresql` and `redis-server` packages must be installed (`make db-tools`).
# PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user.
set -euo pipefail

initdb=$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)
[ -n "$initdb" ] || { echo "with-databases: PostgreSQL is not installed (make db-tools)" >&2; exit 1; }
bin=$(dirname "$initdb")
command -v redis-server >/dev/null || { echo "with-databases: redis-server is not installed (make db-tools)" >&2; exit 1; }

# A port nothing on 127.0.0.1 listens on (bash's /dev/tcp: no other tool needed).
free_port() {
  local port
  while :; do
    port=$(shuf -i 20000-60999 -n 1)
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
}

dir=$(mktemp -d /tmp/petstore-databases.XXXXXX)
trap 'rm -rf "$dir"' EXIT
as_owner=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$dir"
  as_owner=(runuser -u postgres --)
fi

pg_port=$(free_port)
redis_port=$(free_port)

stop() {
  "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" stop -m immediate >/dev/null 2>&1 || true
  if [ -f "$dir/redis.pid" ]; then kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM

"${as_owner[@]}" "$initdb" -D "$dir/data" -A trust -U petstore --no-sync >/dev/null
# fsync off: a throwaway cluster, which a crash may lose; many connections: every test
# opens a pool of its own.
start_postgres() {
  "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -o \
    "-p $pg_port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=500 -c fsync=off -c full_page_writes=off" \
    start >/dev/null
}
# Its log is shown when it does not start (the directory goes with it); a port taken
# since it was found free gets one more try on another.
if ! start_postgres; then
  echo "with-databases: PostgreSQL did not start on port $pg_port; its log:" >&2
  cat "$dir/postgres.log" >&2
  pg_port=$(free_port)
  start_postgres || { cat "$dir/postgres.log" >&2; exit 1; }
fi
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
  --daemonize yes --pidfile "$dir/redis.pid" --dir "$dir" --logfile "$dir/redis.log"

export PETSTORE_TEST_POSTGRES="postgres://petstore@127.0.0.1:$pg_port/postgres"
export PETSTORE_TEST_REDIS="redis://127.0.0.1:$redis_port/"
echo "with-databases: PostgreSQL on $pg_port, Redis on $redis_port"
"$@"

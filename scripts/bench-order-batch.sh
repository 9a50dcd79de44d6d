#!/usr/bin/env bash
# What a batch of orders costs PostgreSQL, statement by statement (docs/PERFORMANCE.md,
# "What changed", 16). Run by `make bench-order-batch`, beside the throwaway PostgreSQL
# of scripts/with-databases.sh; SERVER_BIN is the release server (it creates the schema).
# pgbench, 2 clients (two servers taking turns at the store's write lock), one batch of
# 16 orders over 1,000 pets a transaction, as the write queue sent it before that change
# (SAVEPOINT, the pet's state, the order, the stock, RELEASE: five statements an order),
# and each variant against it:
#   one statement   the order and its stock in one statement (`WITH stock AS (UPDATE …)`)
#   no savepoints   what the savepoints cost
#   triggers off    what the tables' triggers cost (the running totals, the catalog's version)
# (The other half of the change, a RELEASE sent with the next SAVEPOINT, needs the simple
# query protocol, which pgbench's prepared mode does not mix in.) Figures are orders a
# second: 16 × pgbench's transactions.
set -euo pipefail
: "${SERVER_BIN:?the release server}" "${PETSTORE_TEST_POSTGRES:?run through scripts/with-databases.sh}"
bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -n 1)")
base=${PETSTORE_TEST_POSTGRES%/postgres}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds=${SECONDS_EACH:-8}

psql -q "$PETSTORE_TEST_POSTGRES" -c "CREATE DATABASE order_batch"
url=$base/order_batch
# The server applies the migrations; `keys create` is the shortest command that opens the store.
DATABASE_URL=$url RUST_LOG=warn "$SERVER_BIN" keys create --name pgbench --role customer >/dev/null
key=$(psql -q -t -A "$url" -c "SELECT min(id) FROM api_keys")
psql -q "$url" <<'SQL'
INSERT INTO categories (name, name_key) SELECT 'c' || g, 'c' || g FROM generate_series(1, 20) g;
INSERT INTO pets (name, name_key, category_id, status, price)
  SELECT 'p' || g, 'p' || g, 1 + g % 20, 'available', 1000 FROM generate_series(1, 1000) g;
INSERT INTO inventory (pet_id, quantity) SELECT id, 1000000000 FROM pets;
VACUUM ANALYZE;
SQL

# One transaction of the queue: its lock, 16 orders, the batch's events, COMMIT.
batch() {
  local variant=$1 i sel ins upd
  echo "BEGIN;"
  echo "SELECT set_config('lock_timeout', '5000', true), pg_advisory_xact_lock(1);"
  for i in $(seq 16); do
    echo "\\set p$i random(1, 1000)"
    sel="SELECT p.status, i.quantity, p.price FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = :p$i;"
    ins="INSERT INTO orders (pet_id, key_id, quantity, ship_date, complete, created_at, unit_price, total) VALUES (:p$i, $key, 1, NULL, false, 0, 1000, 1000) RETURNING id"
    upd="UPDATE inventory SET quantity = quantity - 1 WHERE pet_id = :p$i"
    case $variant in
      onestatement)
        echo "SAVEPOINT queued_write;"; echo "$sel"; echo "WITH stock AS ($upd) $ins;"; echo "RELEASE queued_write;";;
      before)
        echo "SAVEPOINT queued_write;"; echo "$sel"; echo "$ins;"; echo "$upd;"; echo "RELEASE queued_write;";;
      nosavepoints)
        echo "$sel"; echo "$ins;"; echo "$upd;";;
    esac
  done
  echo "INSERT INTO events (id, type, created_at, data, owner_key_id, admin_only)
    SELECT 'evt_' || md5(random()::text), 'order.created', 0, '{}', NULL, false FROM generate_series(1, 32);"
  echo "COMMIT;"
}

measure() { # label variant
  batch "$2" >"$work/$2.sql"
  "$bin/pgbench" -n -M prepared -c 2 -j 2 -T "$seconds" -f "$work/$2.sql" "$url" 2>&1 |
    awk -v label="$1" '/^tps/ { printf "%-44s %8.0f orders/s\n", label, $3 * 16 }'
}
triggers() { psql -q "$url" -c "ALTER TABLE orders $1 TRIGGER USER; ALTER TABLE inventory $1 TRIGGER USER;"; }

echo "pgbench -M prepared -c 2, $seconds s each, a batch of 16 orders a transaction, twice in turns"
for round in 1 2; do
  measure "five statements an order" before
  measure "the order and its stock one statement" onestatement
  measure "no savepoints" nosavepoints
  triggers DISABLE
  measure "the tables' triggers off" before
  triggers ENABLE
done

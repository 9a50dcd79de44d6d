#!/usr/bin/env bash
# User-space instructions per authenticated GET /api/v1/pets/{petId}, counted by
# callgrind, which the machine's drift does not move (docs/PERFORMANCE.md, "How to
# measure"). Usage: scripts/instructions-per-read.sh <server binary> (a release build).
# Needs valgrind, wrk, curl and python3. Starts the binary on a fresh store in a
# temporary directory, in its default configuration (the request log at INFO, to a
# file there), on port 18481.
set -euo pipefail
bin=$(realpath "${1:?usage: $0 <server binary>}")
port=18481
dir=$(mktemp -d)
pid=
fail() { echo "instructions-per-read: $*" >&2; exit 1; }
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
# The default configuration, whatever this shell has set.
unset RUST_LOG
for setting in $(compgen -e | grep "^PETSTORE_" || true); do unset "$setting"; done
export DATABASE_URL="sqlite://$dir/store.db" PETSTORE_ADDR="127.0.0.1:$port" PETSTORE_DEMO_DATA=false
base="http://127.0.0.1:$port/api/v1"
admin=$(RUST_LOG=warn "$bin" keys create --name measure --role admin --plan pro) || fail "could not create a key"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dir/callgrind.%p" \
  "$bin" >"$dir/stdout" 2>"$dir/log" &
pid=$!
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || fail "the server did not start: $(tail -3 "$dir/log")"
post() { curl -sf -H "X-API-Key: $admin" -H 'Content-Type: application/json' -d "$2" "$base/$1"; }
id() { python3 -c 'import sys, json; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
category=$(post categories '{"name":"Dogs"}' | id id)
pet=$(post pets "{\"name\":\"Rex\",\"categoryId\":$category}" | id id)
key=$(post keys '{"name":"load","role":"admin","plan":"enterprise","limits":{"perMinute":2000000000,"perDay":2000000000}}' | id key)
url="$base/pets/$pet"
wrk -t1 -c4 -d3s -H "X-API-Key: $key" "$url" >/dev/null
callgrind_control -i on "$pid" >/dev/null || fail "callgrind_control could not reach the server"
wrk -t1 -c4 -d10s -H "X-API-Key: $key" "$url" >"$dir/wrk"
callgrind_control -i off "$pid" >/dev/null
callgrind_control -d "$pid" >/dev/null
! grep -q 'Non-2xx' "$dir/wrk" || fail "some reads were not answered 200: $(cat "$dir/wrk")"
# The dump is written by the server process, after the command returns.
dump="$dir/callgrind.$pid.1"
for _ in $(seq 100); do [ -s "$dump" ] && break; sleep 0.1; done
sleep 1
requests=$(grep -oP '\d+(?= requests in)' "$dir/wrk")
instructions=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { gsub(",", "", $1); print $1; n = 1 }')
[ -n "$instructions" ] || fail "no callgrind totals in $dump"
echo "$bin: $requests requests, $instructions instructions, $((instructions / requests)) per request"

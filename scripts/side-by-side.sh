#!/usr/bin/env bash
# Runs commands at once, each in a shell of its own: side-by-side.sh NAME 'COMMAND' ...
# Every line a command prints is marked with its name ("[rust] ..."), so the two
# streams can be told apart in one log. Waits for all of them, even after one fails
# (its output up to the end is what says why), then names each that failed and exits
# 1 if any did. Each stream's last line says how long it took (the longer one is what
# bounds `make test`'s time). Ctrl-C or a stop of this script stops them all.
set -uo pipefail

(( $# >= 2 && $# % 2 == 0 )) || { echo "usage: side-by-side.sh NAME 'COMMAND' [NAME 'COMMAND']..." >&2; exit 2; }

names=()
pids=()
stop_all() {
  # Each command leads a process group of its own (set -m below): stop the whole group.
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
}
trap 'stop_all; exit 130' INT TERM

set -m
while (( $# )); do
  name=$1 command=$2
  shift 2
  # sed -u: each line as it comes, not when a buffer fills.
  # Its time is its own shell's $SECONDS (which counts from that shell's start).
  bash -o pipefail -c "{ $command; } 2>&1 | sed -u 's/^/[$name] /'; status=\$?
    took=\$SECONDS
    echo \"[$name] ended after \$((took / 60)) min \$((took % 60)) s\"; exit \$status" &
  names+=("$name")
  pids+=("$!")
done
set +m

failed=()
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then
    echo "[${names[$i]}] passed"
  else
    failed+=("${names[$i]}")
  fi
done
if (( ${#failed[@]} )); then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi

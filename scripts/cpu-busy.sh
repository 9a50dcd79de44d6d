#!/usr/bin/env bash
# How busy the cores are while something else runs (README, "How long they take"):
# every INTERVAL seconds (default 10), the seconds since the start and how many cores
# were busy on average over that interval (from /proc/stat: all but idle and iowait).
# Runs until stopped: scripts/cpu-busy.sh > cpu.log & ... ; kill %1
set -euo pipefail
interval=${1:-10}
cores=$(nproc)
start=$(date +%s)
busy_and_total() {
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
  local busy=$((user + nice + system + irq + softirq + steal))
  echo "$busy $((busy + idle + iowait))"
}
read -r busy total < <(busy_and_total)
while sleep "$interval"; do
  read -r busy_now total_now < <(busy_and_total)
  awk -v t=$(($(date +%s) - start)) -v db=$((busy_now - busy)) -v dt=$((total_now - total)) -v n="$cores" \
    'BEGIN { printf "%d %.2f\n", t, (dt > 0 ? n * db / dt : 0) }'
  busy=$busy_now total=$total_now
done

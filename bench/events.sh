#!/usr/bin/env bash
# Events per second of every shipped scenario (issue 30, docs/performance.md): each run with
# -j 1 (one worker, so the rate is one core's), its events summed from the JSON report
# (`qsim.events` of every run), its wall time measured here. With two binaries, both run side
# by side, scenario by scenario, and the last column is their speed ratio.
#
#   bash bench/events.sh                              # target/release/qsim
#   bash bench/events.sh OLD_QSIM [NEW_QSIM]          # e.g. a build of an older main
#
# A run that repeats another (docs/running.md) is copied, not simulated, yet its events are in
# the JSON: from 2ab7b4a on, mel-2009-nocrypt's rate counts 14 rows' events for the 8 it
# simulates (no other shipped scenario has a repeat).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  cargo build --release --quiet --bin qsim
  set -- target/release/qsim
fi
names=$("$1" list 2>/dev/null | awk '$1 ~ /^[a-z]/ {print $1}')
rate() { # binary scenario -> "events seconds"
  local t0 t1 ev
  t0=$(date +%s.%N)
  ev=$("$1" run "$2" -j 1 --format json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(j.get("qsim", {}).get("events", 0) for j in d.get("jobs", [])))')
  t1=$(date +%s.%N)
  echo "$ev $(python3 -c "print($t1 - $t0)")"
}
printf '%-24s %12s' scenario events
i=0
for b in "$@"; do i=$((i + 1)); printf ' %14s' "Mev/s #$i"; done
[ $# -eq 2 ] && printf ' %7s' ratio
echo
for s in $names; do
  printf '%-24s' "$s"
  first=""
  for b in "$@"; do
    read -r ev secs < <(rate "$b" "$s")
    [ -z "$first" ] && printf ' %12s' "$ev"
    r=$(python3 -c "print(f'{$ev / $secs / 1e6:.2f}')")
    printf ' %14s' "$r"
    if [ -z "$first" ]; then first=$r; else printf ' %7s' "$(python3 -c "print(f'{$r / $first:.2f}')")"; fi
  done
  echo
done

#!/usr/bin/env bash
# Issue 30's paired comparison: bench/mm1.yaml through the whole model against the
# hand-written binary-heap M/M/1 of bench/mm1_floor.rs, on the same customers (the script
# checks that both served the same number with the same mean sojourn), 5 repetitions each,
# interleaved so that a busy moment hits both; prints each pair and the median ratio.
#
#   bash bench/mm1.sh [REPS]        # from the repository's root; REPS defaults to 5
#   QSIM=path/to/qsim bash bench/mm1.sh   # time another build of qsim (e.g. an older main)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
cargo build --release --quiet --bin qsim --example mm1_floor
qsim="${QSIM:-target/release/qsim}"
floor=target/release/examples/mm1_floor

# Wall seconds of a command, its stdout kept in $out.
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  out=$("$@")
  t1=$(date +%s.%N)
  secs=$(echo "$t1 - $t0" | bc -l 2>/dev/null || python3 -c "print($t1 - $t0)")
}

ratios=()
for i in $(seq 1 "$reps"); do
  timed "$floor"; floor_s=$secs; floor_out=$out
  timed "$qsim" run bench/mm1.yaml -j 1; qsim_s=$secs; qsim_out=$out
  served=$(sed -n 's/^served \([0-9]*\) .*/\1/p' <<<"$floor_out")
  mean=$(sed -n 's/.*mean_sojourn_ns \([0-9.]*\) .*/\1/p' <<<"$floor_out")
  # The model's count and mean of the same customers, from its report (the "where the time
  # went" count and the lat line's exact mean).
  read -r q_served q_mean < <(python3 -c '
import re, sys
t = sys.stdin.read()
n = re.search(r"where the time went \(read: (\d+) I/Os", t).group(1)
m = float(re.search(r" lat \(nsec\):.*avg=([0-9.]+)", t).group(1))
print(n, "%.1f" % m)' <<<"$qsim_out")
  if [ "$served" != "$q_served" ] || [ "$mean" != "$q_mean" ]; then
    echo "mm1: the two simulated different customers: floor $served / $mean ns, qsim $q_served / $q_mean ns" >&2
    exit 1
  fi
  ratio=$(python3 -c "print(f'{$qsim_s / $floor_s:.2f}')")
  ratios+=("$ratio")
  printf 'rep %d: floor %.3f s, qsim %.3f s, ratio %s (%s customers, mean sojourn %s ns)\n' \
    "$i" "$floor_s" "$qsim_s" "$ratio" "$served" "$mean"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c 'import sys; v=[float(x) for x in sys.stdin]; print(f"{sorted(v)[len(v)//2]:.2f}")')
echo "median ratio qsim / floor over $reps repetitions: $median"

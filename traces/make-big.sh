#!/bin/sh
# Writes a large blkparse text file for the replay memory test (docs/replay.md, "Limits"):
# traces/loop-randrw.blkparse's event lines repeated, each copy shifted by the capture's span
# plus 1 ms, until the file holds at least SIZE_MB MiB, then blkparse's summary block.
#
#   traces/make-big.sh 1024 /tmp/big.blkparse
#
# Not run in CI; needs python3.
set -eu
SIZE_MB=${1:-1024}
OUT=${2:-/tmp/big.blkparse}
HERE=$(dirname "$0")
python3 - "$HERE/loop-randrw.blkparse" "$SIZE_MB" "$OUT" <<'PY'
import sys
src, size_mb, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
events = []
for line in open(src):
    f = line.split()
    if len(f) < 6 or "," not in f[0] or "." not in f[3]:
        break  # the summary block
    sec, ns = f[3].split(".")
    events.append((int(sec) * 10**9 + int(ns), line.split(f[3], 1)))
span = events[-1][0] + 1_000_000
limit, written, k = size_mb << 20, 0, 0
with open(out, "w") as o:
    while written < limit:
        chunk = []
        for t, (head, tail) in events:
            t += k * span
            chunk.append("%s%d.%09d%s" % (head, t // 10**9, t % 10**9, tail))
        s = "".join(chunk)
        o.write(s)
        written += len(s)
        k += 1
    o.write("\nCPU0 (big):\n Reads Queued:  0,  0KiB\nTotal (big):\n")
print("copies:", k, "bytes:", written)
PY

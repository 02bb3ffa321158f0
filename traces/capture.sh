#!/bin/sh
# Captures the traces in this folder on a loop device with the kernel's ftrace blk tracer,
# then writes blkparse's text of the binary capture. Run as root on a scratch loop device:
#
#   traces/capture.sh [/dev/loopN] [NAME]
#
# Needs fio, blkparse (Debian: blktrace) and python3. The `blktrace` CLI needs debugfs's
# block/<dev>/trace files, which some kernels refuse ("Operation not permitted"); the ftrace
# blk tracer gives the same records: each record of trace_pipe (with options/bin) is a 16-byte
# ftrace header (u32 pid, u32 cpu, u64 ts) followed by a genuine `struct blk_io_trace` and its
# payload. The header is stripped and the records split by their CPU field into
# NAME.blktrace.N, the files blktrace itself would write, which real blkparse reads.
#
# Writes, in the current folder: NAME.blktrace.0, NAME.blktrace.1, … (binary), NAME.blkparse
# (blkparse's default text of them), NAME.iolog (fio's v3 iolog of the first process of the
# same run: fio's --write_iolog). The workload: 2 fio processes on the device for 1 s, a 4 KiB
# random read/write mix at 350 + 150 IOPS (rate_iops=350,150) and a 16 KiB random writer at
# 150 IOPS, direct I/O.
set -eu
DEV=${1:-/dev/loop0}
NAME=${2:-loop-randrw}
T=/sys/kernel/tracing
B=/sys/block/$(basename "$DEV")/trace
mount -t tracefs none $T 2>/dev/null || true
echo 0 > $T/tracing_on
echo blk > $T/current_tracer
echo 1 > $B/enable
echo 1 > $T/options/bin
echo > $T/trace
cat $T/trace_pipe > "$NAME.raw" &
PIPE=$!
echo 1 > $T/tracing_on
fio --name=mixed --filename="$DEV" --direct=1 --ioengine=psync --rw=randrw --rwmixread=70 \
    --bs=4k --size=64m --rate_iops=350,150 --runtime=1 --time_based --write_iolog="$NAME.iolog" \
    --name=writer --filename="$DEV" --direct=1 --ioengine=psync --rw=randwrite --bs=16k \
    --size=64m --offset=64m --rate_iops=150 --runtime=1 --time_based >/dev/null
sleep 1
echo 0 > $T/tracing_on
kill $PIPE
echo 0 > $B/enable
echo 0 > $T/options/bin
echo nop > $T/current_tracer
python3 - "$NAME" <<'PY'
import struct, sys
name = sys.argv[1]
data = open(name + ".raw", "rb").read()
outs, i = {}, 0
while i + 16 + 48 <= len(data):
    rec = data[i + 16:i + 64]
    pdu_len = struct.unpack_from("<H", rec, 46)[0]
    cpu = struct.unpack_from("<I", rec, 40)[0]
    end = i + 64 + pdu_len
    outs.setdefault(cpu, bytearray()).extend(data[i + 16:end])
    i = end
for cpu, b in outs.items():
    open("%s.blktrace.%d" % (name, cpu), "wb").write(b)
PY
rm "$NAME.raw"
blkparse -i "$NAME" > "$NAME.blkparse"

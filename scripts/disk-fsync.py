#!/usr/bin/env python3
"""How this disk answers a commit's sync, with no store involved: pwrite a block into a
32 MB file and fsync it, over and over, for SECONDS; prints the latencies' p50, p99,
p99.9 and worst (docs/performance-history.md, "Orders' p99 and the disk").
  scripts/disk-fsync.py SECONDS FILE [BLOCK_BYTES=65536]"""
import os
import sys
import time

seconds, path = float(sys.argv[1]), sys.argv[2]
block = os.urandom(int(sys.argv[3]) if len(sys.argv) > 3 else 65536)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
took, offset, end = [], 0, time.time() + seconds
try:
    while time.time() < end:
        os.pwrite(fd, block, offset % (32 << 20))
        offset += len(block)
        start = time.perf_counter()
        os.fsync(fd)
        took.append((time.perf_counter() - start) * 1000)
finally:
    os.close(fd)
    os.unlink(path)
took.sort()
at = lambda share: took[min(len(took) - 1, int(len(took) * share))]
print(f"{len(took)} fsyncs of {len(block)} B in {seconds:.0f} s: p50 {at(.5):.2f} ms, p99 {at(.99):.2f} ms, "
      f"p99.9 {at(.999):.2f} ms, worst {took[-1]:.1f} ms; over 50 ms: {sum(t > 50 for t in took)}")

#!/usr/bin/env python3
"""What each thread of a running server is doing, every 5 ms for SECONDS: one line per
thread and sample with the time, thread id, name, state, wchan and system call, and for
an fsync (call 74) the file it syncs. Cheaper than `perf sched` for catching a stall in
the act (docs/performance-history.md, "Orders' p99 and the disk").
  scripts/sample-threads.py PID OUT SECONDS"""
import glob
import os
import sys
import time

pid, out, end = sys.argv[1], open(sys.argv[2], "w"), time.time() + float(sys.argv[3])


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:  # the thread ended meanwhile
        return ""


while time.time() < end:
    now = time.time()
    for task in glob.glob(f"/proc/{pid}/task/*"):
        stat = read(task + "/stat")
        state = stat[stat.rfind(")") + 2:stat.rfind(")") + 3]
        call = read(task + "/syscall").split(" ")
        line = f"{now:.3f} {task.rsplit('/', 1)[1]} {read(task + '/comm').strip()} {state} {read(task + '/wchan')} {call[0].strip()}"
        if call[0] == "74" and len(call) > 1:
            try:
                line += " " + os.readlink(f"/proc/{pid}/fd/{int(call[1], 16)}")
            except (OSError, ValueError):
                pass
        out.write(line + "\n")
    time.sleep(0.005)

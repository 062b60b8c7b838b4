#!/usr/bin/env python3
"""bench/stdio.py BINARY KIND CONNS SECONDS: `BINARY stdio` driven over its pipes with CONNS
requests kept in flight for SECONDS (KIND: list = tools/list, bike = get_bike_status on random
FR-PAR bikes). Every response is checked (a result, no isError). Prints one line for bench/run.sh:
"RATE P50_US P99_US CPU_US_PER_REQ DB_CPU_US_PER_REQ VALID" (CPU: the server process's user +
system time; DB CPU: PostgreSQL's, summed as bench/run.sh does over the postmaster whose PID is
in BENCH_PG_PID, its live children and its ended ones, 0 without it)."""
import json
import os
import random
import subprocess
import sys
import time

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def request(kind, rid):
    if kind == "list":
        msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": META}}
    else:
        n = 3 * random.randint(33334, 65332) + 2
        msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
               "params": {"name": "get_bike_status", "arguments": {"bikeId": "VL-%d" % n},
                          "_meta": META}}
    return (json.dumps(msg, separators=(",", ":")) + "\n").encode()


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def pg_ticks():
    """PostgreSQL's CPU ticks (bench/run.sh's pg_ticks): the postmaster's own and its ended
    children's (cutime, cstime), plus its live children's."""
    pid = int(os.environ.get("BENCH_PG_PID") or 0)
    if not pid:
        return 0
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    total = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    children = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task)) as f:
            children += f.read().split()
    for child in children:
        try:
            total += cpu_ticks(int(child))
        except OSError:
            pass  # ended meanwhile: counted in the postmaster's cutime once reaped
    return total


def main():
    binary, kind, conns, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    proc = subprocess.Popen([binary, "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, bufsize=0)
    out = proc.stdout
    sent = {}
    latencies = []
    good = bad = 0
    rid = 0
    # Warm-up: one request, answered, before the clock starts.
    proc.stdin.write(request(kind, 0))
    out.readline()
    c0 = cpu_ticks(proc.pid)
    d0 = pg_ticks()
    start = time.monotonic()
    end = start + seconds
    for _ in range(conns):
        rid += 1
        sent[rid] = time.monotonic()
        proc.stdin.write(request(kind, rid))
    buf = b""
    while sent:
        chunk = os.read(out.fileno(), 1 << 16)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            now = time.monotonic()
            try:
                msg = json.loads(line)
            except ValueError:
                bad += 1
                continue
            t0 = sent.pop(msg.get("id"), None)
            if t0 is None:
                continue  # a notification
            latencies.append(now - t0)
            result = msg.get("result")
            if isinstance(result, dict) and not result.get("isError") and \
                    ("tools" in result if kind == "list" else "structuredContent" in result):
                good += 1
            else:
                bad += 1
            if now < end:
                rid += 1
                sent[rid] = time.monotonic()
                proc.stdin.write(request(kind, rid))
    elapsed = time.monotonic() - start
    c1 = cpu_ticks(proc.pid)
    d1 = pg_ticks()
    proc.stdin.close()
    proc.wait(timeout=10)
    latencies.sort()
    n = len(latencies)
    p50 = latencies[n // 2] * 1e6 if n else 0
    p99 = latencies[min(n - 1, int(n * 0.99))] * 1e6 if n else 0
    hz = os.sysconf("SC_CLK_TCK")
    cpu = (c1 - c0) * 1e6 / hz / good if good else 0
    db = (d1 - d0) * 1e6 / hz / good if good else 0
    valid = "ok" if good and not bad and not sent else "INVALID"
    print("%.0f %d %d %.0f %.0f %s" % (good / elapsed, p50, p99, cpu, db, valid))


if __name__ == "__main__":
    main()

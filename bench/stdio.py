#!/usr/bin/env python3
"""bench/stdio.py BINARY KIND CONNS SECONDS: `BINARY stdio` driven over its pipes with CONNS
requests kept in flight for SECONDS (KIND: list = tools/list, bike = get_bike_status on random
FR-PAR bikes). Every response is checked (a result, no isError). Prints one line for bench/run.sh:
"RATE P50_US P99_US CPU_US_PER_REQ VALID" (CPU: the server process's user + system time)."""
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
    proc.stdin.close()
    proc.wait(timeout=10)
    latencies.sort()
    n = len(latencies)
    p50 = latencies[n // 2] * 1e6 if n else 0
    p99 = latencies[min(n - 1, int(n * 0.99))] * 1e6 if n else 0
    cpu = (c1 - c0) * 1e6 / os.sysconf("SC_CLK_TCK") / good if good else 0
    valid = "ok" if good and not bad and not sent else "INVALID"
    print("%.0f %d %d %.0f %s" % (good / elapsed, p50, p99, cpu, valid))


if __name__ == "__main__":
    main()

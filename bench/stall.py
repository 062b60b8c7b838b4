#!/usr/bin/env python3
"""The new tokens of make bench's loop-stall lines (bench/run.sh): one process that sends, spread
evenly over SECONDS, a get_bike_status with each token of TOKENS_FILE (one a line), each on a new
connection of its own, and waits for every answer (30 s at most each).

  stall.py PORT SECONDS TOKENS_FILE

Prints one line: STALL sent=N ok=N refused=N unavailable=N other=N
(ok: a 200 with a result; refused: 401; unavailable: 503)."""
import http.client
import json
import sys
import threading
import time

PORT, SECONDS, TOKENS = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "get_bike_status", "arguments": {"bikeId": "VL-2048"},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {}}}})
answers = []


def call(token):
    try:
        c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
        c.request("POST", "/mcp", BODY, {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
            "Mcp-Name": "get_bike_status", "Authorization": "Bearer " + token})
        r = c.getresponse()
        data = r.read()
        c.close()
        status = r.status if r.status != 200 or b'"structuredContent"' in data else -1
    except OSError:
        status = 0
    answers.append(status)  # list.append is atomic


with open(TOKENS) as f:
    tokens = [line.strip() for line in f if line.strip()]
start, threads = time.monotonic(), []
for i, token in enumerate(tokens):
    time.sleep(max(0.0, start + i * SECONDS / len(tokens) - time.monotonic()))
    threads.append(threading.Thread(target=call, args=(token,)))
    threads[-1].start()
for t in threads:
    t.join()
n = {s: answers.count(s) for s in (200, 401, 503)}
print("STALL sent=%d ok=%d refused=%d unavailable=%d other=%d" % (
    len(answers), n[200], n[401], n[503], len(answers) - sum(n.values())))

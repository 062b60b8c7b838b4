#!/usr/bin/env python3
"""otlp-sink.py READY_FILE: an OTLP/HTTP collector for make bench that takes every export and
keeps nothing: POST /v1/traces is read whole and answered 200 with an empty
ExportTraceServiceResponse. Its port goes to READY_FILE; it counts the exports and their bytes
and prints them when stopped (SIGTERM). It only stands in for a collector on another machine,
so that the traced lines measure what tracing costs the server."""
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

seen = {"exports": 0, "bytes": 0}


class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # kept alive, as libcurl reuses its connection

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        while n > 0:
            n -= len(self.rfile.read(min(n, 1 << 20)) or b"x" * n)
        seen["exports"] += 1
        seen["bytes"] += int(self.headers.get("Content-Length", "0"))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)

    def stop(*_):
        print(f"otlp-sink: {seen['exports']} exports, {seen['bytes']} bytes", file=sys.stderr)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()

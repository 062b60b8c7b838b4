#!/usr/bin/env python3
"""The identity provider of make bench (bench/run.sh), on 127.0.0.1, for the bench only.

  issuer.py DIR PORT ISSUER RESOURCE

GET PATH answers the file DIR/PATH as JSON (bench/run.sh writes the RFC 8414 metadata and the
key set there, and rewrites the key set for a key rotation). POST /introspect is RFC 7662 for the
client bikaroo-bench (HTTP Basic, secret bench-secret): a token that starts with "bench-opaque-"
is active (subject marie through customer-care-assistant, fleet:read, for RESOURCE, issued by
ISSUER, for 50 minutes), any other is not. When DIR/delay-jwks or DIR/delay-introspect holds a
number of milliseconds, the key set or the introspection answers that late: the slow issuer of
the loop-stall lines. Each request has a thread of its own, so late answers overlap."""
import base64
import json
import os
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR, PORT, ISSUER, RESOURCE = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
CLIENT = "Basic " + base64.b64encode(b"bikaroo-bench:bench-secret").decode()


def delay(name):
    try:
        with open(os.path.join(DIR, "delay-" + name)) as f:
            time.sleep(int(f.read().strip() or 0) / 1000)
    except FileNotFoundError:
        pass


class Issuer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # the server's libcurl keeps its connections

    def answer(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = os.path.normpath(urllib.parse.urlsplit(self.path).path).lstrip("/")
        if path.startswith(".."):
            return self.answer(404, {"error": "not found"})
        if path == "jwks.json":
            delay("jwks")
        try:
            with open(os.path.join(DIR, path), "rb") as f:
                return self.answer(200, f.read())
        except (FileNotFoundError, IsADirectoryError):
            return self.answer(404, {"error": "not found"})

    def do_POST(self):
        form = urllib.parse.parse_qs(
            self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode())
        if self.path != "/introspect":
            return self.answer(404, {"error": "not found"})
        if self.headers.get("Authorization") != CLIENT:
            return self.answer(401, {"error": "invalid_client"})
        delay("introspect")
        token = form.get("token", [""])[0]
        if not token.startswith("bench-opaque-"):
            return self.answer(200, {"active": False})
        now = int(time.time())
        return self.answer(200, {
            "active": True, "iss": ISSUER, "aud": RESOURCE, "sub": "marie",
            "client_id": "customer-care-assistant", "scope": "fleet:read",
            "iat": now, "exp": now + 3000})

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", PORT), Issuer)
server.daemon_threads = True
server.serve_forever()

#!/usr/bin/python3
# A local upstream for the egress and credential proxy tests: HTTPS (with a
# test CA's certificate for "localhost") and plain HTTP on loopback, each
# request recorded as one JSON line in LOG (method, path, headers, body).
#
#   upstream.py DIR     writes DIR/ports ("HTTPS_PORT HTTP_PORT") when
#                       listening; needs DIR/server.pem and DIR/server.key
#
# Paths: /sse streams three events 400 ms apart (for "arrives incrementally"),
# anything else answers {"ok": true, "path": ...}.
import json, os, ssl, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

d = sys.argv[1]
log_lock = threading.Lock()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def record(self, body):
        with log_lock, open(os.path.join(d, "requests.jsonl"), "a") as f:
            f.write(json.dumps({"tls": isinstance(self.connection, ssl.SSLSocket),
                                "method": self.command, "path": self.path,
                                "headers": dict(self.headers.items()),
                                "body": body.decode("latin-1")}) + "\n")

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        self.record(body)
        if self.path == "/sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for i in range(3):
                self.wfile.write(f"data: event {i} at {time.time():.3f}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.4)
            self.close_connection = True
            return
        out = json.dumps({"ok": True, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


def serve(srv):
    srv.serve_forever()


tls = ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
plain = ThreadingHTTPServer(("127.0.0.1", 0), H)
for s in (tls, plain):
    threading.Thread(target=serve, args=(s,), daemon=True).start()
with open(os.path.join(d, "ports.tmp"), "w") as f:
    f.write(f"{tls.server_address[1]} {plain.server_address[1]}\n")
os.rename(os.path.join(d, "ports.tmp"), os.path.join(d, "ports"))
threading.Event().wait()

#!/usr/bin/python3
# A local upstream for the egress and credential proxy tests: HTTPS (with a
# test CA's certificate for "localhost") and plain HTTP on loopback, each
# request recorded as one JSON line in LOG (method, path, headers, body).
#
#   upstream.py DIR     writes DIR/ports ("HTTPS_PORT HTTP_PORT") when
#                       listening; needs DIR/server.pem and DIR/server.key
#
# Paths: /sse streams three events 400 ms apart (for "arrives incrementally");
# /v1/messages answers like an LLM API, with usage (input 25, output 12), as
# server-sent events 400 ms apart when the JSON body asks "stream": true
# (with no usage in any event when it also says "no_usage": true);
# /v1/echo-key answers with the credential it received, in the body and a
# header, and /v1/echo-chunked the same, chunked, the key split across
# chunks (what the scrubber must catch); /v1/echo-gzip-ce the key gzipped,
# labelled by two Content-Encoding fields, identity then gzip;
# /v1/echo-gzip-te the key gzipped as "Transfer-Encoding: gzip, chunked";
# /v1/echo-key-ce the key as its Content-Encoding (what the credential
# proxy must refuse, and not quote); anything else answers
# {"ok": true, "path": ...}.
import gzip, json, os, ssl, sys, threading, time
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
        key = self.headers.get("x-api-key") or self.headers.get("authorization") or ""
        if self.path.startswith("/v1/messages") and b'"stream": true' in body:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = [{"type": "message_start", "message": {"usage": {"input_tokens": 25, "output_tokens": 1}}},
                      {"type": "content_block_delta", "delta": {"text": "hello"}},
                      {"type": "message_delta", "usage": {"output_tokens": 12}}]
            if b'"no_usage": true' in body:
                # As OpenAI streams unless the request asks for usage: none at all.
                events = [{"type": "content_block_delta", "delta": {"text": "hello"}}] * 3
            for e in events:
                ev = f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                self.wfile.flush()
                time.sleep(0.4)
            self.wfile.write(b"0\r\n\r\n")
            return
        if self.path == "/v1/echo-chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            data = ("key=" + key + ";").encode()
            mid = len(data) // 2
            for part in (data[:mid], data[mid:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        if self.path in ("/v1/echo-gzip-ce", "/v1/echo-gzip-te", "/v1/echo-key-ce"):
            packed = gzip.compress(json.dumps({"received": key}).encode())
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if self.path == "/v1/echo-gzip-te":
                self.send_header("Transfer-Encoding", "gzip, chunked")
                self.end_headers()
                self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(packed), packed))
                return
            if self.path == "/v1/echo-gzip-ce":
                self.send_header("Content-Encoding", "identity")
                self.send_header("Content-Encoding", "gzip")
            else:
                self.send_header("Content-Encoding", key)
                packed = b"{}"
            self.send_header("Content-Length", str(len(packed)))
            self.end_headers()
            self.wfile.write(packed)
            return
        if self.path.startswith("/v1/messages"):
            out = json.dumps({"type": "message", "content": [{"type": "text", "text": "hi"}],
                              "usage": {"input_tokens": 25, "output_tokens": 12}}).encode()
        elif self.path == "/v1/echo-key":
            out = json.dumps({"received": key}).encode()
        else:
            out = json.dumps({"ok": True, "path": self.path}).encode()
        if self.path == "/v1/echo-key":
            self.send_response(200)
            self.send_header("X-Echo", key)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
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

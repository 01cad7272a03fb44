#!/usr/bin/python3
# A git server over HTTPS on loopback for tests/host/push_remote.sh: git's
# own `git http-backend` run as CGI for each request (smart HTTP, push
# enabled: REMOTE_USER is set), TLS with the test CA's certificate for
# "localhost" (tests/lib_net.sh net_test_ca).
#
#   git_server.py DIR ROOT  serves the repositories under ROOT; needs
#                           DIR/server.pem and DIR/server.key; writes
#                           DIR/git_port when listening and one JSON line
#                           per request (method, path) to DIR/git_requests.jsonl
import json, os, ssl, subprocess, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

d, root = sys.argv[1], sys.argv[2]
log_lock = threading.Lock()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0], 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def cgi(self):
        path, _, query = self.path.partition("?")
        with log_lock, open(os.path.join(d, "git_requests.jsonl"), "a") as f:
            f.write(json.dumps({"method": self.command, "path": path}) + "\n")
        data = self.body()
        env = {
            "PATH": "/usr/bin:/bin", "GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(data)), "REMOTE_USER": "test", "REMOTE_ADDR": "127.0.0.1",
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        p = subprocess.run(["git", "http-backend"], input=data, env=env, capture_output=True)
        sep = p.stdout.find(b"\r\n\r\n")
        head, rest = (p.stdout[:sep], p.stdout[sep + 4:]) if sep >= 0 else \
            p.stdout.split(b"\n\n", 1) if b"\n\n" in p.stdout else (b"", p.stdout)
        status, headers = 200, []
        for line in head.replace(b"\r\n", b"\n").split(b"\n"):
            k, _, v = line.decode().partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    do_GET = do_POST = cgi


s = ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
s.socket = ctx.wrap_socket(s.socket, server_side=True)
with open(os.path.join(d, "git_port.tmp"), "w") as f:
    f.write("%d\n" % s.server_address[1])
os.rename(os.path.join(d, "git_port.tmp"), os.path.join(d, "git_port"))
s.serve_forever()

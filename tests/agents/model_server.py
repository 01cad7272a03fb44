#!/usr/bin/python3
# A scripted model server for the real agent CLIs (tests/host/agents.sh):
# HTTPS on loopback with the test CA's certificate for "localhost"
# (tests/lib_net.sh, net_test_ca), speaking each provider's wire format
# (one module per provider in tests/agents/model/), streaming included.
#
#   model_server.py DIR SCRIPT.json     writes DIR/port when listening
#
# The "model" is a script: a list of steps, each a tool call the agent's CLI
# is asked to make (a shell command, mostly), then a final text.  It keeps no
# state of its own: a request's step is the number of tool results its
# conversation already carries, as a real model sees the whole history.
# Every request is recorded in DIR/requests.jsonl; every tool result, the
# first time it is seen, in DIR/results.jsonl as {"step", "call", "output"}:
# what the agent's tools really did, for the test to judge.
import importlib, json, os, re, ssl, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "model"))

lock = threading.Lock()


class Script:
    """The steps of SCRIPT.json: {"steps": [STEP...], "final": TEXT}.

    A STEP is {"shell": COMMAND} (the CLI's shell tool) or
    {"tool": NAME, "input": {...}} (one of the CLI's own tools by name).
    {"plain": true}: a request without tools is answered with the final
    text by every provider (tests/host/policy_draft.sh); {"delay": S}:
    every answer waits S seconds after its request is recorded."""

    def __init__(self, path, d):
        with open(path) as f:
            s = json.load(f)
        self.steps = s.get("steps", [])
        self.final = s.get("final", "DONE")
        # "plain": true answers a request without tools with the final text
        # too (a plain completion: `cordon policy draft`), not as a side request.
        self.plain = bool(s.get("plain"))
        # "delay": seconds every answer waits, once its request is recorded
        # (a test looks at the client while it waits: policy_draft.sh).
        self.delay = float(s.get("delay", 0))
        self.dir = d
        self.seen = set()

    def step(self, n_done):
        """The step to ask for after n_done tool results, or None: the end."""
        return self.steps[n_done] if n_done < len(self.steps) else None

    def result(self, n, output):
        """The result of step n (0-based), recorded once."""
        if n in self.seen or n >= len(self.steps):
            return
        self.seen.add(n)
        rec(self.dir, "results.jsonl", {"step": n, "call": self.steps[n], "output": output})


def rec(d, name, obj):
    with lock, open(os.path.join(d, name), "a") as f:
        f.write(json.dumps(obj) + "\n")


class Request:
    """What a provider module handles: the request and ways to answer it."""

    def __init__(self, h, body):
        self.h = h
        self.method = h.command
        self.path = h.path
        self.headers = h.headers
        self.raw = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def send_json(self, status, obj, headers=()):
        b = json.dumps(obj).encode()
        self.h.send_response(status)
        self.h.send_header("Content-Type", "application/json")
        self.h.send_header("Content-Length", str(len(b)))
        for k, v in headers:
            self.h.send_header(k, v)
        self.h.end_headers()
        self.h.wfile.write(b)

    def sse_start(self, content_type="text/event-stream"):
        self.h.send_response(200)
        self.h.send_header("Content-Type", content_type)
        self.h.send_header("Cache-Control", "no-cache")
        self.h.send_header("Transfer-Encoding", "chunked")
        self.h.end_headers()

    def chunk(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.h.wfile.flush()

    def sse(self, data, event=None):
        """One server-sent event; data a str or a JSON-able object."""
        if not isinstance(data, str):
            data = json.dumps(data)
        self.chunk((f"event: {event}\n" if event else "") + f"data: {data}\n\n")

    def sse_end(self):
        self.h.wfile.write(b"0\r\n\r\n")
        self.h.wfile.flush()


MODULES = ["anthropic", "openai", "gemini"]
routes = []  # (method, compiled path regex, handler)


def load_routes():
    for m in MODULES:
        try:
            mod = importlib.import_module(m)
        except ImportError:
            continue
        for method, pattern, fn in mod.ROUTES:
            routes.append((method, re.compile(pattern), fn))


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def handle_any(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0], 16)
                if n == 0:
                    self.rfile.readline()
                    break
                body += self.rfile.read(n)
                self.rfile.readline()
        else:
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
        rec(self.server.dir, "requests.jsonl", {
            "method": self.command, "path": self.path,
            "headers": dict(self.headers.items()), "body": body.decode("utf-8", "replace")})
        if self.server.script.delay:
            time.sleep(self.server.script.delay)
        req = Request(self, body)
        path = self.path.split("?")[0]
        for method, rx, fn in routes:
            if method == self.command and rx.fullmatch(path):
                try:
                    fn(req, self.server.script)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                return
        req.send_json(404, {"error": {"type": "not_found_error",
                                      "message": f"the model server has no {self.command} {path}"}})

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any


def main():
    d, script = sys.argv[1], sys.argv[2]
    # Nothing inherited: a server started in the background of a command
    # run under flock(1) would otherwise hold its lock for as long as it
    # lives (a server left running held /run/cordon-dev.lock for every
    # other test of the machine).
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    load_routes()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    srv.dir = d
    srv.script = Script(script, d)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(os.path.join(d, "port.tmp"), "w") as f:
        f.write(f"{srv.server_address[1]}\n")
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
    srv.serve_forever()


if __name__ == "__main__":
    main()

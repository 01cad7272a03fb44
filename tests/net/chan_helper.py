#!/usr/bin/python3
"""Drive `cordon http-proxy` as `cordon run` does: a listening socket and the
supervisor's channel (a socketpair) handed to it as fds.  It must wait
for the session's cgroup ({"op":"session","cgroup_id":N}) before saying
ready and before serving anyone.

  chan_helper.py CORDON POLICY MODE PORT

MODE:
  bad-first    the first message is not the session's: it must exit, never ready
  closed       the channel is closed at once: it must exit, never ready
  queued-own   a client connects before the session message, which names
               this process's own cgroup: ready, then that client is served
               (a plain-HTTP request to localhost:PORT, which the policy allows)
  queued-other the same with another cgroup id: that client gets 403
Prints one line: what happened (the test greps it)."""
import json, os, select, socket, subprocess, sys, time

cordon, policy, mode, target = sys.argv[1:5]


def own_cgroup_id():
    # cgroup v2: the id is the inode number of the cgroup's directory.
    root = None
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        if f[f.index("-") + 1] == "cgroup2":
            root = f[4]
            break
    path = [l.split("::", 1)[1].strip() for l in open("/proc/self/cgroup") if l.startswith("0::")][0]
    return os.stat(root + path).st_ino


ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(16)
port = ls.getsockname()[1]
sup, helper_end = socket.socketpair()
# Its two fds at numbers nothing else here holds.
os.dup2(ls.fileno(), 100)
os.dup2(helper_end.fileno(), 101)
p = subprocess.Popen([cordon, "http-proxy", "--listen-fd", "100", "--channel-fd", "101",
                      "--policy", policy], pass_fds=(100, 101), stderr=subprocess.PIPE)
os.close(100)
os.close(101)
helper_end.close()
ls.close()


def lines(timeout):
    """What the helper said on the channel within timeout (until it closed it)."""
    out, end = b"", time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([sup], [], [], max(0, end - time.time()))
        if not r:
            break
        b = sup.recv(65536)
        if not b:
            break
        out += b
        if mode.startswith("queued") and b"\n" in out:
            break
    return [json.loads(l) for l in out.decode().splitlines() if l]


def exited():
    try:
        rc = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        return "still running"
    return "exit %d: %s" % (rc, p.stderr.read().decode().strip().splitlines()[-1:])


if mode == "bad-first":
    sup.sendall(b'{"op":"decision","hold":1,"allow":true}\n')
    said = lines(5)
    print("ready" if any(m.get("op") == "ready" for m in said) else "no ready", exited())
elif mode == "closed":
    sup.close()
    print(exited())
else:
    c = socket.create_connection(("127.0.0.1", port))
    time.sleep(0.3)                   # queued while the helper readies itself
    cg = own_cgroup_id() if mode == "queued-own" else 1 << 60   # no cgroup has it
    sup.sendall(json.dumps({"op": "session", "cgroup_id": cg}).encode() + b"\n")
    said = lines(10)
    ready = any(m.get("op") == "ready" for m in said)
    c.settimeout(10)
    c.sendall(("GET http://localhost:%s/queued HTTP/1.1\r\nHost: localhost:%s\r\n"
               "Connection: close\r\n\r\n" % (target, target)).encode())
    try:
        answer = c.recv(200).decode(errors="replace").split("\r\n")[0]
    except OSError as e:
        answer = "no answer (%s)" % e
    print("ready" if ready else "no ready", "|", answer or "closed")
    sup.close()
    exited()

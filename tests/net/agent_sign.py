#!/usr/bin/env python3
# A client of the ssh-agent at $SSH_AUTH_SOCK for tests/host/push_ssh.sh:
# lists its keys, then asks it to sign data for the first one, and prints
# one line: "sign <answer type>" (14 a signature, 5 a failure).
#   agent_sign.py userauth   an SSH public-key user authentication request
#                            (RFC 4252 7), what ssh asks to have signed
#   agent_sign.py other      anything else (here a bare blob)
#   agent_sign.py add        an ADD_IDENTITY (17), not a sign: prints "add <type>"
import os
import socket
import struct
import sys


def msg(s, body):
    s.sendall(struct.pack(">I", len(body)) + body)
    n = struct.unpack(">I", recv_n(s, 4))[0]
    return recv_n(s, n)


def recv_n(s, n):
    b = b""
    while len(b) < n:
        k = s.recv(n - len(b))
        if not k:
            raise SystemExit("the agent closed the connection")
        b += k
    return b


def string(b):
    return struct.pack(">I", len(b)) + b


def main():
    mode = sys.argv[1]
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["SSH_AUTH_SOCK"])
    if mode == "add":
        print("add %d" % msg(s, bytes([17]) + string(b"ssh-ed25519") + string(b"x" * 32))[0])
        return
    ans = msg(s, bytes([11]))
    if ans[0] != 12 or struct.unpack(">I", ans[1:5])[0] == 0:
        print("identities %d none" % ans[0])
        return
    klen = struct.unpack(">I", ans[5:9])[0]
    key = ans[9:9 + klen]
    alg = key[4:4 + struct.unpack(">I", key[:4])[0]]
    if mode == "userauth":
        data = (string(os.urandom(32)) + bytes([50]) + string(b"cordonssh") +
                string(b"ssh-connection") + string(b"publickey") + bytes([1]) +
                string(alg) + string(key))
    else:
        data = b"SSHSIG" + os.urandom(32)
    print("sign %d" % msg(s, bytes([13]) + string(key) + string(data) + struct.pack(">I", 0))[0])


main()

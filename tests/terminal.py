#!/usr/bin/env python3
"""A terminal for `cordon run`'s approval prompt, played by a test.

terminal.py KEY DELAY LOG -- CMD...: runs CMD (cordon) on a pseudo-terminal
and behaves as the terminal emulators the agent can reach through its own
output do: after LATENCY (as over ssh) it answers what was written to it,
in order:
  - ENQ (0x05): the answerback "PuTTY" (PuTTY's default), bare text;
  - DA1 (CSI c), XTVERSION (CSI > 0 q, answered "kitty(0.35.2)"),
    DSR (CSI 5 n, CSI 6 n), a title report (CSI 21 t, the title the
    output set with OSC 0 or 2), DECRQSS (DCS $ q ... ST, the request
    echoed inside the reply);
  - while mouse tracking is on (CSI ? 1000/1002/1003 h), an X10 mouse
    report every 50 ms at column 89 and row 83, whose raw coordinate bytes
    are "y" and "s".
The human: KEY ("-" for none) is typed DELAY seconds after the prompt's
question appeared; KEY may hold several answers split by "|" (an intent
"i...\r", then another), each typed DELAY seconds after the question
appeared once more.  Exit: CMD's status.  LOG gets what the terminal showed,
with markers "<<PROMPT>>" (the question appeared) and "<<KEY>>" (the human
typed), then a line "cordon-tty PATH DEV": the terminal CMD was given, and the
device of its devpts instance (a session's terminal is in one of its own).
"""
import os
import pty
import re
import select
import sys
import time

LATENCY = 0.15


def main():
    key, delay, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(cmd[0], cmd)
    shown = b""          # everything the terminal received, for the log
    scan = b""           # received and not yet scanned for queries
    title = b""
    mouse = False
    replies = []         # (due time, bytes), in order
    keys = [] if key == "-" else key.split("|")
    asked_at = None
    asked = 0            # times the question appeared
    next_mouse = 0.0
    ctty = ""
    deadline = time.time() + 30
    while time.time() < deadline:
        now = time.time()
        while replies and replies[0][0] <= now:
            os.write(fd, replies.pop(0)[1])
        if mouse and now >= next_mouse:
            os.write(fd, b"\x1b[M" + bytes([32 + 3, 32 + 89, 32 + 83]))
            next_mouse = now + 0.05
        if asked_at is not None and keys and now >= asked_at + delay:
            os.write(fd, keys.pop(0).encode())
            shown += b"<<KEY>>"
            asked_at = None
        if not select.select([fd], [], [], 0.02)[0]:
            continue
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        shown += d
        scan += d
        if not ctty:
            ctty = os.readlink("/proc/%d/fd/1" % pid)
        if shown.count(b"Approve once") > asked:
            asked = shown.count(b"Approve once")
            asked_at = time.time()
            shown += b"<<PROMPT>>"
        due = time.time() + LATENCY
        # Queries, in the order they arrived; a partial one waits for more.
        pat = re.compile(rb"\x05|\x1b\[c|\x1b\[>0q|\x1b\[([56])n|\x1b\[21t|"
                         rb"\x1b\][02];([^\x07\x1b]*)(?:\x07|\x1b\\)|"
                         rb"\x1bP\$q([^\x1b]*)\x1b\\|\x1b\[\?(100[023])([hl])")
        last = 0
        for m in pat.finditer(scan):
            q = m.group(0)
            last = m.end()
            if q == b"\x05":
                replies.append((due, b"PuTTY"))
            elif q == b"\x1b[c":
                replies.append((due, b"\x1b[?62;22c"))
            elif q == b"\x1b[>0q":
                replies.append((due, b"\x1bP>|kitty(0.35.2)\x1b\\"))
            elif m.group(1):
                replies.append((due, b"\x1b[0n" if m.group(1) == b"5" else b"\x1b[24;1R"))
            elif q == b"\x1b[21t":
                replies.append((due, b"\x1b]l" + title + b"\x1b\\"))
            elif m.group(2) is not None:
                title = m.group(2)
            elif m.group(3) is not None:
                replies.append((due, b"\x1bP1$r" + m.group(3) + b"\x1b\\"))
            else:
                mouse = m.group(5) == b"h"
        scan = scan[last:] if last else scan[-64:]
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    with open(log, "wb") as f:
        f.write(shown.replace(b"\r", b"") + b"\ncordon-tty " + ctty.encode() + b" " +
                str(os.stat(ctty).st_dev).encode() + b"\n")
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()

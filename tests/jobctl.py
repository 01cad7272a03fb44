#!/usr/bin/env python3
"""Job control for `cordon run`, played as an interactive shell would.

jobctl.py COUNTER -- CMD...: runs CMD (cordon run, whose agent writes a
rising count into the file COUNTER) as the foreground job of a shell on a
pseudo-terminal.  When the count first moves, the human presses Ctrl-Z;
then the shell (this script) must see the job stop, the count must stand
still for a second, and `fg` (the terminal back to the job, SIGCONT) must
let the agent go on to its end.  Prints one line per step:
  stopped N / not-stopped     the shell saw CMD stop (N: seconds after ^Z)
  frozen A B                  the count before and after a second stopped
  exit S                      CMD's exit status after fg
Exit 0 when every step happened, 1 otherwise.
"""
import os
import pty
import select
import signal
import sys
import time


def count(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return -1


def drain(fd, until):
    while time.time() < until:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                if not os.read(fd, 4096):
                    return
            except OSError:
                return


def shell(counter, cmd, report):
    """The pty's session leader: a job-control shell with one job."""
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        os.tcsetpgrp(0, os.getpid())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.execv(cmd[0], cmd)
    os.setpgid(job, job)
    os.tcsetpgrp(0, job)
    ok = True
    t0 = time.time()
    while count(counter) < 1 and time.time() < t0 + 20:
        time.sleep(0.05)
    os.write(report, b"go\n")                       # the parent types ^Z now
    t_z = time.time()
    pid, st = os.waitpid(job, os.WUNTRACED)
    if os.WIFSTOPPED(st):
        os.write(report, b"stopped %.1f\n" % (time.time() - t_z))
        os.tcsetpgrp(0, os.getpgrp())               # the shell's prompt
        time.sleep(0.5)
        a = count(counter)
        time.sleep(1.0)
        b = count(counter)
        os.write(report, b"frozen %d %d\n" % (a, b))
        ok = a == b and a > 0
        os.tcsetpgrp(0, job)                        # fg
        os.killpg(job, signal.SIGCONT)
        pid, st = os.waitpid(job, 0)
    else:
        os.write(report, b"not-stopped\n")
        ok = False
    code = os.waitstatus_to_exitcode(st)
    os.write(report, b"exit %d\n" % code)
    os._exit(0 if ok and code == 0 else 1)


def main():
    counter = sys.argv[1]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    r, w = os.pipe()
    pid, fd = pty.fork()
    if pid == 0:
        os.close(r)
        shell(counter, cmd, w)
    os.close(w)
    lines = b""
    deadline = time.time() + 60
    while time.time() < deadline:
        ready = select.select([fd, r], [], [], 0.05)[0]
        if fd in ready:
            try:
                os.read(fd, 4096)
            except OSError:
                pass
        if r in ready:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            lines += chunk
            if chunk.startswith(b"go") or b"\ngo\n" in chunk or chunk == b"go\n":
                os.write(fd, b"\x1a")
    drain(fd, time.time() + 0.2)
    _, st = os.waitpid(pid, 0)
    out = lines.replace(b"go\n", b"").decode()
    sys.stdout.write(out)
    return os.waitstatus_to_exitcode(st)


if __name__ == "__main__":
    sys.exit(main())

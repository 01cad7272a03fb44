#!/bin/sh
# "**" in a path is any depth, as .gitignore reads it (issue 34), in a real
# session: a deny of ${WORKSPACE}/**/.env refuses the workspace's .env,
# sub/.env and a/b/.env (the kernel floor was given each of them at start;
# here the fallback's Landlock split), and leaves env.txt and a/.envrc
# readable.  `cordon policy explain` judges the same by pattern, and the
# session says at start that a match made later is not in the floor's
# tables.  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
session_test star
cleanup() { rm -rf "$WS" "$scratch"; rm -f /var/cordon-audit.*.jsonl; }
trap cleanup EXIT

mkdir -p "$WS/sub" "$WS/a/b"
for f in .env sub/.env a/b/.env env.txt a/.envrc; do echo "secret in $f" >"$WS/$f"; done
chown -R "$AGENT" "$WS"
policy=$scratch/policy.json
cat >"$policy" <<'JSON'
{ "cordon_policy": 1, "name": "starstar",
  "rules": [
    { "name": "workspace", "decision": "allow", "fs": { "paths": ["${WORKSPACE}"], "rights": ["all"] } },
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null"], "rights": ["read", "write"] } },
    { "name": "dotenv", "decision": "deny",
      "fs": { "paths": ["${WORKSPACE}/**/.env"], "rights": ["read", "write"] } } ] }
JSON

for f in .env sub/.env a/b/.env env.txt a/.envrc; do
    o=$("$cordon" policy explain --var WORKSPACE="$WS" "$policy" read "$WS/$f" 2>&1)
    case $f in
    *.env) ok "explain: read $f is denied by dotenv" sh -c 'printf %s "$1" | grep -q "denies read"' _ "$o" ;;
    *) ok "explain: read $f is allowed" sh -c 'printf %s "$1" | grep -q "^decision: *allow"' _ "$o" ;;
    esac
done

in_session --policy "$policy" -- /bin/sh -c '
    for f in .env sub/.env a/b/.env env.txt a/.envrc; do
        if cat "$0/$f" >/dev/null 2>&1; then echo "read $f"; else echo "refused $f"; fi
    done' "$WS"
ok "the session ran (rc=$rc)" test "$rc" -eq 0 || why
for f in .env sub/.env a/b/.env; do
    ok "in the session, $f is refused" sh -c 'printf "%s\n" "$1" | grep -qx "refused $2"' _ "$out" "$f"
done
for f in env.txt a/.envrc; do
    ok "in the session, $f is readable" sh -c 'printf "%s\n" "$1" | grep -qx "read $2"' _ "$out" "$f"
done
# What the floor cannot hold (a match made later) is said at start.
ok "the session says a later match is not in the kernel's tables" said "- patterns-later:"

# The agent reads a "**"-denied file by every path form (fallback: the
# Landlock split).  Each victim is its own file, so a destructive attack
# (link, rename) leaves the others as they were.  A directory named "**"
# is a name, and what is below it matches as below any other directory.
mkdir -p "$WS/clean" "$WS/**" "$WS/h1" "$WS/r1" "$WS/d1"
for f in '**/.env' h1/.env r1/.env d1/.env; do echo "secret in $f" >"$WS/$f"; done
ln -s a "$WS/lnk"
chown -R "$AGENT" "$WS"
attacks="relative via-proc-cwd via-dotdot via-double-slash in-a-dir-named-starstar
via-symlink-made-before via-new-symlink o-path-then-proc-fd openat2-beneath
openat2-no-symlinks-in-root hard-link-elsewhere hard-link-beside rename-elsewhere
rename-beside rename-its-directory bind-in-own-namespace"
if [ ! -x /usr/bin/python3 ]; then
    # The attacks are written in Python (ctypes for openat2 and mount).
    skip "the session attacks on a **-denied .env: no /usr/bin/python3 here (the VM's busybox guest)"
else
in_session --policy "$policy" -- /usr/bin/python3 -c '
import ctypes, os, sys
ws = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def rd(p):
    with open(p, "rb") as f:
        f.read()
def fdread(fd):
    os.read(fd, 10)
def attempt(name, f):
    try:
        f()
        print("read " + name)
    except OSError as e:
        print("refused %s (%s)" % (name, os.strerror(e.errno)))
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
def openat2(path, resolve):
    d = os.open(ws, os.O_PATH | os.O_DIRECTORY)
    h = How(os.O_RDONLY, 0, resolve)
    fd = libc.syscall(437, d, path.encode(), ctypes.byref(h), ctypes.sizeof(h))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "openat2")
    fdread(fd)
def then(*steps):
    def f():
        for s in steps:
            s()
    return f
os.chdir(ws + "/sub")
attempt("relative", lambda: rd(".env"))
attempt("via-proc-cwd", lambda: rd("/proc/self/cwd/.env"))
attempt("via-dotdot", lambda: rd(ws + "/clean/../.env"))
attempt("via-double-slash", lambda: rd(ws + "//sub///.env"))
attempt("in-a-dir-named-starstar", lambda: rd(ws + "/**/.env"))
attempt("via-symlink-made-before", lambda: rd(ws + "/lnk/b/.env"))
attempt("via-new-symlink", then(lambda: os.symlink(ws + "/.env", ws + "/clean/sl"),
                                lambda: rd(ws + "/clean/sl")))
attempt("o-path-then-proc-fd", lambda: rd("/proc/self/fd/%d" % os.open(ws + "/.env", os.O_PATH)))
attempt("openat2-beneath", lambda: openat2(".env", 0x08))
attempt("openat2-no-symlinks-in-root", lambda: openat2("sub/.env", 0x04 | 0x10))
attempt("hard-link-elsewhere", then(lambda: os.link(ws + "/h1/.env", ws + "/clean/hl"),
                                    lambda: rd(ws + "/clean/hl")))
attempt("hard-link-beside", then(lambda: os.link(ws + "/sub/.env", ws + "/sub/hl"),
                                 lambda: rd(ws + "/sub/hl")))
attempt("rename-elsewhere", then(lambda: os.rename(ws + "/r1/.env", ws + "/clean/moved"),
                                 lambda: rd(ws + "/clean/moved")))
attempt("rename-beside", then(lambda: os.rename(ws + "/a/b/.env", ws + "/a/b/renamed"),
                              lambda: rd(ws + "/a/b/renamed")))
attempt("rename-its-directory", then(lambda: os.rename(ws + "/d1", ws + "/d2"),
                                     lambda: rd(ws + "/d2/.env")))
def bind():
    if libc.unshare(0x10000000 | 0x00020000) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    if libc.mount((ws + "/.env").encode(), (ws + "/env.txt").encode(), None, 4096, None) != 0:
        raise OSError(ctypes.get_errno(), "mount")
    rd(ws + "/env.txt")
attempt("bind-in-own-namespace", bind)
' "$WS"
ok "the attack session ran (rc=$rc)" test "$rc" -eq 0 || why
for a in $attacks; do
    ok "a **-denied .env, $a: refused" \
        sh -c 'printf "%s\n" "$1" | grep -q "^refused $2 "' _ "$out" "$a" ||
        printf '%s\n' "$out" | grep -- " $a" >&2
done
fi

# A "**" that cannot be expanded whole (here deeper than 64 levels) refuses
# the session, naming why: the floor never holds half of a deny.
deep=$WS/deep
i=0
while [ $i -lt 70 ]; do deep=$deep/d; i=$((i + 1)); done
mkdir -p "$deep"
chown -R "$AGENT" "$WS/deep"
in_session --policy "$policy" -- /bin/true
ok "a \"**\" past 64 levels: the session refuses to start (rc=$rc)" test "$rc" -eq 125
ok "  saying why" said 'a "**" pattern reaches more than 100,000 directories or 64 levels'
rm -rf "$WS/deep"

# "a**" would silently be "a*": an error at its position instead.
printf '{ "cordon_policy": 1,\n  "rules": [ { "name": "x", "decision": "deny", "fs": { "paths": ["/w/a**/.env"], "rights": ["read"] } } ] }\n' >"$scratch/bad.json"
o=$("$cordon" policy check "$scratch/bad.json" 2>&1); rc=$?
ok "policy check refuses \"a**\" (rc=$rc)" test "$rc" -eq 1
ok "  at FILE:LINE:COL: $o" sh -c 'printf %s "$1" | grep -q "bad.json:2:67: error: .*whole path component"' _ "$o"

# An allow by pattern grants only where a match really is: a link the agent
# planted in an earlier session (ws/x/public -> a directory no rule names)
# must not make the next session's floor grant its target.
sec=$scratch/sec
mkdir -p "$sec" "$WS/x" && echo topsecret >"$sec/f" && chmod 0755 "$scratch" "$sec" && chmod 0644 "$sec/f"
ln -s "$sec" "$WS/x/public" && chown -hR "$AGENT" "$WS/x"
sed 's|"rules": \[|"rules": [ { "name": "pub", "decision": "allow", "fs": { "paths": ["${WORKSPACE}/**/public"], "rights": ["read"] } },|' \
    "$policy" >"$scratch/pub.json"
ok "the policy with an allow of \${WORKSPACE}/**/public loads" grep -q '"pub"' "$scratch/pub.json"
in_session --policy "$scratch/pub.json" -- /bin/sh -c 'cat "$0/x/public/f"; cat "$1/f"; echo end' "$WS" "$sec"
ok "a planted link under an allow pattern grants nothing where it points (out: $(printf %s "$out" | tr '\n' ' '))" \
    sh -c '! printf %s "$1" | grep -q topsecret && printf %s "$1" | grep -q end' _ "$out"
rm -rf "$WS/x"
done_testing

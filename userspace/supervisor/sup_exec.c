// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The supervisor's side of an exec (sup_exec.h): the path, the argv and the
 * working directory read from the task, the decision (exec_decide.c) asked
 * of them, the answer, and the records.
 *
 * What a decision may rest on (seccomp_unotify(2)): the task's memory can
 * change after the supervisor reads it.  An allow is answered CONTINUE
 * because the floor judges the binary the kernel actually opens (BPF LSM
 * bprm_check / Landlock EXECUTE) and the exec recheck
 * (bpf/exec_recheck.bpf.c) has the kernel compare the argv, the path and
 * the binary it received with what was judged, killing the exec before it
 * runs if they differ.  Where the recheck cannot load, an allow that
 * depends on argv (git, npm, curl...: the recognisers) is refused while
 * another task shares the caller's memory (a MAP_SHARED page is then not
 * caught: declared).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <openssl/evp.h>

#include "exec_decide.h"
#include "exec_recheck.h"
#include "net.h"
#include "notify.h"
#include "push_grant.h"
#include "sup_exec.h"
#include "sup_held.h"
#include "sup_record.h"
#include "sup_stats.h"
#include "task_path.h"
#include "util.h"

/*
 * The largest argv an exec can carry is the kernel's: its strings and
 * pointers (with the environment's) may take a quarter of the stack
 * limit, and never more than 6 MiB (fs/exec.c: _STK_LIM / 4 * 3), each
 * argument at least a pointer and a NUL.  The supervisor reads up to that,
 * so an exec the kernel would run is judged, never refused for its size
 * (`rm *.o` over thousands of files, a linker's command line); beyond it
 * the answer is the kernel's own, E2BIG, and a record says so.
 */
#define MAX_ARG_BYTES (6u << 20)
#define MAX_ARGS (MAX_ARG_BYTES / (sizeof(char *) + 1))

/* H's expectation in the recheck's map; that the task is still in the call is the caller's to check. */
static int arm(struct sup *s, const struct held *h, const char *comm, const char **why)
{
	struct cordon_exec_expect e;
	char own[16];

	if (!exec_recheck_enabled(&s->recheck))
		return 0;
	e = h->exec;
	e.cgroup = s->cgid;
	if (!comm) {
		sup_record_comm(h->pid, own, sizeof(own));
		comm = own;
	}
	return exec_recheck_arm(&s->recheck, h->pid, &e, comm, h->summary, why);
}

int sup_exec_arm(struct sup *s, const struct held *h, const char *comm, const char **why)
{
	int r = arm(s, h, comm, why);

	if (r < 0 || !exec_recheck_enabled(&s->recheck))
		return r;
	/*
	 * A task that died before the arm (its exit cleared nothing yet to
	 * clear) would leave the expectation behind for good, one map entry
	 * each: a session could fill the map, and every session's execs would
	 * be refused.  The notification is still pending only while the task
	 * is alive in the call, so its exit, if any, comes after the arm and
	 * takes the entry; otherwise the entry is taken here.
	 */
	if (!notify_valid(s->listener, h->notif)) {
		exec_recheck_disarm(&s->recheck, h->pid);
		*why = "the task left the exec before it was answered";
		return -ESRCH;
	}
	return 0;
}

/* An exec the kernel killed for not being what was judged: its record. */
static void killed_record(void *ctx, const struct armed_exec *a)
{
	struct sup *s = ctx;
	json_t *raw = json_pack("{s:o}", "argv", pol_json_text(a->summary));

	sup_record_as(s, a->tid, a->comm, "execve", raw, NULL, "deny", NULL,
		      "killed by the kernel at exec: the argv or binary it received is not "
		      "what was judged (rewritten after the check)", NULL);
	json_decref(raw);
}

void sup_exec_sweep(struct sup *s)
{
	exec_recheck_sweep(&s->recheck, killed_record, s);
}

static size_t argv_size(char *const *argv, size_t *argc);

/* The argv joined by spaces, whole (shown to humans through pol_printable); NULL: no memory. */
static char *summary_argv(char *const *argv)
{
	size_t n = argv_size(argv, NULL), o = 0;
	char *out = malloc(n + 1);

	if (!out)
		return NULL;
	for (int i = 0; argv && argv[i]; i++) {
		size_t l = strlen(argv[i]);

		if (i)
			out[o++] = ' ';
		memcpy(out + o, argv[i], l);
		o += l;
	}
	out[o] = '\0';
	return out;
}

/*
 * An argv as the records keep it.  Attack: an agent that execs with
 * megabytes of arguments, again and again, fills the host's disk through
 * the audit log, and every subscriber's socket.  And no attack at all: a
 * Codex command is `bash -lc` with a 38 KB shell snapshot, kept whole
 * twice per record (raw and event), which spent a 1 GiB audit budget in
 * about 6,500 commands.  Up to RECORD_ARGV_BYTES the argv is kept whole;
 * past it, its first RECORD_ARGV_BYTES (the argument that crosses the
 * bound cut on a character), with the count, the size and the SHA-256 of
 * the whole argv (its strings, each with its NUL), so the record still
 * names exactly what was judged; the event keeps the digest only.  The
 * policy always judges the whole argv.  An exec record is then at most
 * about 6 KB of argv however large the command (tests/host/run_env.sh
 * measures 10,000 Codex-sized commands against the budget).
 */
#define RECORD_ARGV_BYTES (4u << 10)

static size_t argv_size(char *const *argv, size_t *argc)
{
	size_t n = 0, i = 0;

	for (; argv && argv[i]; i++)
		n += strlen(argv[i]) + 1;
	if (argc)
		*argc = i;
	return n;
}

/* The digest of a large argv: {argc, argv_bytes, argv_sha256}. */
static json_t *argv_digest(char *const *argv)
{
	unsigned char md[32];
	char hex[65];
	size_t argc, bytes = argv_size(argv, &argc);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1;

	for (size_t i = 0; ok && i < argc; i++)
		ok = EVP_DigestUpdate(c, argv[i], strlen(argv[i]) + 1) == 1;
	ok = ok && EVP_DigestFinal_ex(c, md, NULL) == 1;
	EVP_MD_CTX_free(c);
	hex_encode(md, sizeof(md), hex);
	return json_pack("{s:I,s:I,s:s}", "argc", (json_int_t)argc, "argv_bytes", (json_int_t)bytes,
			 "argv_sha256", ok ? hex : "unavailable");
}

/*
 * What an exec's records keep: *raw its path and argv (for a large argv,
 * the first RECORD_ARGV_BYTES of it and its digest), *kept the event whole
 * or, for a large argv, its tool and the same digest (computed once).
 */
static void exec_records(const char *canon, char **argv, json_t *event, json_t **raw,
			 json_t **kept)
{
	json_t *av = json_array(), *d = NULL;
	size_t used = 0;
	bool whole = argv_size(argv, NULL) <= RECORD_ARGV_BYTES;

	*raw = json_pack("{s:o}", "path", pol_json_text(canon));
	for (int i = 0; argv && argv[i]; i++) {
		size_t l = strlen(argv[i]);

		if (!whole && used + l + 1 > RECORD_ARGV_BYTES) {
			size_t cut = RECORD_ARGV_BYTES - used;
			char *head;

			/* On a character: never inside a UTF-8 sequence. */
			while (cut > 0 && ((unsigned char)argv[i][cut] & 0xC0) == 0x80)
				cut--;
			head = strndup(argv[i], cut);
			if (head && cut)
				json_array_append_new(av, pol_json_text(head));
			free(head);
			break;
		}
		used += l + 1;
		json_array_append_new(av, pol_json_text(argv[i]));
	}
	json_object_set_new(*raw, "argv", av);
	if (whole) {
		*kept = json_incref(event);
		return;
	}
	d = argv_digest(argv);
	json_object_set_new(*raw, "argv_truncated", json_true());
	json_object_update(*raw, d);
	*kept = event ? json_pack("{s:O,s:O,s:O}", "server", json_object_get(event, "server"),
				  "tool", json_object_get(event, "tool"), "arguments", d) : NULL;
	json_object_set_new(json_object_get(*kept, "arguments"), "truncated", json_true());
	/* A push's destination is what the human approves, and what its grant names. */
	if (json_object_get(json_object_get(event, "arguments"), "destination"))
		json_object_set(json_object_get(*kept, "arguments"), "destination",
				json_object_get(json_object_get(event, "arguments"), "destination"));
	json_decref(d);
}

/*
 * A held git push: where it goes, read as git would (push_grant.h), into
 * the event's "destination" (so the human approves a destination, and an
 * approval "for this session" holds for that destination only) and into
 * *shown, the summary's tail.  Unknown: said so in the event, and no grant
 * can follow (the push then reaches only what the floor allows).
 */
static void push_destination(struct sup *s, const struct notify_req *req, char **argv,
			     json_t *event, char **shown)
{
	uint64_t envp_addr = req->nr == SYS_execveat ? req->args[3] : req->args[2];
	_cleanup_free_ char **envp = NULL;
	const char *why = NULL;
	json_t *dest, *d;
	size_t i, o = 0, cap = 1024;
	char *out = malloc(cap);

	*shown = out;
	if (!out)
		return;
	out[0] = '\0';
	if (notify_read_argv(req->pid, envp_addr, MAX_ARGS, MAX_ARG_BYTES, &envp) < 0)
		envp = NULL;
	dest = push_dest_resolve(s, req->pid, argv, envp, event, &why);
	if (!dest) {
		/* In the event and its records; the summary stays the command's own. */
		json_object_set_new(json_object_get(event, "arguments"), "destination",
				    json_pack("{s:s}", "unknown", why ?: "?"));
		return;
	}
	json_array_foreach(dest, i, d)
		if (o < cap)
			o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? ", " : " -> ",
					      json_string_value(json_object_get(d, "url")) ?: "?");
	json_object_set_new(json_object_get(event, "arguments"), "destination", dest);
}

/* The binary as resolved once (task_path_canon_file), when that could be done. */
struct exec_file {
	bool known;
	struct stat st;
	struct statfs sf;
};

/*
 * PATH (relative to BASE) canonical in CANON: a regular file there is
 * resolved with one open (task_path_canon_file), and its stat kept for
 * the rest of the exec's handling; anything else (absent: a PATH
 * search's miss, a directory, a name with no usable kernel path) by
 * task_path_canon, which says what pol_canon_path always said.  Both give
 * the path with every symlink resolved.
 */
static int canon_exec(const char *path, const char *base, char *canon, size_t len,
		      struct exec_file *f, int *keep)
{
	char abs[PATH_MAX];

	f->known = false;
	if (path[0] == '/' ? snprintf(abs, sizeof(abs), "%s", path) < (int)sizeof(abs) :
	    snprintf(abs, sizeof(abs), "%s/%s", base, path) < (int)sizeof(abs))
		f->known = task_path_canon_file(abs, canon, len, &f->st, &f->sf, keep) == 0;
	if (f->known)
		return 0;
	return task_path_canon(path, base, canon, len);
}

/* The session's side of an exec's decision (exec_decide.h): what it asks, answered here. */
struct exec_io {
	struct sup *s;
	const struct notify_req *req;
	char **argv;
	struct held *h;
	bool at;
	int dirfd;
	const char *path, *canon;
	char **dest_shown;
	const struct exec_file *file;
};

static bool ask_session_approved(void *ctx, json_t *event, const char *binary)
{
	struct exec_io *io = ctx;

	return sup_session_approved(io->s, event, binary);
}

static bool ask_human_denied(void *ctx, json_t *event)
{
	struct exec_io *io = ctx;

	return sup_human_denied(io->s, event);
}

static void ask_destination(void *ctx, json_t *event)
{
	struct exec_io *io = ctx;

	push_destination(io->s, io->req, io->argv, event, io->dest_shown);
}

static int ask_expect(void *ctx)
{
	struct exec_io *io = ctx;

	const struct exec_file *f = io->file;

	return net_exec_expect_known(io->s->net, io->at, io->dirfd, io->path, io->argv, io->canon,
				     f->known ? &f->st : NULL, f->known ? &f->sf : NULL,
				     &io->h->exec);
}

static int ask_memory_shared(void *ctx)
{
	struct exec_io *io = ctx;

	return notify_memory_shared(io->req->pid, io->s->cgroup);
}

static bool ask_missing(void *ctx)
{
	struct exec_io *io = ctx;
	struct stat st;

	if (io->file->known)
		return false;
	return stat(io->canon, &st) < 0 && errno == ENOENT;
}

void sup_exec_handle(struct sup *s, const struct notify_req *req)
{
	bool at = req->nr == SYS_execveat;
	int dirfd = at ? (int)req->args[0] : AT_FDCWD;
	uint64_t path_addr = at ? req->args[1] : req->args[0];
	uint64_t argv_addr = at ? req->args[2] : req->args[1];
	int flags = at ? (int)req->args[4] : 0;
	char path[PATH_MAX], base[PATH_MAX], canon[PATH_MAX], cwd[PATH_MAX];
	char comm[32];
	const char *why = NULL;
	_cleanup_free_ char **argv = NULL;
	_cleanup_free_ char *summary = NULL, *dest_shown = NULL;
	bool session_ok = false;
	struct exec_verdict v;
	struct pol_result res;
	struct held h = { .notif = req->id, .pid = req->pid, .nr = req->nr };
	struct exec_file file = { .known = false };
	json_t *raw = NULL, *event = NULL, *kept = NULL;
	_cleanup_close_ int bin_fd = -1, comm_fd = -1;     /* closed after the answer */
	bool path_read, armed = false;
	int r;

	memcpy(h.args, req->args, sizeof(h.args));
	r = notify_read_exec(req->pid, path_addr, path, sizeof(path), argv_addr, MAX_ARGS,
			     MAX_ARG_BYTES, &argv, &path_read);
	if (r >= 0)
		r = task_path_fd(req->pid, AT_FDCWD, cwd, sizeof(cwd));
	if (r >= 0) {
		char own[PATH_MAX];

		if (at && (flags & AT_EMPTY_PATH) && !path[0])
			r = task_path_fd(req->pid, dirfd, canon, sizeof(canon));
		else if (path[0] == '/' && (r = task_path_own(req->pid, path, own, sizeof(own))) == 0)
			r = canon_exec(own, "/", canon, sizeof(canon), &file, &bin_fd);
		else if (dirfd == AT_FDCWD)     /* relative to the directory just read */
			r = canon_exec(path, cwd, canon, sizeof(canon), &file, &bin_fd);
		else if ((r = task_path_fd(req->pid, dirfd, base, sizeof(base))) == 0)
			r = canon_exec(path, base, canon, sizeof(canon), &file, &bin_fd);
	}
	if (r < 0) {
		/*
		 * Unreadable arguments: unknown means deny.  An argv past the
		 * kernel's own limit gets the kernel's answer, E2BIG.  Either
		 * way a record says so (with the path as the task gave it, if
		 * it could be read).
		 */
		if (!notify_valid(s->listener, req->id))
			return;
		(void)notify_return(s->listener, req->id, 0, r == -E2BIG ? E2BIG : EACCES);
		sup_stats_answered(&s->stats);
		raw = json_pack("{s:o*}", "path", path_read ? pol_json_text(path) : NULL);
		sup_record(s, req->pid, at ? "execveat" : "execve", raw, NULL, "deny", NULL,
			   r == -E2BIG ? "the arguments are more than an exec may carry (E2BIG)" :
			   r == -ENAMETOOLONG ? "the path is longer than PATH_MAX" :
			   "the path, the arguments or the working directory could not be read "
			   "(unknown means deny)", NULL);
		json_decref(raw);
		return;
	}
	/*
	 * What was read (the memory, the working directory, the binary, the
	 * comm) is the task's own only if it was still in the call, its pid
	 * not yet another's, after the last read.  An answer that the kernel
	 * takes says exactly that (SECCOMP_IOCTL_NOTIF_SEND fails with ENOENT
	 * once the task has left the call), so an exec answered here needs no
	 * separate check: a failed answer leaves no record and no expectation.
	 * Only what acts before the answer (asking a human, granting a push's
	 * destination, telling the task) checks first (ID_VALID).  Two system
	 * calls off every exec's hold.
	 */
	sup_record_step(s);
	/*
	 * No file there (in the session's view): answered as the kernel
	 * would (ENOENT), counted for the end record ("exec_absent"), not
	 * recorded one by one.  A PATH search tries each directory in turn
	 * (execvp, node's spawn), and each miss was a record.  Nothing ran
	 * and nothing was refused; a file that exists is judged and recorded
	 * as ever, and this answer, not a CONTINUE, keeps a file made after
	 * this look from running unjudged.
	 */
	if (!file.known && task_path_absent(canon, s->uid, s->gid, s->groups, s->n_groups)) {
		if (notify_return(s->listener, req->id, 0, ENOENT) == 0) {
			sup_stats_answered(&s->stats);
			sup_stats_absent(&s->stats, SUP_STATS_EXEC);
		}
		return;
	}
	/* The caller, before it becomes the program. */
	sup_record_comm_keep(req->pid, comm, sizeof(comm), &comm_fd);
	summary = summary_argv(argv);
	pol_printable(h.summary, sizeof(h.summary), summary ? summary : "(no memory)");
	{
		struct exec_io io = { s, req, argv, &h, at, dirfd, path, canon, &dest_shown, &file };
		struct exec_ask ask = { &io, ask_session_approved, ask_human_denied, ask_destination,
					ask_expect, ask_memory_shared, ask_missing };
		struct exec_case ec = { canon, argv, cwd, s->opt->approve != APPROVE_DENY,
					exec_recheck_enabled(&s->recheck) };

		exec_decide(s->pol, &ec, &ask, &v);
	}
	res = v.res;
	event = v.event;
	why = v.why;
	session_ok = v.session_ok;
	if (v.refused_again && notify_valid(s->listener, req->id))
		sup_held_tell_refused(s, req->pid, h.summary);
	if (summary && dest_shown && dest_shown[0]) {
		char *both = NULL;

		if (asprintf(&both, "%s%s", summary, dest_shown) >= 0) {
			free(summary);
			summary = both;
		}
	}
	if (res.decision == CORDON_ALLOW) {
		if (arm(s, &h, comm, &why) < 0)
			res.decision = CORDON_DENY;
		else
			armed = exec_recheck_enabled(&s->recheck);
	}
	if (res.decision == CORDON_ESCALATE && s->opt->approve != APPROVE_DENY) {
		if (!notify_valid(s->listener, req->id))
			goto out;       /* no human is asked about a task gone (its pid another's) */
		exec_records(canon, argv, event, &raw, &kept);
		sup_record(s, req->pid, at ? "execveat" : "execve", raw, kept, "escalate",
			   sup_record_rule(&res), res.reason, NULL);
		sup_held_escalate(s, &h, at ? "execveat" : "execve", event, kept, canon,
				  summary ? summary : "(no memory)", &res);
	} else {
		bool allow = res.decision == CORDON_ALLOW;
		int ans;

		/*
		 * Answer first, then write the record: the task does not wait
		 * for the audit (if the supervisor dies in between, the
		 * watchdog kills the session).  A missing binary is answered as
		 * the kernel would (ENOENT), so PATH searches go on and `env`
		 * semantics (127) hold; its absence is no secret (stat is not
		 * judged by any floor).
		 */
		if (v.missing) {
			ans = notify_return(s->listener, req->id, 0, ENOENT);
		} else {
			/* A push approved for this session: its destination, granted first. */
			if (allow && session_ok && push_event(event)) {
				if (!notify_valid(s->listener, req->id)) {
					ans = -ENOENT;
					goto answered;
				}
				push_grant(s, req->pid, event, "approved for this session");
			}
			/*
			 * As sup_apply answers an exec: the floor re-checks the
			 * binary, the exec recheck (armed above) the rest.
			 */
			ans = allow ? notify_continue(s->listener, req->id) :
				      notify_return(s->listener, req->id, 0, EACCES);
		}
answered:
		if (ans == -ENOENT) {
			/* The task left the call before its answer: nothing ran, nothing to record. */
			if (armed)
				exec_recheck_disarm(&s->recheck, h.pid);
			goto out;
		}
		sup_stats_answered(&s->stats);
		exec_records(canon, argv, event, &raw, &kept);
		sup_record_as(s, req->pid, comm, at ? "execveat" : "execve", raw, kept,
			      allow ? "allow" : "deny", sup_record_rule(&res),
			      why ? why : res.decision == CORDON_ESCALATE ?
			      "escalation with --approve deny" : res.reason, NULL);
	}
out:
	json_decref(raw);
	json_decref(kept);
	json_decref(event);
}

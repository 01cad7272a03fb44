/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The policy: its in-memory model, the loader (parse + validate + index) and
 * the one evaluator every caller uses (the floor compiler, the supervisor,
 * the MCP proxy, the credential proxy, `cordon policy`).  The language is
 * described in policy/README.md.
 */
#ifndef CORDON_POLICY_H
#define CORDON_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include "cordon.h"
#include "text.h"        /* pol_json_text, pol_json_kept, pol_printable... */

/* Decisions are cordon.h's: CORDON_ALLOW < CORDON_ESCALATE < CORDON_DENY. */
const char *pol_decision_name(uint32_t d);
int pol_decision_parse(const char *s);

enum pol_kind {
	POL_FS = 0,
	POL_NET,
	POL_TOOL,
};

enum pol_via {
	POL_VIA_DIRECT = 0,
	POL_VIA_EGRESS,
	POL_VIA_CRED_PROXY,
};
const char *pol_via_name(enum pol_via v);

struct pol_pos {
	int line;
	int col;
};

/* One host pattern of a net rule. */
enum pol_host_kind {
	POL_HOST_NAME = 0,      /* exact DNS name, lower case, no trailing dot */
	POL_HOST_SUFFIX,        /* "*.example.com": any subdomain (name = ".example.com") */
	POL_HOST_CIDR4,
	POL_HOST_CIDR6,
};

struct pol_host {
	enum pol_host_kind kind;
	char *name;
	uint8_t addr[16];       /* network byte order; IPv4 in the first 4 bytes */
	uint8_t prefix;
};

struct pol_portrange {
	uint16_t lo;
	uint16_t hi;
};

enum pol_cond_kind {
	POL_COND_ANY = 0,
	POL_COND_EQUALS,
	POL_COND_IN,
	POL_COND_WITHIN,
	POL_COND_DOMAIN_IN,
	POL_COND_PREFIX,
	POL_COND_GLOB,
};

struct pol_cond {
	char *key;
	enum pol_cond_kind kind;
	json_t *value;          /* EQUALS: the value; IN: array of values */
	char **strs;            /* WITHIN: canonical dirs; PREFIX/GLOB: one */
	size_t n_strs;
	struct pol_host *hosts; /* DOMAIN_IN */
	size_t n_hosts;
};

struct pol_rule {
	char *name;
	char *description;
	uint32_t decision;
	enum pol_kind kind;
	uint32_t id;            /* index in policy->rules, carried in kernel events */
	struct pol_pos pos;
	union {
		struct {
			char **paths;   /* absolute, canonical; may contain '*' components */
			size_t n_paths;
			uint32_t rights;
		} fs;
		struct {
			struct pol_host *hosts;
			size_t n_hosts;
			struct pol_portrange *ports;  /* none: any port */
			size_t n_ports;
			enum pol_via via;
			bool via_set;
		} net;
		struct {
			char *server;   /* "*" for any */
			char *tool;     /* "*" for any */
			struct pol_cond *conds;
			size_t n_conds;
		} tool;
	};
};

struct pol_credential {
	char *name;
	char *env;              /* the variable the agent sees, holding a sentinel */
	char *source_env;       /* one of source_env / source_file */
	char *source_file;
	char **hosts;
	size_t n_hosts;
	char *header;
	char *prefix;
	char **endpoints;       /* "METHOD /path", trailing '*' = any rest */
	size_t n_endpoints;
	/*
	 * Provider-side tools a request may declare, by type prefix
	 * ("web_search" admits "web_search_20250305"); none by default
	 * (userspace/egress/llm_tools.h).
	 */
	char **server_tools;
	size_t n_server_tools;
	/*
	 * Where requests for this credential really go (an LLM gateway: a
	 * corporate proxy, LiteLLM, a private address): NULL host means the
	 * host the agent asked for.  The agent still talks to its provider's
	 * host; only the broker knows the gateway.  upstream_ca: the CA file
	 * that verifies it (NULL: the system's store).
	 */
	char *upstream_host;
	uint16_t upstream_port;
	char *upstream_prefix;  /* a path prefix on the gateway ("" for none) */
	char *upstream_ca;
	struct pol_pos pos;
};


struct pol_budgets {
	uint64_t wall_time_s;   /* 0: unlimited */
	uint64_t steps;
	uint64_t memory_bytes;
	uint64_t pids;
	double cpu;             /* cores */
	uint64_t audit_bytes;   /* the session's audit log (see sup_audit_check) */
	/* The egress broker and credential proxy (0: unlimited). */
	uint64_t egress_requests;       /* requests (CONNECTs, forwarded and inner requests) */
	uint64_t egress_bytes;          /* bytes up and down */
	uint64_t llm_tokens;            /* input + output tokens read from responses' usage */
};

struct pol_vars {
	size_t n;
	struct { char *name; char *value; } v[32];
};

struct pol_index;

struct policy {
	char *file;             /* as named by the user (path or profile name) */
	char *name;
	char *description;
	struct pol_rule *rules;
	size_t n_rules;
	struct pol_credential *creds;
	size_t n_creds;
	uint32_t approval_timeout_s;
	uint32_t approval_on_timeout;   /* CORDON_ALLOW or CORDON_DENY */
	struct pol_budgets budgets;
	/*
	 * "audit_shipping": where the session's records also go as they are
	 * written (audit_ship.c): a syslog daemon's Unix datagram socket, the
	 * journal's ("1": its default socket).  NULL: not asked.  `cordon run
	 * --audit-syslog/--audit-journal` win over these, these over cordon's
	 * environment (CORDON_AUDIT_SYSLOG/JOURNAL).
	 */
	char *ship_syslog;
	char *ship_journal;
	struct pol_vars vars;           /* the values the policy was expanded with */
	char **protected;               /* cordon's own paths: never writable */
	size_t n_protected;
	struct pol_index *idx;
};

/*
 * Set credential cr's upstream from "https://HOST[:PORT][/PREFIX]" and an
 * optional CA file (absolute).  0, or -EINVAL with `why` (for --upstream and
 * the policy's "upstream").  Only https: the real key never crosses a network
 * in clear.
 */
int pol_credential_set_upstream(struct pol_credential *cr, const char *url, const char *ca,
				char *why, size_t wlen);
/* "CREDENTIAL=URL" (--upstream) on policy p's credential of that name. */
int pol_apply_upstream(struct policy *p, const char *spec, const char *ca, char *why, size_t wlen);

/*
 * Add one of cordon's own paths (audit log, sockets, state) to the
 * never-writable invariant of this policy.  The policy file is added by
 * the loader.
 */
int pol_protect_path(struct policy *p, const char *path);

/*
 * Allow `rights` on exactly one path (canonicalised now), as a rule named
 * `rule` appended to the policy: for a resource cordon itself creates for
 * the session (the MCP socket).  Like any allow it loses to a deny and to
 * the invariants.  -EEXIST if a rule of that name exists.
 */
int pol_grant_path(struct policy *p, const char *rule, const char *path, uint32_t rights);
/* Allow a direct connect to one address (IP literal) and port: cordon's own proxies. */
int pol_grant_connect(struct policy *p, const char *rule, const char *addr, uint16_t port);

/* --- structural invariants (policy/invariants.c) -------------------------- */

struct pol_invariant {
	const char *id;
	const char *pattern;    /* absolute; ${HOME} and glob components allowed */
	uint32_t denied;        /* CORDON_FS_* rights no policy can grant */
	const char *why;
};

/* The built-in table, terminated by an entry with id == NULL. */
const struct pol_invariant *pol_invariants(void);

/*
 * The credential stores below a home, relative to it (".ssh",
 * ".docker/config.json"), NULL-terminated: the same list the
 * credential-store invariants deny under every home.  Static; pure.
 */
const char *const *pol_credential_stores(void);

/*
 * Does an invariant forbid `right` on canonical `path`?  Returns the
 * invariant's id or NULL.  `home` expands ${HOME}.
 */
const char *pol_invariant_fs(const struct policy *p, const char *path, uint32_t right,
			     const char **why);
/* The same answer through p's index (pol_eval's way), without judging any rule. */
const char *pol_invariant_fs_indexed(const struct policy *p, const char *path, uint32_t right,
				     const char **why);

/*
 * A canonical path against a pattern whose components may be globs,
 * compared component by component (match.c).  Pure.  A component "*",
 * "x*.pem", "[ab]?" matches one name (not one with a leading dot unless the
 * glob starts with '.'); a component "**" matches zero or more whole
 * components, dot names included, as .gitignore reads it: the pattern
 * ${WORKSPACE}, "**", ".env" (joined by '/') is a .env at any depth of the
 * workspace, the workspace's own included.
 */
#define POL_GLOB_MAX_COMPONENTS 128
/*
 * Can the matcher take this pattern?  "**" only as a whole component, at
 * most POL_GLOB_MAX_COMPONENTS components of at most NAME_MAX bytes.  0, or
 * -EINVAL with a static reason in *why.  Pure.
 */
int pol_pattern_check(const char *pattern, const char **why);
enum pol_glob_rel {
	POL_GLOB_NONE = 0,
	POL_GLOB_WITHIN,        /* the path is the pattern or below it */
	POL_GLOB_ANCESTOR,      /* the path is a strict ancestor of an instance */
};
enum pol_glob_rel pol_glob_rel(const char *path, const char *pattern);
/* True when the path is the pattern or lies below it. */
bool pol_glob_within(const char *path, const char *pattern);

/* --- lifting: what a raw operation means (policy/lift.c) ----------------- */

#define POL_MAX_LIFTED 32

struct pol_lifted {
	char server[32];
	char tool[32];
	json_t *args;           /* owned */
};

/*
 * The semantic events an exec stands for: always shell.exec {argv, cwd},
 * then what a recogniser makes of it (git.push, npm.install, http.fetch...;
 * the table of ways to push or publish is in lift.c).  `workspace` (may be
 * NULL: unknown, so every repository is outside it) decides whether a git
 * fetch writes into another repository, a push seen from the remote's side.
 * Returns the count; 0 when the exec means more than POL_MAX_LIFTED events
 * or memory ran out, which the caller must treat as a refusal.  Free with
 * pol_lifted_free.  Not pure: repository paths are canonicalised
 * (pol_canon_path), in the caller's view of the filesystem.
 */
int pol_lift_exec(const char *const *argv, const char *cwd, const char *workspace,
		  struct pol_lifted *out);
void pol_lifted_free(struct pol_lifted *l, int n);
/*
 * Does a recogniser look at this program's arguments (git, npm, pip,
 * curl...)?  Then a decision about its exec depends on argv, not only on
 * the binary.  prog may be a path.  Pure.
 */
bool pol_lift_known(const char *prog);

/* Diagnostics: every problem with where it is. */
enum pol_severity {
	POL_ERROR = 0,
	POL_WARNING,
};

struct pol_diag {
	enum pol_severity severity;
	struct pol_pos pos;
	char msg[512];
};

struct pol_diags {
	struct pol_diag *d;
	size_t n;
	size_t cap;
	size_t n_errors;
	bool no_warnings;       /* set to skip the O(n^2) shadowing analysis */
};

void pol_diags_free(struct pol_diags *ds);
/* Print as FILE:LINE:COL: error|warning: message, one a line. */
void pol_diags_print(const struct pol_diags *ds, const char *file, FILE *f);

/* Variables: defaults from the environment, overridden by NAME=VALUE. */
int pol_vars_defaults(struct pol_vars *vars);
int pol_vars_set(struct pol_vars *vars, const char *name, const char *value);
const char *pol_vars_get(const struct pol_vars *vars, const char *name);
void pol_vars_free(struct pol_vars *vars);

/*
 * Parse, validate and index a policy from text.  Returns 0 and *out, or
 * -EINVAL with every problem in *diags (never a partial policy).  Warnings
 * (shadowed rules) may accompany success.  `file` is used for messages and
 * as the policy file invariant.  `vars`: the variables a policy may use, or
 * NULL for none.
 */
int pol_load_text(const char *text, size_t len, const char *file,
		  const struct pol_vars *vars, struct policy **out,
		  struct pol_diags *diags);

/*
 * Load a policy by path or shipped profile name (a name without '/' that is
 * not an existing file).  -ENOENT names neither.
 */
int pol_load(const char *file_or_profile, const struct pol_vars *vars,
	     struct policy **out, struct pol_diags *diags);
void pol_free(struct policy *p);

/* The shipped profiles built into the binary. */
const char *pol_profile_text(const char *name, size_t *len);
const char *const *pol_profile_names(void);

/* --- evaluation ----------------------------------------------------------- */

enum pol_op {
	POL_OP_READ = 0,
	POL_OP_WRITE,
	POL_OP_CREATE,
	POL_OP_DELETE,
	POL_OP_EXEC,
	POL_OP_CHMOD,
	POL_OP_CONNECT,
	POL_OP_TOOL,
};
const char *pol_op_name(enum pol_op op);

struct pol_request {
	enum pol_op op;
	const char *path;           /* fs ops and exec: canonical absolute path */
	const char *const *argv;    /* exec: NULL-terminated, may be NULL */
	const char *cwd;            /* exec */
	const char *host;           /* connect: name or IP literal */
	uint16_t port;
	const char *server;         /* tool */
	const char *tool;
	json_t *args;               /* tool: object (borrowed) */
	const char *const *roots;   /* tool: server roots for relative paths, NULL-terminated */
	/*
	 * connect: what the connection carries, when a proxy can tell (the
	 * egress broker's http.request {method, host, port, path}): tool rules
	 * that match it join the decision like a lifted exec's (they can
	 * escalate or deny, never allow what the net rules do not).
	 */
	const char *ev_server, *ev_tool;
	json_t *ev_args;
};

struct pol_result {
	uint32_t decision;
	const struct pol_rule *rule;    /* the deciding rule, NULL for default/invariant */
	const char *invariant;          /* the invariant that decided, or NULL */
	enum pol_via via;               /* connect: how it must travel */
	char reason[384];
};

/*
 * Judge a request.  Paths must already be canonical (pol_canon_path); tool
 * argument paths are canonicalised here.  Never fails: a malformed request
 * is denied with a reason.
 */
void pol_eval(const struct policy *p, const struct pol_request *req, struct pol_result *res);

/*
 * pol_eval, and in *event (a new reference; NULL only when memory ran out)
 * the semantic event it judged (event.c): an exec's lifted events (the
 * last one, with "also" and "more"), a connect's net.connect or the
 * http.request a proxy named, a file operation's fs event, a tool call.
 * The caller records this event, so the record is what was judged and an
 * exec is lifted once.
 */
void pol_eval_event(const struct policy *p, const struct pol_request *req,
		    struct pol_result *res, json_t **event);

/*
 * The same decision by scanning every rule, without the index: the
 * benchmark's baseline and the tests' oracle.
 */
void pol_eval_linear(const struct policy *p, const struct pol_request *req,
		     struct pol_result *res);

/* --- semantic events (event.c) --------------------------------------------
 * Every event cordon judges and records is built by these, from the exec
 * lifter, the supervisor, the floor's reports, the egress broker and the
 * MCP proxy alike: {"server", "tool", "arguments"}.  Each returns a new
 * reference, NULL when memory ran out.
 */
/* S.T with ARGS (stolen; NULL: no arguments). */
json_t *pol_event(const char *server, const char *tool, json_t *args);
/* An exec's N lifted events (pol_lift_exec): the last, "also" shell.exec, "more" the rest. */
json_t *pol_event_exec(const struct pol_lifted *l, int n);
/* net.connect {host, port}; {path} or {abstract} for a Unix socket. */
json_t *pol_event_connect(const char *host, unsigned port);
json_t *pol_event_unix(const char *name, bool abstract);
/* fs.TOOL {path[, access]}; pol_event_fs_tool names an op's tool (read_file, write_file, delete). */
json_t *pol_event_fs(const char *tool, const char *path, const char *access);
const char *pol_event_fs_tool(enum pol_op op);
/* kernel.OP {object}: what only the floor sees (a signal, a ptrace, a mount...). */
json_t *pol_event_kernel(const char *op, const char *object);
/* http.request {method, host, port[, path]}, as the egress broker reads it. */
json_t *pol_event_http(const char *method, const char *host, unsigned port, const char *path);
/* SERVER.TOOL with ARGS (borrowed): an MCP tool call. */
json_t *pol_event_tool(const char *server, const char *tool, json_t *args);

/*
 * Canonicalise a path: make it absolute against cwd, resolve symlinks of
 * the part that exists (realpath), and normalise the rest lexically ("." and
 * ".." removed).  Returns 0 or -errno (-ENAMETOOLONG, -EINVAL).
 */
int pol_canon_path(const char *path, const char *cwd, char *out, size_t outlen);

/*
 * The same answer as pol_canon_path for absolute paths, with the resolved
 * directories remembered in `memo`: one lstat per new path instead of a
 * readlink per component (a policy names a hundred paths under a handful of
 * directories).  For one compilation only: the memo is a snapshot of the
 * filesystem, so it must not outlive the moment it describes.  Paths with
 * ".", ".." or empty components, and symlinks met on the way, take
 * pol_canon_path itself.  pol_canon_memo_free releases it.
 */
struct pol_canon_memo {
	struct pol_canon_dir *e;
	size_t n, cap;
	uint32_t *slots;        /* open addressing on the dir's hash: index + 1, 0 empty */
	size_t n_slots;         /* a power of two, at least twice n */
};
int pol_canon_path_memo(struct pol_canon_memo *memo, const char *path, char *out, size_t outlen);
void pol_canon_memo_free(struct pol_canon_memo *memo);

/* Lexical normalisation only (no filesystem access). Pure. */
int pol_normalize_path(const char *path, char *out, size_t outlen);

/* Is `path` equal to or below `dir`?  Both canonical.  Pure. */
bool pol_path_within(const char *path, const char *dir);

/*
 * The host of an http(s) URL, lower-cased, IPv4 literals in dotted-quad
 * form.  Refuses what parsers disagree on (userinfo, backslashes, percent
 * signs in the host, whitespace and control characters).  Pure.
 */
int pol_url_host(const char *url, char *out, size_t outlen);

/* Parse "NAME", "*.NAME", "IP" or "IP/PREFIX" into h. Pure. */
int pol_host_parse(const char *s, struct pol_host *h);
bool pol_host_match(const struct pol_host *h, const char *host);

/* Durations ("90s", "15m", "2h", "1d", bare seconds) and sizes ("4G"). Pure. */
int pol_parse_duration(const char *s, uint64_t *secs);
int pol_parse_size(const char *s, uint64_t *bytes);

/* --- compiled forms for the kernel floor (policy/compile.c) --------------- */

/*
 * One kernel table entry: rights on the object at `path` and below.  The
 * loader turns the path into (dev, ino) when the session starts.  Rights
 * that a rule escalates are in `escalate`: the kernel cannot hold a call
 * for a human, so the floor denies them and the supervisor performs an
 * approved operation itself.
 */
struct pol_fs_entry {
	const char *path;
	uint32_t allow;
	uint32_t deny;
	uint32_t escalate;
	uint32_t rule_id;       /* POL_RULE_INVARIANT for invariants */
	const char *invariant;  /* id, or NULL */
	bool protected_object;  /* deny-all invariant: protect the inode itself */
	/*
	 * path is already canonical (its symlinks resolved when the policy was
	 * parsed): a rule's literal path or a protected path.  Invariants and
	 * glob expansions are not (a component may be a symlink).
	 */
	bool canonical;
};

#define POL_RULE_INVARIANT 0xffffffffu

typedef int (*pol_fs_entry_fn)(void *ctx, const struct pol_fs_entry *e);

/*
 * Every fs rule root and invariant, glob patterns expanded against the
 * filesystem as it is now.  Stops at and returns fn's first negative value.
 * A "**" component walks the tree below its literal prefix: more than
 * POL_STARSTAR_MAX_DIRS directories in one compilation, or deeper than 64
 * levels, is -EOVERFLOW (the session refuses to start: a "**" deny
 * expanded over part of a tree would be weaker than it reads).
 */
#define POL_STARSTAR_MAX_DIRS 100000
/* What pol_compile_fs's error means, for a message: its own, or strerror's. */
const char *pol_compile_strerror(int r);
int pol_compile_fs(const struct policy *p, pol_fs_entry_fn fn, void *ctx);

/* A direct network rule for the cgroup-bpf programs. */
struct pol_net_entry {
	int family;             /* 4 or 6 */
	uint8_t addr[16];
	uint8_t prefix;
	uint16_t port_lo, port_hi;
	uint32_t decision;
	uint32_t rule_id;
};

typedef int (*pol_net_entry_fn)(void *ctx, const struct pol_net_entry *e);
int pol_compile_net(const struct policy *p, pol_net_entry_fn fn, void *ctx);

/* Rights names <-> CORDON_FS_* bits. */
int pol_right_parse(const char *s, uint32_t *bit);
const char *pol_rights_str(uint32_t rights, char *buf, size_t len);

#endif /* CORDON_POLICY_H */

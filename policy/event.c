// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The semantic events cordon judges and records, built here and nowhere
 * else (policy.h, "semantic events").  One shape for every source, so one
 * policy judges a raw operation and a tool call alike:
 *   {"server": S, "tool": T, "arguments": {...}}
 * with, for an exec that a recogniser lifted, "also" (the shell.exec it
 * was) and "more" (every further event it stands for).  Arguments that
 * come from a task (paths, argv) go through pol_json_text, so bytes that
 * are not UTF-8 survive into the record.
 */
#define _GNU_SOURCE
#include <string.h>
#include "policy.h"

json_t *pol_event(const char *server, const char *tool, json_t *args)
{
	json_t *ev;

	if (!args)
		args = json_object();
	if (!args)
		return NULL;
	ev = json_pack("{s:s,s:s,s:o}", "server", server, "tool", tool, "arguments", args);
	return ev;
}

json_t *pol_event_exec(const struct pol_lifted *l, int n)
{
	json_t *ev, *more = NULL;

	if (n <= 0)     /* nothing could be lifted (memory, or too many): the exec as such */
		return pol_event("shell", "exec", NULL);
	ev = pol_event(l[n - 1].server, l[n - 1].tool, json_incref(l[n - 1].args));
	if (!ev)
		return NULL;
	if (n > 1)
		json_object_set_new(ev, "also", pol_event("shell", "exec", json_incref(l[0].args)));
	/* Several (curl A B, git push origin a b): the record names every one judged. */
	for (int i = 1; i < n - 1; i++) {
		if (!more && json_object_set_new(ev, "more", more = json_array()) < 0)
			break;
		json_array_append_new(more, pol_event(l[i].server, l[i].tool, json_incref(l[i].args)));
	}
	return ev;
}

json_t *pol_event_connect(const char *host, unsigned port)
{
	return pol_event("net", "connect", json_pack("{s:s,s:i}", "host", host, "port", (int)port));
}

json_t *pol_event_unix(const char *name, bool abstract)
{
	return pol_event("net", "connect", json_pack("{s:o}", abstract ? "abstract" : "path",
						      pol_json_text(name)));
}

const char *pol_event_fs_tool(enum pol_op op)
{
	switch (op) {
	case POL_OP_READ:
		return "read_file";
	case POL_OP_DELETE:
		return "delete";
	case POL_OP_EXEC:
		return "exec";
	case POL_OP_WRITE:
	case POL_OP_CREATE:
	case POL_OP_CHMOD:
	case POL_OP_CONNECT:
	case POL_OP_TOOL:
		break;
	}
	return "write_file";
}

json_t *pol_event_fs(const char *tool, const char *path, const char *access)
{
	json_t *args = json_pack("{s:o}", "path", pol_json_text(path));

	if (args && access)
		json_object_set_new(args, "access", json_string(access));
	return pol_event("fs", tool, args);
}

json_t *pol_event_kernel(const char *op, const char *object)
{
	return pol_event("kernel", op, json_pack("{s:o}", "object", pol_json_text(object)));
}

json_t *pol_event_http(const char *method, const char *host, unsigned port, const char *path)
{
	json_t *args = json_pack("{s:s,s:s,s:i}", "method", method, "host", host, "port", (int)port);

	if (args && path)
		json_object_set_new(args, "path", json_string(path));
	return pol_event("http", "request", args);
}

json_t *pol_event_tool(const char *server, const char *tool, json_t *args)
{
	return pol_event(server, tool, args ? json_incref(args) : NULL);
}

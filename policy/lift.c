// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Semantic lifting of an exec: what `git push -f origin main` means, so that
 * one tool rule (`git.push`) judges it exactly as it judges an MCP git
 * server's push.  Pure: argv in, JSON events out.
 *
 * Recognisers read argv the way the program itself would, skipping global
 * options (git -C DIR -c K=V ...) so an option cannot hide the subcommand.
 * What they cannot close: a program that does the same thing under another
 * name (a copied git binary, a script calling the HTTP API); every exec is
 * still judged as shell.exec and by the floor, and the network layer judges
 * the connection itself.
 */
#include <string.h>
#include <openssl/evp.h>
#include "policy.h"
#include "util.h"

/*
 * Attack: a task passes bytes that are not UTF-8 (an argument, a file or
 * directory name); JSON cannot hold them, and a string jansson refuses
 * became NULL, so an argument dropped out of the event the policy judged
 * (the others moving up a place), a cwd lost the whole shell.exec event,
 * and a path or reason its audit record.  Every such string is now kept,
 * its stray bytes spelled out.  What this cannot do: tell the text \xff
 * from the byte 0xff in a record (the raw argv's digest, when one is
 * written, is of the bytes); no policy names either, policies being UTF-8.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

json_t *pol_json_text(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;

	if (j || !s)
		return j;
	o = out = malloc(strlen(s) * 4 + 1);
	if (!out)
		return NULL;
	while (*p) {
		size_t n = utf8_len(p);

		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			o += sprintf(o, "\\x%02x", *p++);
		}
	}
	*o = '\0';
	j = json_string(out);
	free(out);
	return j;
}

/*
 * An event as the audit records keep it.  Attack: an MCP tool call whose
 * arguments run to megabytes (a request may hold 4 MiB), made again and
 * again, fills the host's disk through the audit log (each call is recorded
 * at its decision and at its result), and one such record would not fit the
 * log's reserve (AUDIT_RECORD_MAX): the session would stop.  Up to
 * POL_RECORD_ARGS_BYTES of arguments (compact JSON, keys sorted) the event
 * is kept whole; past it, its arguments are kept as {truncated, bytes,
 * sha256, head}: the size and SHA-256 of that JSON text, and its first
 * POL_RECORD_ARGS_BYTES, so the record still names exactly what was judged.
 * The policy and the approver always see the whole event.
 */
int pol_json_sha256(json_t *v, char hex[65], size_t *bytes)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	unsigned char md[32];
	size_t n = text ? strlen(text) : 0;
	bool ok = text && EVP_Digest(text, n, md, NULL, EVP_sha256(), NULL) == 1;

	free(text);
	if (!ok)
		return -ENOMEM;
	hex_encode(md, sizeof(md), hex);
	if (bytes)
		*bytes = n;
	return 0;
}

json_t *pol_json_kept(json_t *v)
{
	unsigned char md[32];
	char hex[65], *text;
	json_t *head;
	size_t n, cut;

	text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (!text)
		return NULL;
	n = strlen(text);
	if (n <= POL_RECORD_ARGS_BYTES) {
		free(text);
		return json_incref(v);
	}
	if (EVP_Digest(text, n, md, NULL, EVP_sha256(), NULL) != 1) {
		free(text);
		return NULL;
	}
	hex_encode(md, sizeof(md), hex);
	/* The head ends on a character, not inside one. */
	for (cut = POL_RECORD_ARGS_BYTES; cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80; cut--)
		;
	text[cut] = '\0';
	head = pol_json_text(text);
	free(text);
	if (!head)
		return NULL;
	return json_pack("{s:b,s:I,s:s,s:o}", "truncated", 1, "bytes", (json_int_t)n,
			 "sha256", hex, "head", head);
}

json_t *pol_event_kept(json_t *event)
{
	json_t *args = json_object_get(event, "arguments"), *kept, *ka;

	if (!args)
		return json_incref(event);
	ka = pol_json_kept(args);
	if (ka == args) {
		json_decref(ka);
		return json_incref(event);
	}
	kept = ka ? json_copy(event) : NULL;
	if (!kept || json_object_set_new(kept, "arguments", ka) < 0) {
		json_decref(kept);
		return NULL;
	}
	return kept;
}

/*
 * Attack: an argv or a path shown in the approval prompt carries terminal
 * escapes (move the cursor up, erase the line) or newlines, and paints a
 * harmless command over the one held; or it is long enough that what
 * matters lies past the cut.  Shown here, no byte can steer a terminal,
 * and a cut says how much was left out.
 */
/* One piece of s shown: the bytes consumed, the text in *piece (esc when escaped). */
static size_t shown_piece(const unsigned char *p, char esc[5], const char **piece, size_t *plen)
{
	size_t n = utf8_len(p);

	/* C0 and DEL are one byte; C1 (U+0080..U+009F) is 0xc2 0x80..0x9f. */
	if (!n || *p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
		snprintf(esc, 5, "\\x%02x", *p);
		*piece = esc;
		*plen = 4;
		return 1;
	}
	*piece = (const char *)p;
	*plen = n;
	return n;
}

#define SHOWN_TAIL 40   /* room for " ...[+N bytes]" */

void pol_printable(char *out, size_t len, const char *s)
{
	const unsigned char *p;
	const char *piece;
	size_t o = 0, want = 0, plen, n;
	char esc[5];

	if (!len)
		return;
	for (p = (const unsigned char *)s; *p; p += n) {
		n = shown_piece(p, esc, &piece, &plen);
		want += plen;
	}
	for (p = (const unsigned char *)s; *p; p += n) {
		n = shown_piece(p, esc, &piece, &plen);
		if (want >= len && o + plen + SHOWN_TAIL >= len)
			break;
		if (o + plen >= len)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
	}
	out[o] = '\0';
	if (*p && o + SHOWN_TAIL < len)
		snprintf(out + o, len - o, " ...[+%zu bytes]", strlen((const char *)p));
}

static const char *base(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

static int add(struct pol_lifted *out, int n, const char *server, const char *tool,
	       json_t *args)
{
	if (n >= POL_MAX_LIFTED || !args) {
		json_decref(args);
		return n;
	}
	snprintf(out[n].server, sizeof(out[n].server), "%s", server);
	snprintf(out[n].tool, sizeof(out[n].tool), "%s", tool);
	out[n].args = args;
	return n + 1;
}

/* git's global options that take a separate value. */
static bool git_opt_with_value(const char *a)
{
	static const char *const opts[] = { "-C", "-c", "--git-dir", "--work-tree",
					    "--namespace", "--exec-path", "--config-env",
					    "--super-prefix", NULL };
	for (int i = 0; opts[i]; i++)
		if (!strcmp(a, opts[i]))
			return true;
	return false;
}

static int lift_git(const char *const *argv, int argc, struct pol_lifted *out, int n)
{
	int i = 1;
	const char *sub;

	while (i < argc && argv[i][0] == '-') {
		if (git_opt_with_value(argv[i]))
			i++;
		i++;
	}
	if (i >= argc)
		return n;
	sub = argv[i++];
	if (!strcmp(sub, "push")) {
		const char *remote = NULL, *branch = NULL;
		bool force = false;
		json_t *args;

		for (; i < argc; i++) {
			const char *a = argv[i];

			if (!strcmp(a, "-f") || !strcmp(a, "--force") ||
			    !strncmp(a, "--force-with-lease", 18) || !strcmp(a, "--mirror") ||
			    !strcmp(a, "--delete") || !strcmp(a, "-d")) {
				force = true;
				continue;
			}
			if (!strcmp(a, "--repo") || !strcmp(a, "-o") || !strcmp(a, "--push-option") ||
			    !strcmp(a, "--receive-pack") || !strcmp(a, "--exec")) {
				if (!strcmp(a, "--repo") && i + 1 < argc)
					remote = argv[i + 1];
				i++;
				continue;
			}
			if (a[0] == '-')
				continue;
			if (!remote) {
				remote = a;
			} else if (!branch) {
				const char *colon = strchr(a, ':');

				if (a[0] == '+')
					force = true, a++;
				branch = colon ? colon + 1 : a;
			}
		}
		args = json_object();
		if (remote)
			json_object_set_new(args, "remote", pol_json_text(remote));
		if (branch)
			json_object_set_new(args, "branch", pol_json_text(branch));
		json_object_set_new(args, "force", json_boolean(force));
		return add(out, n, "git", "push", args);
	}
	if (!strcmp(sub, "commit")) {
		json_t *args = json_object();

		for (; i < argc; i++) {
			if ((!strcmp(argv[i], "-m") || !strcmp(argv[i], "--message")) && i + 1 < argc) {
				json_object_set_new(args, "message", pol_json_text(argv[i + 1]));
				break;
			}
			if (!strncmp(argv[i], "--message=", 10)) {
				json_object_set_new(args, "message", pol_json_text(argv[i] + 10));
				break;
			}
		}
		return add(out, n, "git", "commit", args);
	}
	return n;
}

/* Positional arguments after index i, skipping options. */
static json_t *positionals(const char *const *argv, int argc, int i)
{
	json_t *a = json_array();

	for (; i < argc; i++)
		if (argv[i][0] != '-')
			json_array_append_new(a, pol_json_text(argv[i]));
	return a;
}

static int lift_npm(const char *prog, const char *const *argv, int argc,
		    struct pol_lifted *out, int n)
{
	int i = 1;
	const char *sub;

	while (i < argc && argv[i][0] == '-')
		i++;
	if (i >= argc)
		return n;
	sub = argv[i++];
	if (!strcmp(sub, "install") || !strcmp(sub, "i") || !strcmp(sub, "add") ||
	    !strcmp(sub, "ci") || !strcmp(sub, "isntall"))
		return add(out, n, "npm", "install",
			   json_pack("{s:o,s:s}", "packages", positionals(argv, argc, i),
				     "manager", prog));
	if (!strcmp(sub, "publish"))
		return add(out, n, "npm", "publish", json_pack("{s:s}", "manager", prog));
	return n;
}

static int lift_pip(const char *const *argv, int argc, int i, struct pol_lifted *out, int n)
{
	while (i < argc && argv[i][0] == '-')
		i++;
	if (i < argc && !strcmp(argv[i], "install"))
		return add(out, n, "pip", "install",
			   json_pack("{s:o}", "packages", positionals(argv, argc, i + 1)));
	return n;
}

static int lift_fetch(const char *prog, const char *const *argv, int argc,
		      struct pol_lifted *out, int n)
{
	const char *url = NULL, *method = NULL;
	bool curl = !strcmp(prog, "curl");

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (curl && (!strcmp(a, "-X") || !strcmp(a, "--request")) && i + 1 < argc) {
			method = argv[++i];
		} else if (curl && !strcmp(a, "--url") && i + 1 < argc) {
			url = argv[++i];
		} else if (curl && (!strcmp(a, "-d") || !strncmp(a, "--data", 6) ||
				    !strcmp(a, "-F") || !strcmp(a, "--form") || !strcmp(a, "--json"))) {
			if (!method)
				method = "POST";
			i++;
		} else if (curl && (!strcmp(a, "-T") || !strcmp(a, "--upload-file"))) {
			if (!method)
				method = "PUT";
			i++;
		} else if (!curl && !strncmp(a, "--post-data", 11)) {
			if (!method)
				method = "POST";
		} else if (curl && (!strcmp(a, "-o") || !strcmp(a, "-H") || !strcmp(a, "-A") ||
				    !strcmp(a, "-u") || !strcmp(a, "-e") || !strcmp(a, "-x") ||
				    !strcmp(a, "--header") || !strcmp(a, "--output") ||
				    !strcmp(a, "--user") || !strcmp(a, "--proxy"))) {
			i++;
		} else if (!curl && (!strcmp(a, "-O") || !strcmp(a, "-o") || !strcmp(a, "-P") ||
				     !strcmp(a, "--header") || !strcmp(a, "-U"))) {
			i++;
		} else if (a[0] != '-' && !url) {
			url = a;
		}
	}
	if (!url)
		return n;
	return add(out, n, "http", "fetch",
		   json_pack("{s:o,s:o}", "url", pol_json_text(url), "method",
			     pol_json_text(method ? method : "GET")));
}

int pol_lift_exec(const char *const *argv, const char *cwd, struct pol_lifted *out)
{
	json_t *av = json_array();
	const char *prog;
	int argc = 0, n = 0;

	memset(out, 0, sizeof(*out) * POL_MAX_LIFTED);
	if (argv)
		for (; argv[argc]; argc++)
			json_array_append_new(av, pol_json_text(argv[argc]));
	n = add(out, n, "shell", "exec",
		json_pack("{s:o,s:o}", "argv", av, "cwd", pol_json_text(cwd ? cwd : "")));
	if (argc == 0)
		return n;
	prog = base(argv[0]);
	if (!strcmp(prog, "git"))
		n = lift_git(argv, argc, out, n);
	else if (!strcmp(prog, "npm") || !strcmp(prog, "pnpm") || !strcmp(prog, "yarn"))
		n = lift_npm(prog, argv, argc, out, n);
	else if (!strncmp(prog, "pip", 3))
		n = lift_pip(argv, argc, 1, out, n);
	else if (!strncmp(prog, "python", 6) && argc > 2 && !strcmp(argv[1], "-m") &&
		 !strcmp(argv[2], "pip"))
		n = lift_pip(argv, argc, 3, out, n);
	else if (!strcmp(prog, "twine") && argc > 1 && !strcmp(argv[1], "upload"))
		n = add(out, n, "pip", "publish", json_object());
	else if (!strcmp(prog, "cargo") && argc > 1 && !strcmp(argv[1], "publish"))
		n = add(out, n, "cargo", "publish", json_object());
	else if (!strcmp(prog, "gem") && argc > 1 && !strcmp(argv[1], "push"))
		n = add(out, n, "gem", "publish", json_object());
	else if (!strcmp(prog, "curl") || !strcmp(prog, "wget"))
		n = lift_fetch(prog, argv, argc, out, n);
	return n;
}

bool pol_lift_known(const char *prog)
{
	static const char *const exact[] = { "git", "npm", "pnpm", "yarn", "twine", "cargo",
					     "gem", "curl", "wget" };

	prog = base(prog);
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(prog, exact[i]))
			return true;
	return !strncmp(prog, "pip", 3) || !strncmp(prog, "python", 6);
}

void pol_lifted_free(struct pol_lifted *l, int n)
{
	for (int i = 0; i < n; i++) {
		json_decref(l[i].args);
		l[i].args = NULL;
	}
}

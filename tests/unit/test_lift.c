// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Recognisers: what an exec means, whatever options hide the subcommand. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"

/*
 * Lift argv (in cwd, workspace /w); every event after shell.exec as
 * "server.tool {json}" lines joined by "; ", "" for none, "REFUSED" when
 * the exec has no event at all (too many to judge).
 */
static char *lift_in(const char *const *argv, const char *cwd)
{
	struct pol_lifted l[POL_MAX_LIFTED];
	int n = pol_lift_exec(argv, cwd, "/w", l);
	size_t len = 1;
	char *out = calloc(1, 1);

	if (n == 0) {
		free(out);
		return strdup("REFUSED");
	}
	assert_string_equal(l[0].server, "shell");
	assert_string_equal(l[0].tool, "exec");
	for (int i = 1; i < n; i++) {
		char *j = json_dumps(l[i].args, JSON_SORT_KEYS | JSON_COMPACT);
		size_t add = strlen(l[i].server) + strlen(l[i].tool) + strlen(j) + 5;

		out = realloc(out, len + add);
		len += (size_t)sprintf(out + len - 1, "%s%s.%s %s", i > 1 ? "; " : "", l[i].server,
				       l[i].tool, j);
		free(j);
	}
	pol_lifted_free(l, n);
	return out;
}

#define CHECK_IN(cwd, want, ...) do { \
	const char *av[] = { __VA_ARGS__, NULL }; \
	char *j = lift_in(av, cwd); \
	assert_string_equal(j, want); \
	free(j); \
} while (0)
#define CHECK(want, ...) CHECK_IN("/w", want, __VA_ARGS__)

#define PUSH(json) "git.push " json

static void git(void **state)
{
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"origin\"}"),
	      "git", "push", "origin", "main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":true,\"remote\":\"origin\"}"),
	      "/usr/bin/git", "-C", "/w", "-c", "core.x=y", "push", "-f", "origin", "main");
	CHECK(PUSH("{\"branch\":\"release\",\"force\":true,\"remote\":\"up\"}"),
	      "git", "push", "up", "+HEAD:release");
	CHECK(PUSH("{\"force\":false}"), "git", "--no-pager", "push");
	CHECK(PUSH("{\"branch\":\"x\",\"force\":true,\"remote\":\"origin\"}"),
	      "git", "push", "--force-with-lease", "origin", "x");
	/* -am x: a cluster, x is the message; each -m a paragraph. */
	CHECK("git.commit {\"message\":\"x\\n\\nfix it\"}", "git", "commit", "-am", "x", "-m", "fix it");
	CHECK("", "git", "status");
	CHECK("", "git");
}

/* Options as git's parse-options reads them: values, clusters, prefixes, negations. */
static void git_options(void **state)
{
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"origin\"}"),
	      "git", "push", "-o", "ci.skip", "origin", "main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"origin\"}"),
	      "git", "push", "--push-option=ci.skip", "--receive-pack", "/x", "origin", "main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":true,\"remote\":\"origin\"}"),
	      "git", "push", "--forc", "origin", "main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":true,\"remote\":\"origin\"}"),
	      "git", "push", "-uf", "origin", "main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"origin\"}"),
	      "git", "push", "--force", "--no-force", "origin", "main");
	CHECK(PUSH("{\"branch\":\"old\",\"force\":true,\"remote\":\"origin\"}"),
	      "git", "push", "origin", ":old");
	/* Each refspec is judged, with its own force. */
	CHECK(PUSH("{\"branch\":\"a\",\"force\":false,\"remote\":\"origin\"}") "; "
	      PUSH("{\"branch\":\"b\",\"force\":true,\"remote\":\"origin\"}"),
	      "git", "push", "origin", "a", "+b");
	CHECK(PUSH("{\"force\":true,\"remote\":\"origin\"}"), "git", "push", "--prune", "origin");
	CHECK(PUSH("{\"force\":false,\"remote\":\"up\"}"), "git", "push", "--repo=up");
	/* An option git push may have and we do not know: assume the worst. */
	CHECK(PUSH("{\"branch\":\"main\",\"force\":true,\"remote\":\"origin\"}"),
	      "git", "push", "--frobnicate", "origin", "main");
	/* A force refspec in configuration given on the command line. */
	CHECK(PUSH("{\"force\":true,\"remote\":\"origin\"}"),
	      "git", "-c", "remote.origin.push=+refs/heads/*:refs/heads/*", "push", "origin");
	CHECK(PUSH("{\"force\":true,\"remote\":\"origin\"}"),
	      "git", "--config-env=remote.origin.mirror=X", "push", "origin");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"origin\"}"),
	      "git", "--git-dir=/w/.git", "--work-tree", "/w", "--namespace", "n", "--exec-path",
	      "push", "origin", "main");
	/* The dashed form in git's exec-path. */
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"origin\"}"),
	      "/usr/lib/git-core/git-push", "origin", "main");
}

/* Aliases: git expands them in-process, so the lift must too, or assume a push. */
static void git_aliases(void **state)
{
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"origin\"}"),
	      "git", "-c", "alias.p=push", "p", "origin", "main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":true,\"remote\":\"origin\"}"),
	      "git", "-c", "alias.p=push -f", "p", "origin", "main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":true,\"remote\":\"origin\"}"),
	      "git", "-c", "alias.p=\"push\" '--force'", "p", "origin", "main");
	CHECK(PUSH("{\"force\":false,\"remote\":\"origin\"}"), "git", "-c", "Alias.UP=push", "up", "origin");
	/* A shell alias: what it runs is an exec of its own. */
	CHECK("", "git", "-c", "alias.p=!git push", "p");
	/* An alias argv does not define (config files, the environment). */
	CHECK(PUSH("{\"command\":\"p\",\"force\":false,\"via\":\"alias\"}"), "git", "p", "origin");
	CHECK(PUSH("{\"command\":\"st\",\"force\":false,\"via\":\"alias\"}"),
	      "git", "--config-env=alias.st=X", "st");
	/* What no config key can name is no alias: git refuses it. */
	CHECK("", "/usr/lib/git-core/git", "/tmp/remote.git");
	CHECK("", "git", "x.y");
	/* An alias never shadows a command. */
	CHECK("", "git", "-c", "alias.status=push", "status");
	/* An unknown global option: both readings (x its value, or x the command). */
	CHECK(PUSH("{\"command\":\"x\",\"force\":false,\"via\":\"alias\"}") "; "
	      PUSH("{\"force\":false}"), "git", "--frob", "x", "push");
	CHECK("", "git", "--frob", "status");
}

/* Every way to push: git push, send-pack, the remote's side, other roads. */
static void git_push_ways(void **state)
{
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"/tmp/r.git\",\"via\":\"send-pack\"}"),
	      "git", "send-pack", "/tmp/r.git", "main");
	CHECK(PUSH("{\"force\":true,\"remote\":\"h:r\",\"via\":\"send-pack\"}"),
	      "git", "send-pack", "--force", "h:r");
	/* The half a transport helper drives: it reaches nothing itself. */
	CHECK("", "git", "send-pack", "--stateless-rpc", "--helper-status", "https://h/r");
	CHECK(PUSH("{\"force\":false,\"via\":\"http-push\"}"), "git", "http-push", "https://h/r", "main");
	CHECK(PUSH("{\"force\":false,\"via\":\"svn\"}"), "git", "svn", "dcommit");
	CHECK(PUSH("{\"force\":false,\"via\":\"p4\"}"), "git", "p4", "submit");
	CHECK(PUSH("{\"force\":false,\"via\":\"send-email\"}"), "git", "send-email", "--to=a@b", "x.patch");
	CHECK("", "git", "svn", "fetch");
	/* A fetch run from the remote's side: the repository written is outside /w. */
	CHECK(PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"/tmp/r.git\",\"source\":\"/w\","
		   "\"via\":\"fetch\"}"),
	      "git", "--git-dir=/tmp/r.git", "fetch", "/w", "main:main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":true,\"remote\":\"/tmp/r.git\",\"source\":\"/w\","
		   "\"via\":\"fetch\"}"),
	      "git", "-C", "/tmp/r.git", "fetch", "/w", "+main:main");
	CHECK(PUSH("{\"branch\":\"main\",\"force\":true,\"remote\":\"/tmp/r.git\",\"source\":\"/w\","
		   "\"via\":\"fetch\"}"),
	      "git", "-C", "/tmp/r.git", "fetch", "-f", "/w", "main:main");
	CHECK_IN("/tmp/r", PUSH("{\"branch\":\"main\",\"force\":false,\"remote\":\"/tmp/r\","
				"\"source\":\"/w\",\"via\":\"pull\"}"),
		 "git", "pull", "/w", "main");
	CHECK(PUSH("{\"force\":false,\"remote\":\"/r\",\"source\":\"/w\",\"via\":\"fetch\"}"),
	      "git", "--git-dir=/w/../r", "fetch", "/w");
	CHECK(PUSH("{\"force\":false,\"remote\":\"/\",\"source\":\"/w\",\"via\":\"fetch-pack\"}"),
	      "git", "-C", "..", "fetch-pack", "/w");
	CHECK(PUSH("{\"force\":false,\"remote\":\"/tmp/r\",\"source\":\"/w/x.bundle\",\"via\":\"bundle\"}"),
	      "git", "-C", "/tmp/r", "bundle", "unbundle", "/w/x.bundle");
	CHECK(PUSH("{\"force\":false,\"remote\":\"/tmp/r\",\"via\":\"remote\"}"),
	      "git", "-C", "/tmp/r", "remote", "update");
	CHECK("", "git", "-C", "/tmp/r", "remote", "-v");
	/* receive-pack runs it in the remote for every local push: a copy into
	 * objects, the floor's to judge (as cp's would be), not a second question. */
	CHECK_IN("/tmp/r", "", "git", "unpack-objects");
	/* Inside the workspace: an ordinary fetch. */
	CHECK("", "git", "fetch", "origin");
	CHECK("", "git", "-C", "sub", "fetch", "--depth", "1", "origin", "main");
	CHECK_IN("/w/sub", "", "git", "pull", "--rebase", "origin", "main");
	CHECK("", "git", "--bare", "fetch", "/elsewhere");
}

static void packages(void **state)
{
	CHECK("npm.install {\"manager\":\"npm\",\"packages\":[\"left-pad\",\"x@1\"]}",
	      "npm", "install", "--save", "left-pad", "x@1");
	CHECK("npm.install {\"manager\":\"pnpm\",\"packages\":[\"y\"]}", "pnpm", "add", "y");
	CHECK("npm.install {\"manager\":\"npm\",\"packages\":[\"publish\"]}", "npm", "i", "publish");
	CHECK("npm.publish {\"action\":\"publish\",\"manager\":\"npm\"}",
	      "npm", "--registry", "http://r/", "publish");
	CHECK("npm.publish {\"action\":\"publish\",\"manager\":\"npm\"}", "npm", "publish", "--otp", "1");
	/* A config key we do not know: its value, or the command? Both. */
	CHECK("npm.publish {\"action\":\"publish\",\"manager\":\"npm\"}", "npm", "--frob", "publish");
	CHECK("npm.publish {\"action\":\"publish\",\"manager\":\"npm\"}", "npm", "-w", "pkg", "publish");
	CHECK("npm.publish {\"action\":\"dist-tag\",\"manager\":\"npm\"}",
	      "npm", "dist-tag", "add", "x@1", "latest");
	CHECK("", "npm", "dist-tag", "ls", "x");
	CHECK("npm.publish {\"action\":\"unpublish\",\"manager\":\"npm\"}", "npm", "unpublish", "x@1");
	CHECK("npm.publish {\"action\":\"publish\",\"manager\":\"yarn\"}", "yarn", "npm", "publish");
	CHECK("npm.publish {\"action\":\"publish\",\"manager\":\"pnpm\"}", "pnpm", "-r", "publish");
	CHECK("npm.publish {\"action\":\"publish\",\"manager\":\"bun\"}", "bun", "publish");
	CHECK("pip.install {\"packages\":[\"requests\"]}", "pip3", "install", "-U", "requests");
	CHECK("pip.install {\"packages\":[\"flask\"]}", "pip", "install", "-r", "req.txt", "flask");
	CHECK("pip.install {\"packages\":[\"x\"]}", "pip", "--proxy", "http://p", "install", "x");
	CHECK("pip.install {\"packages\":[\"./pkg\"]}", "pip", "install", "-e", "./pkg");
	CHECK("pip.install {\"packages\":[\"x\"]}", "pip", "install", "--index-u", "http://i/", "x");
	CHECK("pip.install {\"packages\":[\"flask\"]}", "python3", "-m", "pip", "install", "flask");
	CHECK("pip.install {\"packages\":[\"flask\"]}", "python3.11", "-Im", "pip", "install", "flask");
	CHECK("pip.install {\"packages\":[\"x\"]}", "uv", "pip", "install", "x");
	CHECK("pip.publish {\"action\":\"upload\",\"via\":\"twine\"}", "twine", "upload", "dist/x.whl");
	CHECK("pip.publish {\"action\":\"upload\",\"via\":\"twine\"}",
	      "python3", "-m", "twine", "upload", "dist/*");
	CHECK("pip.publish {\"action\":\"upload\",\"via\":\"setup.py\"}",
	      "python3", "setup.py", "sdist", "upload");
	CHECK("", "python3", "-c", "print(1)", "upload");
	CHECK("pip.publish {\"action\":\"publish\",\"via\":\"poetry\"}", "poetry", "-C", "d", "publish");
	CHECK("pip.publish {\"action\":\"publish\",\"via\":\"uv\"}", "uv", "publish");
	CHECK("pip.publish {\"action\":\"publish\",\"via\":\"hatch\"}", "hatch", "-e", "x", "publish");
	CHECK("pip.publish {\"action\":\"publish\",\"via\":\"flit\"}", "flit", "publish");
	CHECK("cargo.publish {\"action\":\"publish\",\"via\":\"cargo\"}", "cargo", "publish");
	CHECK("cargo.publish {\"action\":\"publish\",\"via\":\"cargo\"}",
	      "cargo", "+nightly", "-Z", "x", "--color", "never", "publish");
	CHECK("gem.publish {\"action\":\"push\",\"via\":\"gem\"}", "gem", "push", "x.gem");
	CHECK("", "cargo", "build");
}

#define GET(u) "http.fetch {\"method\":\"GET\",\"url\":\"" u "\"}"

/* Values are never URLs; every URL is judged; curl's globs reach each host. */
static void fetch(void **state)
{
	CHECK(GET("https://a.b/x"), "curl", "-s", "https://a.b/x");
	CHECK(GET("https://a.b/x"), "curl", "-m", "5", "https://a.b/x");
	CHECK(GET("https://a.b/x"), "curl", "-sSm5", "https://a.b/x");
	CHECK(GET("https://a.b/x"), "curl", "-sSLm", "5", "https://a.b/x");
	CHECK(GET("https://a.b/x"), "curl", "--max-time=5", "-o", "/dev/null", "https://a.b/x");
	CHECK(GET("https://a.b/x"), "curl", "--max-t", "5", "https://a.b/x");
	CHECK(GET("https://a.b/x"), "curl", "-s", "--", "https://a.b/x");
	CHECK(GET("https://a.b/") "; " GET("https://c.d/"), "curl", "https://a.b/", "-o", "f",
	      "https://c.d/");
	CHECK("http.fetch {\"method\":\"POST\",\"url\":\"https://a.b/\"}",
	      "curl", "-H", "X: y", "-d", "@/etc/passwd", "https://a.b/");
	CHECK("http.fetch {\"method\":\"PUT\",\"url\":\"https://a.b/\"}",
	      "curl", "-T", "f", "--url", "https://a.b/");
	CHECK("http.fetch {\"method\":\"DELETE\",\"url\":\"https://a.b/\"}",
	      "curl", "https://a.b/", "-XDELETE");
	CHECK("http.fetch {\"method\":\"HEAD\",\"url\":\"https://a.b/\"}", "curl", "-sI", "https://a.b/");
	CHECK(GET("http://a.b/x"), "curl", "a.b/x");
	CHECK(GET("https://a.c/") "; " GET("https://b.c/"), "curl", "https://{a,b}.c/");
	CHECK(GET("https://{a,b}.c/"), "curl", "-g", "https://{a,b}.c/");
	CHECK(GET("http://h1.x/") "; " GET("http://h2.x/"), "curl", "http://h[1-2].x/");
	CHECK(GET("http://[::1]:8080/"), "curl", "http://[::1]:8080/");
	/* An option we do not know: its value may be the URL. */
	CHECK(GET("http://5") "; " GET("https://a.b/"), "curl", "--frob", "5", "https://a.b/");
	CHECK("http.fetch {\"method\":\"GET\",\"url_file\":\"cfg\"}", "curl", "-K", "cfg");
	CHECK("", "curl", "--version");
	CHECK("http.fetch {\"method\":\"POST\",\"url\":\"http://c.d\"}", "wget", "--post-data=x", "http://c.d");
	CHECK(GET("http://c.d/"), "wget", "-nv", "-O", "out.html", "--tries", "3", "http://c.d/");
	CHECK(GET("http://c.d/"), "wget", "-qO-", "http://c.d/");
	CHECK("http.fetch {\"method\":\"GET\",\"url_file\":\"list.txt\"}", "wget", "-i", "list.txt");
	{
		/* More URLs than can be judged: no event, so the exec is refused. */
		const char *av[POL_MAX_LIFTED + 3];
		char *j;

		av[0] = "curl";
		for (int i = 1; i < POL_MAX_LIFTED + 2; i++) {
			static char u[POL_MAX_LIFTED + 2][32];

			snprintf(u[i], sizeof(u[i]), "https://h%d.x/", i);
			av[i] = u[i];
		}
		av[POL_MAX_LIFTED + 2] = NULL;
		j = lift_in(av, "/w");
		assert_string_equal(j, "REFUSED");
		free(j);
	}
}

/* What JSON cannot hold is spelled out, never dropped: positions and the event stay. */
static void not_utf8(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "h\xc3\xa9llo \xf0\x9f\x99\x82", "h\xc3\xa9llo \xf0\x9f\x99\x82" },
		{ "a\xff" "b", "a\\xffb" },
		{ "\xc0\xaf", "\\xc0\\xaf" },                   /* overlong '/' */
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },          /* a surrogate */
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" }, /* past U+10FFFF */
		{ "\xe2\x82", "\\xe2\\x82" },                   /* cut short */
	};
	const char *av[] = { "git", "push", "or\xffigin", "ma\xfein", NULL };
	struct pol_lifted l[POL_MAX_LIFTED];
	char *j;
	int n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *t = pol_json_text(cases[i].in);

		assert_non_null(t);
		assert_string_equal(json_string_value(t), cases[i].out);
		json_decref(t);
	}
	n = pol_lift_exec(av, "/w/d\xff", "/w", l);
	assert_int_equal(n, 2);
	j = json_dumps(l[0].args, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(j, "{\"argv\":[\"git\",\"push\",\"or\\\\xffigin\",\"ma\\\\xfein\"],"
			    "\"cwd\":\"/w/d\\\\xff\"}");
	free(j);
	j = json_dumps(l[1].args, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(j, "{\"branch\":\"ma\\\\xfein\",\"force\":false,\"remote\":\"or\\\\xffigin\"}");
	free(j);
	pol_lifted_free(l, n);
}

/* Shown to a human: nothing steers the terminal, and a cut says how much it left out. */
static void printable(void **state)
{
	char out[64], big[300];

	pol_printable(out, sizeof(out), "git status");
	assert_string_equal(out, "git status");
	pol_printable(out, sizeof(out), "\x1b[1A\x1b[2Kgit status\r\n\x7f");
	assert_string_equal(out, "\\x1b[1A\\x1b[2Kgit status\\x0d\\x0a\\x7f");
	pol_printable(out, sizeof(out), "a\xc2\x9b" "b\xc3\xa9\xff");  /* C1 CSI, é, a stray byte */
	assert_string_equal(out, "a\\xc2\\x9bb\xc3\xa9\\xff");
	/* A right-to-left override, a zero-width space, an isolate, a BOM: reorder or hide text. */
	pol_printable(out, sizeof(out), "main\xe2\x80\xae" "x\xe2\x80\x8b" "y\xe2\x81\xa6" "\xef\xbb\xbf");
	assert_string_equal(out, "main\\xe2\\x80\\xaex\\xe2\\x80\\x8by\\xe2\\x81\\xa6\\xef\\xbb\\xbf");
	pol_printable(out, sizeof(out), "\xe2\x80\x90\xe2\x81\xb0");  /* a hyphen, a superscript 0 */
	assert_string_equal(out, "\xe2\x80\x90\xe2\x81\xb0");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pol_printable(out, sizeof(out), big);
	assert_true(strlen(out) < sizeof(out));
	assert_non_null(strstr(out, " ...[+"));
	{
		size_t kept = (size_t)(strstr(out, " ...[+") - out), more = 0;

		assert_int_equal(sscanf(strstr(out, "[+"), "[+%zu bytes]", &more), 1);
		assert_int_equal(kept + more, sizeof(big) - 1);
	}
	/* Exactly full: no cut. */
	memset(big, 'y', sizeof(out) - 1);
	big[sizeof(out) - 1] = '\0';
	pol_printable(out, sizeof(out), big);
	assert_string_equal(out, big);
}

/* Large arguments: kept as size, SHA-256 and head; small ones whole, the same reference. */
static void kept(void **state)
{
	/* SHA-256 of {"m":"<70000 x 'é' (c3 a9)>"}: python3 -c "import hashlib,json;
	 * print(hashlib.sha256(json.dumps({'m':'\u00e9'*70000},ensure_ascii=False,
	 * separators=(',',':')).encode()).hexdigest())" */
	static const char want[] = "b57a0c33523097f10c1a7ef63e5a1acf336d00a6994e6409aba6e02fc50153a6";
	size_t n = 70000 * 2;
	char *big = malloc(n + 1);
	json_t *small = json_pack("{s:s,s:s,s:{s:s}}", "server", "fs", "tool", "write",
				  "arguments", "path", "/x"), *ev, *k, *a;
	const char *head, *sha;

	(void)state;
	for (size_t i = 0; i < n; i += 2) {
		big[i] = (char)0xc3;
		big[i + 1] = (char)0xa9;
	}
	big[n] = 0;
	k = pol_event_kept(small);
	assert_ptr_equal(k, small);
	json_decref(k);
	ev = json_pack("{s:s,s:s,s:{s:s}}", "server", "fs", "tool", "write", "arguments", "m", big);
	assert_non_null(ev);
	k = pol_event_kept(ev);
	assert_non_null(k);
	assert_ptr_not_equal(k, ev);
	assert_string_equal(json_string_value(json_object_get(k, "tool")), "write");
	a = json_object_get(k, "arguments");
	assert_true(json_is_true(json_object_get(a, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(a, "bytes")), n + 8);
	sha = json_string_value(json_object_get(a, "sha256"));
	assert_non_null(sha);
	assert_string_equal(sha, want);
	/* The head: the first 64 KiB, ended on a character ({"m":" is 6 bytes, é is 2). */
	head = json_string_value(json_object_get(a, "head"));
	assert_non_null(head);
	assert_int_equal(strlen(head), POL_RECORD_ARGS_BYTES);
	assert_memory_equal(head, "{\"m\":\"\xc3\xa9", 8);
	/* The event judged is untouched. */
	assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "arguments"), "m")),
			    big);
	json_decref(k);
	json_decref(ev);
	/* One byte more before them: byte 65536 is inside an é, so the head stops short of it. */
	big[1] = 'a';
	ev = json_pack("{s:s,s:s,s:{s:s}}", "server", "fs", "tool", "write", "arguments", "m",
		       big + 1);
	k = pol_event_kept(ev);
	assert_non_null(k);
	head = json_string_value(json_object_get(json_object_get(k, "arguments"), "head"));
	assert_non_null(head);
	assert_int_equal(strlen(head), POL_RECORD_ARGS_BYTES - 1);
	json_decref(k);
	json_decref(ev);
	json_decref(small);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(git),
		cmocka_unit_test(git_options),
		cmocka_unit_test(git_aliases),
		cmocka_unit_test(git_push_ways),
		cmocka_unit_test(packages),
		cmocka_unit_test(fetch),
		cmocka_unit_test(not_utf8),
		cmocka_unit_test(printable),
		cmocka_unit_test(kept),
	};
	return cmocka_run_group_tests_name("lift", tests, NULL, NULL);
}

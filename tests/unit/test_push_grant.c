// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Where a git push goes: the URLs git picks, parsed for the broker's grant. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "push_grant.h"

static void expect_net(const char *url, const char *scheme, const char *host, int port)
{
	char s[16], h[256];
	int p = 0;

	assert_int_equal(push_url_parse(url, s, sizeof(s), h, sizeof(h), &p), 0);
	assert_string_equal(s, scheme);
	assert_string_equal(h, host);
	assert_int_equal(p, port);
}

static void expect_err(const char *url, int err)
{
	char s[16], h[256];
	int p = 0;

	assert_int_equal(push_url_parse(url, s, sizeof(s), h, sizeof(h), &p), err);
}

static void network_urls(void **state)
{
	(void)state;
	expect_net("https://localhost:8443/repo.git", "https", "localhost", 8443);
	expect_net("https://Git.Example.COM/a/b.git", "https", "git.example.com", 443);
	expect_net("HTTP://example.com", "http", "example.com", 80);
	/* userinfo: the host follows the last '@' before the path */
	expect_net("https://u:p@ss@host.example:444/x", "https", "host.example", 444);
	expect_net("https://[2001:db8::1]:8443/r", "https", "2001:db8::1", 8443);
	expect_net("https://[::1]/r", "https", "::1", 443);
	expect_net("ssh://git@h.example:2222/r.git", "ssh", "h.example", 2222);
	expect_net("git+ssh://h.example/r.git", "git+ssh", "h.example", 22);
	expect_net("git@github.example:org/repo.git", "ssh", "github.example", 22);
	expect_net("h.example:repo", "ssh", "h.example", 22);
	expect_net("git://h.example/r", "git", "h.example", 9418);
	/* a query or fragment ends the authority */
	expect_net("https://h.example?x=@evil.example", "https", "h.example", 443);
}

static void local_and_bad(void **state)
{
	(void)state;
	expect_err("/srv/repo.git", -ENOENT);
	expect_err("../repo", -ENOENT);
	expect_err("./a:b", -ENOENT);            /* a '/' before the ':': a path */
	expect_err("file:///srv/repo.git", -ENOENT);
	expect_err("ext::sh -c evil", -ENOENT);
	expect_err("fd::3", -ENOENT);
	expect_err("ftp://h.example/r", -ENOENT);
	expect_err("https:///r", -EINVAL);
	expect_err("https://h.example:0/r", -EINVAL);
	expect_err("https://h.example:99999/r", -EINVAL);
	expect_err("https://h.example:44x/r", -EINVAL);
	expect_err("https://[::1/r", -EINVAL);
}

static void shown(void **state)
{
	json_t *j;

	(void)state;
	j = push_url_shown("https://user:s3cret@h.example/r.git");
	assert_string_equal(json_string_value(j), "https://user:***@h.example/r.git");
	json_decref(j);
	j = push_url_shown("https://user@h.example/r.git");
	assert_string_equal(json_string_value(j), "https://user@h.example/r.git");
	json_decref(j);
	j = push_url_shown("https://h.example/a@b:c");
	assert_string_equal(json_string_value(j), "https://h.example/a@b:c");
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(network_urls),
		cmocka_unit_test(local_and_bad),
		cmocka_unit_test(shown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

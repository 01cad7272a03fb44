// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Pure helpers of the policy language: paths, URLs, hosts, sizes, durations. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"

static void normalize(void **state)
{
	static const char *const cases[][2] = {
		{ "/", "/" }, { "//a//b/", "/a/b" }, { "/a/./b/.", "/a/b" }, { "/a/b/../c", "/a/c" },
		{ "/../../x", "/x" }, { "/a/..", "/" }, { "/a/b/../../..", "/" }, { "/a/.../b", "/a/.../b" },
	};
	char out[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(pol_normalize_path(cases[i][0], out, sizeof(out)), 0);
		assert_string_equal(out, cases[i][1]);
	}
	assert_int_equal(pol_normalize_path("rel/x", out, sizeof(out)), -EINVAL);
	assert_int_equal(pol_normalize_path("/aaaaaaaaaa/bbbbbbbbbb", out, 8), -ENAMETOOLONG);
}

static void within(void **state)
{
	assert_true(pol_path_within("/a/b", "/a"));
	assert_true(pol_path_within("/a", "/a"));
	assert_false(pol_path_within("/ab", "/a"));
	assert_true(pol_path_within("/x", "/"));
	assert_true(pol_glob_within("/home/bob/.ssh/id", "/home/*/.ssh"));
	assert_false(pol_glob_within("/home/bob/.sshx", "/home/*/.ssh"));
	assert_true(pol_glob_within("/dev/sda1", "/dev/sd*"));
	assert_false(pol_glob_within("/dev/sdx/../null", "/dev/null/x"));
	assert_false(pol_glob_within("/home/.hidden/.ssh", "/home/*/.ssh"));  /* FNM_PERIOD */
}

/*
 * "**" is zero or more whole components, dot names included, as
 * .gitignore reads it; "*" stays one component without a leading dot.
 */
static void starstar(void **state)
{
	static const struct {
		const char *path, *pat;
		enum pol_glob_rel rel;
	} cases[] = {
		{ "/w/.env", "/w/**/.env", POL_GLOB_WITHIN },
		{ "/w/sub/.env", "/w/**/.env", POL_GLOB_WITHIN },
		{ "/w/a/b/.env", "/w/**/.env", POL_GLOB_WITHIN },
		{ "/w/a/b/.env/x", "/w/**/.env", POL_GLOB_WITHIN },
		{ "/w/.git/x/.env", "/w/**/.env", POL_GLOB_WITHIN },
		{ "/w/env.txt", "/w/**/.env", POL_GLOB_ANCESTOR },  /* of env.txt/.env */
		{ "/w/a/.envrc", "/w/**/.env", POL_GLOB_ANCESTOR },
		{ "/v/.env", "/w/**/.env", POL_GLOB_NONE },
		{ "/w/a/b", "/w/**/.env", POL_GLOB_ANCESTOR },
		{ "/w", "/w/**/.env", POL_GLOB_ANCESTOR },
		{ "/", "/w/**/.env", POL_GLOB_ANCESTOR },
		{ "/w", "/w/**", POL_GLOB_WITHIN },
		{ "/w/x/y", "/w/**", POL_GLOB_WITHIN },
		{ "/anything/.env", "/**/.env", POL_GLOB_WITHIN },
		{ "/.env", "/**/.env", POL_GLOB_WITHIN },
		{ "/w/a/k.pem", "/w/**/*.pem", POL_GLOB_WITHIN },
		{ "/w/a/.k.pem", "/w/**/*.pem", POL_GLOB_ANCESTOR },  /* "*" keeps FNM_PERIOD */
		{ "/w/a/b/c/d", "/w/**/b/**/d", POL_GLOB_WITHIN },
		{ "/w/b/d", "/w/**/b/**/d", POL_GLOB_WITHIN },
		{ "/w/b/b/x/d", "/w/**/b/**/d", POL_GLOB_WITHIN },
		{ "/w/d/b", "/w/**/b/**/d", POL_GLOB_ANCESTOR },
		{ "/w/x", "/w/**/**/.env", POL_GLOB_ANCESTOR },
		{ "/w/.env", "/w/**/**/.env", POL_GLOB_WITHIN },
		{ "/home/bob/.ssh", "/home/*/.ssh", POL_GLOB_WITHIN },
		{ "/home/a/b/.ssh", "/home/*/.ssh", POL_GLOB_NONE },    /* "*" is one component */
	};
	const char *why = NULL;
	char many[4096] = "";

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum pol_glob_rel got = pol_glob_rel(cases[i].path, cases[i].pat);

		if (got != cases[i].rel)
			fail_msg("%s against %s: %d, want %d", cases[i].path, cases[i].pat, got,
				 cases[i].rel);
	}
	/* A path of 400 components against "**" twice: linear, not exponential. */
	for (int i = 0; i < 400; i++)
		strcat(many, "/a");
	assert_int_equal(pol_glob_rel(many, "/**/a/**/b"), POL_GLOB_ANCESTOR);
	assert_int_equal(pol_glob_rel(many, "/**/a/**/a"), POL_GLOB_WITHIN);

	assert_int_equal(pol_pattern_check("/w/**/.env", &why), 0);
	assert_int_equal(pol_pattern_check("/w/**", &why), 0);
	assert_int_equal(pol_pattern_check("/w/a**/.env", &why), -EINVAL);
	assert_non_null(strstr(why, "whole path component"));
	assert_int_equal(pol_pattern_check("/w/***/x", &why), -EINVAL);
	assert_int_equal(pol_pattern_check("/w/x**", &why), -EINVAL);
	assert_int_equal(pol_pattern_check(many, &why), -EINVAL);   /* 400 components */
	assert_non_null(strstr(why, "components"));
}

static void url_hosts(void **state)
{
	static const char *const ok[][2] = {
		{ "https://Example.COM/x", "example.com" }, { "http://a.b:8080", "a.b" },
		{ "https://a.b./?q=1", "a.b" }, { "https://[::1]:443/", "::1" },
		{ "http://0x7f.1/", "127.0.0.1" }, { "http://2130706433", "127.0.0.1" },
		{ "https://[::ffff:10.0.0.1]/", "10.0.0.1" }, { "https://a.b#frag@c.d", "a.b" },
	};
	static const char *const bad[] = {
		"ftp://a.b/", "https://u:p@a.b/", "https://a.b\\@c.d/", "https:// a.b/", "https://a%2eb/",
		"https://a.b\r\n/", "https:///x", "https://[::1/", "javascript:alert(1)", "https://a_b$.c/",
	};
	char out[256];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(pol_url_host(ok[i][0], out, sizeof(out)), 0);
		assert_string_equal(out, ok[i][1]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(pol_url_host(bad[i], out, sizeof(out)) < 0);
}

static void hosts(void **state)
{
	struct pol_host h;

	assert_int_equal(pol_host_parse("10.0.0.0/8", &h), 0);
	assert_int_equal(h.kind, POL_HOST_CIDR4);
	assert_true(pol_host_match(&h, "10.255.0.1"));
	assert_true(pol_host_match(&h, "::ffff:10.1.1.1"));
	assert_false(pol_host_match(&h, "11.0.0.1"));
	assert_false(pol_host_match(&h, "ten.example"));
	assert_int_equal(pol_host_parse("*.Example.com", &h), 0);
	assert_true(pol_host_match(&h, "a.b.example.com"));
	assert_false(pol_host_match(&h, "example.com"));
	free(h.name);
	assert_int_equal(pol_host_parse("fe80::/10", &h), 0);
	assert_true(pol_host_match(&h, "fe80::1"));
	assert_false(pol_host_match(&h, "fec0::1"));
	assert_int_equal(pol_host_parse("0.0.0.0/0", &h), 0);
	assert_true(pol_host_match(&h, "8.8.8.8"));
	assert_true(pol_host_parse("1.2.3.4/33", &h) < 0);
	assert_true(pol_host_parse("1.2.3.4/", &h) < 0);
	assert_true(pol_host_parse("a..b", &h) < 0);
	assert_true(pol_host_parse("*.", &h) < 0);
	assert_true(pol_host_parse("a b", &h) < 0);
	assert_true(pol_host_parse("1.2.3.4 x", &h) < 0);
}

static void durations_and_sizes(void **state)
{
	uint64_t v;

	assert_int_equal(pol_parse_duration("90", &v), 0);
	assert_int_equal(v, 90);
	assert_int_equal(pol_parse_duration("15m", &v), 0);
	assert_int_equal(v, 900);
	assert_int_equal(pol_parse_duration("2h", &v), 0);
	assert_int_equal(v, 7200);
	assert_int_equal(pol_parse_duration("1d", &v), 0);
	assert_int_equal(v, 86400);
	assert_true(pol_parse_duration("1w", &v) < 0);
	assert_true(pol_parse_duration("-1", &v) < 0);
	assert_true(pol_parse_duration("", &v) < 0);
	assert_true(pol_parse_duration("99999999999999999999h", &v) < 0);
	assert_int_equal(pol_parse_size("4G", &v), 0);
	assert_int_equal(v, 4ull << 30);
	assert_int_equal(pol_parse_size("512M", &v), 0);
	assert_int_equal(v, 512ull << 20);
	assert_true(pol_parse_size("4Q", &v) < 0);
	assert_true(pol_parse_size("20000000000T", &v) < 0);
}

static void rights(void **state)
{
	uint32_t b;
	char buf[64];

	assert_int_equal(pol_right_parse("exec", &b), 0);
	assert_int_equal(b, CORDON_FS_EXEC);
	assert_int_equal(pol_right_parse("all", &b), 0);
	assert_int_equal(b, CORDON_FS_ALL);
	assert_true(pol_right_parse("exe", &b) < 0);
	assert_string_equal(pol_rights_str(CORDON_FS_READ | CORDON_FS_EXEC, buf, sizeof(buf)), "read,exec");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(normalize),
		cmocka_unit_test(within),
		cmocka_unit_test(starstar),
		cmocka_unit_test(url_hosts),
		cmocka_unit_test(hosts),
		cmocka_unit_test(durations_and_sizes),
		cmocka_unit_test(rights),
	};
	return cmocka_run_group_tests_name("match", tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The intents store (userspace/supervisor/intent.c): what an intent covers, its lifetime, revocation. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policy.h"
#include "intent.h"

static json_t *push(const char *remote, const char *branch)
{
	return pol_event("git", "push", json_pack("{s:s,s:s}", "remote", remote, "branch", branch));
}

static void covers_exactly_its_request(void **state)
{
	struct intents in = { 0 };
	char err[512] = "";
	json_t *ok = push("origin", "feature-x"), *main_ = push("origin", "main"),
	       *other = push("upstream", "feature-x"), *two = push("origin", "feature-x");
	int id;

	(void)state;
	id = intent_state(&in, "push the branch feature-x to origin", 0, "tty", NULL, 1000, err,
			  sizeof(err));
	if (id != 1) fprintf(stderr, "# %s\n", err);
	assert_int_equal(id, 1);
	assert_non_null(intent_covers(&in, ok, NULL, false, 2000));
	assert_null(intent_covers(&in, main_, NULL, false, 2000));
	assert_null(intent_covers(&in, other, NULL, false, 2000));
	/* git push origin feature-x main: every lifted push must be covered. */
	json_object_set_new(two, "more", json_pack("[o]", push("origin", "main")));
	assert_null(intent_covers(&in, two, NULL, false, 2000));
	json_decref(ok);
	/* As lifted from `git push`: other arguments are not asked, a flag set is not covered. */
	ok = push("origin", "feature-x");
	json_object_set_new(json_object_get(ok, "arguments"), "force", json_false());
	json_object_set_new(json_object_get(ok, "arguments"), "destination", json_pack("[{s:s}]", "url", "/r"));
	assert_null(intent_covers(&in, ok, NULL, false, 2000));        /* a tool call: every key named */
	assert_non_null(intent_covers(&in, ok, NULL, true, 2000));
	json_object_set_new(json_object_get(ok, "arguments"), "force", json_true());
	assert_null(intent_covers(&in, ok, NULL, true, 2000));
	json_decref(ok);
	json_decref(main_);
	json_decref(other);
	json_decref(two);
	intents_free(&in);
}

static void lifetime_and_revocation(void **state)
{
	struct intents in = { 0 };
	char err[512] = "";
	json_t *rd = pol_event_fs("read_file", "/srv/data/x", NULL);
	json_t *wr = pol_event_fs("write_file", "/srv/data/x", NULL);
	json_t *rd2 = pol_event_fs("read_file", "/srv/other", NULL);
	json_t *l;

	(void)state;
	assert_int_equal(intent_state(&in, "read /srv/data for 20 minutes", 0, "tty", NULL, 0, err,
				      sizeof(err)), 1);
	assert_non_null(intent_covers(&in, rd, NULL, false, 1199 * 1000));
	assert_null(intent_covers(&in, wr, NULL, false, 1000));
	assert_null(intent_covers(&in, rd, NULL, false, 1200 * 1000));          /* expired */
	/* --for overrides the sentence's own lifetime. */
	assert_int_equal(intent_state(&in, "read /srv/other for an hour", 5, "tty", NULL, 0, err,
				      sizeof(err)), 2);
	assert_non_null(intent_covers(&in, rd2, NULL, false, 4999));
	assert_null(intent_covers(&in, rd2, NULL, false, 5000));
	assert_int_equal(intent_state(&in, "read /srv/data", 0, "tty", NULL, 0, err, sizeof(err)), 3);
	l = intent_list_json(&in, 10);
	assert_int_equal(json_array_size(l), 3);       /* 2 is live until 5000 */
	json_decref(l);
	assert_non_null(intent_covers(&in, rd, NULL, false, 1u << 30));        /* the session's */
	assert_int_equal(intent_revoke(&in, 3, 10), 0);
	assert_int_equal(intent_revoke(&in, 3, 10), -ENOENT);
	assert_int_equal(intent_revoke(&in, 42, 10), -ENOENT);
	assert_null(intent_covers(&in, rd, NULL, false, 1u << 30));
	json_decref(rd);
	json_decref(wr);
	json_decref(rd2);
	intents_free(&in);
}

static void refused_sentences_and_keys(void **state)
{
	struct intents in = { 0 };
	char err[512] = "";
	json_t *ev = push("origin", "main");

	(void)state;
	/* An intent only allows: a prohibition is no intent. */
	assert_int_equal(intent_state(&in, "never read /srv", 0, "tty", NULL, 0, err, sizeof(err)),
			 -EINVAL);
	assert_true(strlen(err) > 0);
	assert_int_equal(intent_state(&in, "frobnicate the flux", 0, "tty", NULL, 0, err,
				      sizeof(err)), -EINVAL);
	assert_int_equal(in.n, 0);
	/* "Approve for this session": that key only. */
	assert_int_equal(intent_state_key(&in, "abc", "git push origin main", "tty", 0), 1);
	assert_non_null(intent_covers(&in, ev, "abc", false, 5));
	assert_null(intent_covers(&in, ev, "abd", false, 5));
	assert_null(intent_covers(&in, ev, NULL, false, 5));
	assert_int_equal(intent_revoke(&in, 1, 5), 0);
	assert_null(intent_covers(&in, ev, "abc", false, 5));
	json_decref(ev);
	intents_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(covers_exactly_its_request),
		cmocka_unit_test(lifetime_and_revocation),
		cmocka_unit_test(refused_sentences_and_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

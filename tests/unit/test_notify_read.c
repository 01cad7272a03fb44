// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading an exec's path and argv from a task's memory
 * (userspace/supervisor/notify.c: notify_read_exec, notify_read_argv),
 * here from this process's own memory (process_vm_readv on itself): the
 * batched reads give exactly what string-by-string reads gave, whatever
 * the layout (many strings, long ones, a string or a path across a page,
 * a string that runs into an unmapped page), and the same errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "notify.h"

#define PAGE 4096
#define BIG (64u << 20)

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* notify_read_exec of path and argv: asserts it read them back exactly. */
static void read_back(const char *path, char *const *argv)
{
	char got_path[PATH_MAX];
	char **got = NULL;
	bool path_read = false;
	int n = 0, r;

	while (argv && argv[n])
		n++;
	r = notify_read_exec(getpid(), addr(path), got_path, sizeof(got_path), addr(argv), 1 << 20,
			     BIG, &got, &path_read);
	assert_int_equal(r, n);
	assert_true(path_read);
	assert_string_equal(got_path, path);
	for (int i = 0; i < n; i++)
		assert_string_equal(got[i], argv[i]);
	assert_null(got[n]);
	free(got);
}

static void short_argv(void **state)
{
	char *argv[] = { "git", "status", "-s", NULL };

	(void)state;
	read_back("/usr/bin/git", argv);
}

/* More strings than one batch, some longer than a batch's first look at them. */
static void many_and_long(void **state)
{
	char *argv[101];
	char lens[] = { 0, 1, 7, 8, 255, 0, 254, 100 };

	(void)state;
	for (int i = 0; i < 100; i++) {
		size_t l = i % 9 == 8 ? 5000 + (size_t)i : (size_t)lens[i % 8] + (size_t)i;

		argv[i] = malloc(l + 1);
		assert_non_null(argv[i]);
		memset(argv[i], 'a' + i % 26, l);
		argv[i][l] = '\0';
	}
	argv[100] = NULL;
	read_back("/bin/true", argv);
	for (int i = 0; i < 100; i++)
		free(argv[i]);
}

/* An empty argv (NULL) reads as no strings. */
static void null_argv(void **state)
{
	(void)state;
	read_back("/bin/true", NULL);
}

/*
 * Two pages, the second not mapped: a string that ends on the first page's
 * last byte reads; one that runs into the second is EFAULT, as is a path
 * that does; a path across two mapped pages reads whole.
 */
static void page_edges(void **state)
{
	char *m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *edge, *cross, *two, got_path[PATH_MAX];
	char **got = NULL;
	bool path_read = true;

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + 2 * PAGE, PAGE, PROT_NONE), 0);
	edge = m + 2 * PAGE - 6;
	memcpy(edge, "edge.", 6);                       /* its NUL the last mapped byte */
	two = m + PAGE - 3;
	memcpy(two, "/usr/bin/two", 13);                /* across the first two pages */
	{
		char *argv[] = { "x", edge, two, NULL };

		read_back(two, argv);
	}
	cross = m + 2 * PAGE - 4;
	memcpy(cross, "abcd", 4);                       /* no NUL before the unmapped page */
	{
		char *argv[] = { "x", cross, NULL };

		assert_int_equal(notify_read_exec(getpid(), addr("/bin/true"), got_path,
						  sizeof(got_path), addr(argv), 1 << 20, BIG, &got,
						  &path_read), -EFAULT);
		assert_true(path_read);
		assert_int_equal(notify_read_exec(getpid(), addr(cross), got_path, sizeof(got_path),
						  addr(argv), 1 << 20, BIG, &got, &path_read),
				 -EFAULT);
		assert_false(path_read);
	}
	munmap(m, 3 * PAGE);
}

/* The pointer array across a page, and an array that runs into an unmapped page. */
static void pointer_edges(void **state)
{
	char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char **argv, got_path[PATH_MAX], **got = NULL;
	bool path_read;

	(void)state;
	assert_true(m != MAP_FAILED);
	argv = (char **)(m + PAGE - 2 * sizeof(char *));
	argv[0] = "one";
	argv[1] = "two";
	argv[2] = "three";
	argv[3] = NULL;
	read_back("/bin/echo", argv);
	assert_int_equal(mprotect(m + PAGE, PAGE, PROT_NONE), 0);
	argv[0] = "one";
	argv[1] = "two";                                /* no NULL before the unmapped page */
	assert_int_equal(notify_read_exec(getpid(), addr("/bin/echo"), got_path, sizeof(got_path),
					  addr(argv), 1 << 20, BIG, &got, &path_read), -EFAULT);
	munmap(m, 2 * PAGE);
}

/* The limits: strings and bytes beyond them are -E2BIG, at them read. */
static void limits(void **state)
{
	char *argv[] = { "12345", "6789", NULL };      /* 6 + 5 bytes */
	char got_path[PATH_MAX], **got = NULL;
	bool path_read;

	(void)state;
	assert_int_equal(notify_read_exec(getpid(), addr("/p"), got_path, sizeof(got_path),
					  addr(argv), 2, 11, &got, &path_read), 2);
	free(got);
	got = NULL;
	assert_int_equal(notify_read_exec(getpid(), addr("/p"), got_path, sizeof(got_path),
					  addr(argv), 2, 10, &got, &path_read), -E2BIG);
	assert_int_equal(notify_read_exec(getpid(), addr("/p"), got_path, sizeof(got_path),
					  addr(argv), 1, 11, &got, &path_read), -E2BIG);
	assert_int_equal(notify_read_argv(getpid(), addr(argv), 2, 11, &got), 2);
	assert_string_equal(got[1], "6789");
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(short_argv),
		cmocka_unit_test(many_and_long),
		cmocka_unit_test(null_argv),
		cmocka_unit_test(page_edges),
		cmocka_unit_test(pointer_edges),
		cmocka_unit_test(limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

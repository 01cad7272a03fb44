// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The session's steps budget, shared by the supervisor and its helpers (steps.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include "policy.h"
#include "steps.h"

#define STEPS_MAGIC 0x7370657473646f63ull       /* a mapping of anything else is refused */

struct steps_page {
	uint64_t magic;
	uint64_t max;                   /* written once, before any helper maps it */
	uint64_t taken;                 /* atomic */
};

/*
 * The size is sealed: a helper cannot shrink the file under the
 * supervisor's mapping (a SIGBUS in the process that holds the session).
 */
#define STEPS_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static int steps_map(struct steps *st, int fd)
{
	void *p = mmap(NULL, sizeof(struct steps_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	st->page = p;
	st->fd = fd;
	return 0;
}

int steps_create(struct steps *st, uint64_t max)
{
	int fd = memfd_create("cordon-steps", MFD_CLOEXEC | MFD_ALLOW_SEALING), r;

	st->page = NULL;
	st->fd = -1;
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(struct steps_page)) < 0 || fcntl(fd, F_ADD_SEALS, STEPS_SEALS) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = steps_map(st, fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	st->page->max = max;
	__atomic_store_n(&st->page->magic, STEPS_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

int steps_attach(struct steps *st, int fd)
{
	struct stat sb;
	int seals = fcntl(fd, F_GET_SEALS), r;

	st->page = NULL;
	st->fd = -1;
	if (seals < 0 || (seals & STEPS_SEALS) != STEPS_SEALS || fstat(fd, &sb) < 0 ||
	    sb.st_size != (off_t)sizeof(struct steps_page))
		return -EINVAL;
	r = steps_map(st, fd);
	if (r < 0)
		return r;
	if (__atomic_load_n(&st->page->magic, __ATOMIC_ACQUIRE) != STEPS_MAGIC) {
		munmap(st->page, sizeof(struct steps_page));
		st->page = NULL;
		st->fd = -1;    /* the caller's still */
		return -EINVAL;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

bool steps_take(struct steps *st)
{
	uint64_t n;

	if (!st->page)
		return true;
	n = __atomic_add_fetch(&st->page->taken, 1, __ATOMIC_RELAXED);
	return !st->page->max || n <= st->page->max;
}

void steps_eval(struct steps *st, const struct policy *pol, const struct pol_request *req,
		struct pol_result *res)
{
	if (steps_take(st)) {
		pol_eval(pol, req, res);
		return;
	}
	*res = (struct pol_result){ .decision = CORDON_DENY, .invariant = "steps-budget" };
	snprintf(res->reason, sizeof(res->reason), "the session's steps budget (%llu) is spent",
		 (unsigned long long)steps_max(st));
}

uint64_t steps_count(const struct steps *st)
{
	return st->page ? __atomic_load_n(&st->page->taken, __ATOMIC_RELAXED) : 0;
}

uint64_t steps_max(const struct steps *st)
{
	return st->page ? st->page->max : 0;
}

bool steps_spent(const struct steps *st)
{
	return st->page && st->page->max && steps_count(st) > st->page->max;
}

void steps_close(struct steps *st)
{
	if (st->page)
		munmap(st->page, sizeof(struct steps_page));
	if (st->fd >= 0)
		close(st->fd);
	st->page = NULL;
	st->fd = -1;
}

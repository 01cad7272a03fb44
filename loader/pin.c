// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <bpf/libbpf.h>
#include "pin.h"
#include "util.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && (log_verbose() > 0 || getenv("CORDON_BPF_LOG")))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

void pin_quiet_libbpf(void)
{
	libbpf_set_print(quiet);
}

uint64_t pin_build_id(const void *elf, size_t len)
{
	const unsigned char *b = elf;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

int pin_open_or_load(const struct pin_ops *ops, void **out)
{
	void *h;
	int r;

	pin_quiet_libbpf();
	r = ops->ensure_dir();
	if (r < 0)
		return r;
	h = ops->create();
	if (!h)
		return -ENOMEM;
	if (ops->open_pinned(h) == 0) {
		*out = h;
		return 0;
	}
	ops->close(h);
	/* Absent, partial or stale: start clean. */
	(void)ops->unload();
	r = ops->ensure_dir();
	if (r < 0)
		return r;
	h = ops->create();
	if (!h)
		return -ENOMEM;
	r = ops->load(h);
	if (r < 0) {
		ops->close(h);
		(void)ops->unload();
		return r;
	}
	*out = h;
	return 0;
}

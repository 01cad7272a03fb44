/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the pinned BPF objects (the LSM floor, the network floor) share: how
 * libbpf speaks, how an object is recognised as this build's, and the
 * open-the-pins-or-load-afresh sequence with its all-or-nothing rule.
 */
#ifndef CORDON_PIN_H
#define CORDON_PIN_H

#include <stddef.h>
#include <stdint.h>

/* libbpf's warnings (the verifier log among them) only with -v or CORDON_BPF_LOG=1. */
void pin_quiet_libbpf(void);

/*
 * A ring buffer map of `bytes` named `name`, by the bpf system call itself:
 * libbpf's bpf_map_create probes the kernel first (two small programs
 * loaded and verified, once a process: ~0.5 ms of a session's start, on
 * its critical path), for features every kernel cordon runs on has (map
 * names, memory cgroup accounting).  The descriptor is close-on-exec and
 * above 2.  Returns it, or -errno.
 */
int pin_ring_create(const char *name, uint32_t bytes);

/* A hash of an object's ELF bytes: a pinned object from another build is stale. */
uint64_t pin_build_id(const void *elf, size_t len);

/*
 * How many links (files named link_*) are pinned in `dir`, or -errno.  A
 * pinned object is whole when this equals the count its loader recorded:
 * checked so, a session start need not open the object again (that parses
 * it and the kernel's BTF).
 */
int pin_count_links(const char *dir);

/*
 * The directory `dir` (below the instance's pin directory, instance.h, or
 * that directory itself),
 * mounting bpffs at /sys/fs/bpf first if it is not there.
 */
int pin_ensure_dir(const char *dir);

/*
 * Unpin everything in `dir`, one level of subdirectories included, and
 * remove it.  Unpinning a link detaches its program once no handle holds
 * it.  A missing directory is not an error.
 */
int pin_clear_dir(const char *dir);
/*
 * Unpin the files in `dir`, not its subdirectories (another floor's), and
 * remove it if it is then empty.
 */
int pin_clear_files(const char *dir);

struct pin_ops {
	void *(*create)(void);          /* an empty handle */
	int (*open_pinned)(void *h);    /* 0 only if the pins are whole and this build's */
	int (*load)(void *h);           /* load, attach, pin */
	void (*close)(void *h);         /* release the handle (pins stay) */
	int (*unload)(void);            /* remove every pin */
	int (*ensure_dir)(void);        /* the pin directory exists */
	const char *dir;                /* where this floor pins its links */
};

/*
 * Reuse the pins if they are whole and current; otherwise unpin whatever is
 * there and load afresh.  Every program attached before stays attached
 * until its replacement is (see pin.c: no running session is ever without
 * its floor); a failed load leaves nothing of its own behind, and the links
 * that were attached before attached and pinned as they were.
 */
int pin_open_or_load(const struct pin_ops *ops, void **out);

#endif

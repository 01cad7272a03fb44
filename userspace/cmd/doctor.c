// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon doctor [--json]`: what this kernel lets cordon enforce, measured.
 */
#include <getopt.h>
#include <sys/utsname.h>
#include "cmd.h"
#include "doctor.h"
#include "probe.h"
#include "util.h"

static const char *state_word(enum mech_state s)
{
	switch (s) {
	case MECH_AVAILABLE:
		return "available";
	case MECH_UNAVAILABLE:
		return "unavailable";
	case MECH_NOT_CHECKED:
		return "not checked";
	}
	return "unavailable";
}

json_t *doctor_json(const struct posture *p)
{
	json_t *root = json_object(), *mechs = json_object(), *lacks = json_array();
	struct utsname u;

	for (int i = 0; i < MECH_MAX; i++) {
		const struct mech_result *m = &p->mech[i];
		json_t *o = json_pack("{s:b,s:s}", "available", m->state == MECH_AVAILABLE,
				      "reason", m->reason);
		if (m->state == MECH_NOT_CHECKED)
			json_object_set_new(o, "needs_root", json_true());
		if (i == MECH_LANDLOCK && m->state == MECH_AVAILABLE)
			json_object_set_new(o, "abi", json_integer(m->value));
		json_object_set_new(mechs, mech_name((enum mech)i), o);
	}
	for (int i = 0; i < p->n_lacks; i++)
		json_array_append_new(lacks, json_pack("{s:s,s:s}", "id", p->lacks[i]->id,
						       "what", p->lacks[i]->what));
	json_object_set_new(root, "posture", json_string(posture_name(p->level)));
	if (uname(&u) == 0)
		json_object_set_new(root, "kernel", json_string(u.release));
	json_object_set_new(root, "root", json_boolean(p->root));
	json_object_set_new(root, "mechanisms", mechs);
	json_object_set_new(root, "lacks", lacks);
	return root;
}

void doctor_print(FILE *f, const struct posture *p)
{
	static const char *what[] = {
		[POSTURE_FULL] = "BPF LSM floor + cgroup-bpf + seccomp supervisor",
		[POSTURE_FALLBACK] = "Landlock + cgroup-bpf + seccomp supervisor, no BPF LSM",
		[POSTURE_INSUFFICIENT] = "cordon cannot confine an agent on this kernel",
	};
	struct utsname u;
	bool unchecked = false;

	if (uname(&u) == 0)
		fprintf(f, "kernel %s (%s)\n\n", u.release, u.machine);
	for (int i = 0; i < MECH_MAX; i++) {
		const struct mech_result *m = &p->mech[i];
		fprintf(f, "  %-26s %-12s %s\n", mech_label((enum mech)i),
			state_word(m->state), m->reason);
		unchecked |= m->state == MECH_NOT_CHECKED;
	}
	fprintf(f, "\nposture: %s (%s)\n", posture_name(p->level), what[p->level]);
	if (p->n_lacks) {
		fprintf(f, "this posture does not enforce:\n");
		for (int i = 0; i < p->n_lacks; i++)
			fprintf(f, "  - %s\n", p->lacks[i]->what);
	}
	if (unchecked)
		fprintf(f, "\nsome checks need root and were not run: run `cordon doctor` as root "
			"for a complete answer (unchecked counts as unavailable)\n");
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct posture p;
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: cordon doctor [--json]\n"
			       "Measure which enforcement mechanisms this kernel offers and\n"
			       "report the resulting posture: full, fallback or insufficient.\n"
			       "Exit status: 0 for full or fallback, 1 for insufficient.\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc) {
		log_err("doctor: unexpected argument '%s'", argv[optind]);
		return 2;
	}
	probe_all(&p);
	if (json) {
		json_t *j = doctor_json(&p);
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
		json_decref(j);
	} else {
		doctor_print(stdout, &p);
	}
	return p.level == POSTURE_INSUFFICIENT ? 1 : 0;
}

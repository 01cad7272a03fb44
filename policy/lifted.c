// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a recogniser makes: events, deduplicated, bounded (lifted.h).
 */
#include <stdio.h>
#include <string.h>
#include "lifted.h"

const char *lifted_base(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

void lifted_add(struct lift *L, const char *server, const char *tool, json_t *args)
{
	if (!args) {            /* out of memory: no event is an event lost, so refuse */
		L->overflow = true;
		return;
	}
	for (int i = 1; i < L->n; i++)
		if (!strcmp(L->out[i].server, server) && !strcmp(L->out[i].tool, tool) &&
		    json_equal(L->out[i].args, args)) {
			json_decref(args);
			return;
		}
	if (L->n >= POL_MAX_LIFTED) {
		L->overflow = true;
		json_decref(args);
		return;
	}
	snprintf(L->out[L->n].server, sizeof(L->out[L->n].server), "%s", server);
	snprintf(L->out[L->n].tool, sizeof(L->out[L->n].tool), "%s", tool);
	L->out[L->n++].args = args;
}

bool lifted_in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

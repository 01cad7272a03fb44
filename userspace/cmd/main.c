// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cordon: one binary, subcommands.
 */
#include <stdbool.h>
#include <string.h>
#include "doctor.h"
#include "home.h"
#include "instance.h"
#include "cmd.h"
#include "mcp_proxy.h"
#include "http_proxy.h"
#include "unix_connector.h"
#include "util.h"

#define CORDON_VERSION "0.1.0"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	bool instance;  /* serves a floor instance (instance.h): reads CORDON_INSTANCE */
};

static const struct command commands[] = {
	{ "run", cmd_run, "run an agent in a confined, supervised session", true },
	{ "pending", cmd_pending, "list operations waiting for a human", true },
	{ "approve", cmd_approve, "approve a pending operation (ID from `cordon pending`)", true },
	{ "deny", cmd_deny, "deny a pending operation", true },
	{ "intent", cmd_intent, "state what a session's agent may do: approves what it covers", true },
	{ "stop", cmd_stop, "stop a running session (its processes, then its cgroup)", true },
	{ "doctor", cmd_doctor, "measure what this kernel lets cordon enforce", false },
	{ "policy", cmd_policy, "check, explain and test policies", false },
	{ "floor", cmd_floor, "the pinned kernel floor: status, load, unload, gc", true },
	{ "audit", cmd_audit, "verify and show a session's tamper-evident audit log", false },
	{ "home", cmd_home, "review and apply what the agent changed in its copy-on-write home", false },
	{ "mcp-proxy", cmd_mcp_proxy, "the MCP proxy: every tool call judged by policy", true },
	{ "mcp-bridge", cmd_mcp_bridge, "inside a session: stdio to its MCP proxy", false },
	{ "http-proxy", cmd_http_proxy, "the egress broker: allowlisted hosts only, judged by policy", false },
	{ "connect", cmd_connect, "inside a session: stdin/stdout to HOST PORT via the egress broker", false },
	{ "unix-connector", cmd_unix_connector, "(started by run) a session's Unix connects, as its agent", false },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon [-v] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "  %-10s %s\n", "version", "print the version");
	fprintf(f, "\n`cordon COMMAND --help` describes each command.\n");
}

int main(int argc, char **argv)
{
	char why[256];
	int i = 1;

	while (i < argc && strcmp(argv[i], "-v") == 0) {
		log_set_verbose(log_verbose() + 1);
		i++;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[i], "version") || !strcmp(argv[i], "--version")) {
		printf("cordon %s\n", CORDON_VERSION);
		return 0;
	}
	for (size_t c = 0; c < ARRAY_SIZE(commands); c++) {
		if (strcmp(argv[i], commands[c].name))
			continue;
		/* Which floor it serves, fixed before it runs (instance.h). */
		if (commands[c].instance && instance_init(why, sizeof(why)) < 0) {
			log_err("%s", why);
			return 125;
		}
		return commands[c].fn(argc - i, argv + i);
	}
	log_err("unknown command '%s' (try `cordon --help`)", argv[i]);
	return 2;
}

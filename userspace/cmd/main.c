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

/*
 * SUBS: the subcommands, space-separated ("" for none); JSON: those of
 * them (or "-", the command itself) that report and so answer --json.
 * `cordon --commands` prints both, and tests/host/cli_consistency.sh holds
 * every line of it to the same rules (--help, --json, unknown options), so
 * a command added here cannot escape them; one missing here is missing
 * from `cordon help`, the man page check and the completions alike.
 */
struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *subs;
	const char *json;
	bool instance;          /* serves a floor instance (instance.h): reads CORDON_INSTANCE */
};

static int cmd_version(int argc, char **argv);

static const struct command commands[] = {
	{ "run", cmd_run, "run an agent in a confined, supervised session", "", "", true },
	{ "pending", cmd_pending, "list operations waiting for a human", "", "-", true },
	{ "approve", cmd_approve, "approve a pending operation (ID from `cordon pending`)", "", "", true },
	{ "deny", cmd_deny, "deny a pending operation", "", "", true },
	{ "intent", cmd_intent, "state what a session's agent may do: approves what it covers", "", "-", true },
	{ "stop", cmd_stop, "stop a running session (its processes, then its cgroup)", "", "", true },
	{ "doctor", cmd_doctor, "measure what this kernel lets cordon enforce", "", "-", false },
	{ "policy", cmd_policy, "check, explain and test policies",
	  "check explain test compile json draft", "check explain test", false },
	{ "floor", cmd_floor, "the pinned kernel floor: status, load, unload, gc",
	  "status load unload gc", "status gc", true },
	{ "audit", cmd_audit, "verify, show and prune sessions' tamper-evident audit logs",
	  "verify show prune", "verify show prune", false },
	{ "home", cmd_home, "review and apply what the agent changed in its copy-on-write home",
	  "diff apply discard", "diff", false },
	{ "mcp-proxy", cmd_mcp_proxy, "the MCP proxy: every tool call judged by policy", "", "", true },
	{ "mcp-bridge", cmd_mcp_bridge, "inside a session: stdio to its MCP proxy", "", "", false },
	{ "http-proxy", cmd_http_proxy, "the egress broker: allowlisted hosts only, judged by policy", "", "", false },
	{ "connect", cmd_connect, "inside a session: stdin/stdout to HOST PORT via the egress broker", "", "", false },
	{ "unix-connector", cmd_unix_connector, "(started by run) a session's Unix connects, as its agent", "", "", false },
	{ "version", cmd_version, "print the version", "", "-", false },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon [-v] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n`cordon help COMMAND` (or `cordon COMMAND --help`) describes each command.\n");
}

static int cmd_version(int argc, char **argv)
{
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: cordon version [--json]\nPrint cordon's version.\n");
			return 0;
		} else {
			log_err("version: unknown option '%s' (usage: cordon version [--json])", argv[i]);
			return 2;
		}
	}
	if (json)
		printf("{\"version\": \"%s\"}\n", CORDON_VERSION);
	else
		printf("cordon %s\n", CORDON_VERSION);
	return 0;
}

/* Is WORD one of the space-separated LIST? */
static bool in_list(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p; ) {
		size_t k = strcspn(p, " ");

		if (k == n && !strncmp(p, word, n))
			return true;
		p += k + (p[k] == ' ');
	}
	return false;
}

/*
 * `cordon --commands` (not in the usage: for tests and completions): one
 * line per command and per subcommand, "COMMAND[ SUB]", then a tab and
 * "--json" where it answers --json.
 */
static void list_commands(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		const struct command *c = &commands[i];

		if (!*c->subs) {
			printf("%s%s\n", c->name, !strcmp(c->json, "-") ? "\t--json" : "");
			continue;
		}
		for (const char *p = c->subs; *p; ) {
			size_t k = strcspn(p, " ");
			char sub[32];

			snprintf(sub, sizeof(sub), "%.*s", (int)k, p);
			printf("%s %s%s\n", c->name, sub, in_list(c->json, sub) ? "\t--json" : "");
			p += k + (p[k] == ' ');
		}
	}
}

static const struct command *find_command(const char *name)
{
	for (size_t c = 0; c < ARRAY_SIZE(commands); c++)
		if (!strcmp(name, commands[c].name))
			return &commands[c];
	return NULL;
}

/*
 * `cordon help COMMAND [SUB]`: the command's own --help, exactly (it used
 * to print the top-level usage whatever followed).
 */
static int help(int argc, char **argv)
{
	const struct command *c;
	char *args[4];
	int n = 0;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	c = find_command(argv[1]);
	if (!c || argc > 3 || (argc == 3 && !in_list(c->subs, argv[2]))) {
		log_err("help: no such command '%s%s%s' (try `cordon help`)", argv[1],
			argc > 2 ? " " : "", argc > 2 ? argv[2] : "");
		return 2;
	}
	args[n++] = argv[1];
	if (argc == 3)
		args[n++] = argv[2];
	args[n++] = (char *)"--help";
	args[n] = NULL;
	return c->fn(n, args);
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
	if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[i], "help"))
		return help(argc - i, argv + i);
	if (!strcmp(argv[i], "--commands")) {
		list_commands();
		return 0;
	}
	if (!strcmp(argv[i], "--version")) {
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

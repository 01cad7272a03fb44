// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * make demo, in the VM: the shipped coding-agent profile confining a real
 * shell running as the agent user, which tries what a prompt-injected agent
 * would.  Each attempt prints what the shell saw; then every event the
 * floor reported for the session, in order.  Not a test: tests/vm/ asserts
 * all of this; this shows it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgroup.h"
#include "floor.h"
#include "net.h"
#include "policy.h"

/* The agent's script: ordinary work first, then the attacks. */
static const char script[] =
	"try() { printf '%-58s' \"$1\"; shift; if \"$@\" >/dev/null 2>&1; then echo 'done'; "
	"else echo 'REFUSED'; fi; }\n"
	"cd /home/agent/project\n"
	"try 'read the workspace'                  cat README\n"
	"try 'edit the workspace'                  sh -c 'echo fix >> README'\n"
	"try 'build and run a program there'       sh -c 'cp /bin/busybox . && ./busybox true'\n"
	"try 'use /tmp'                            sh -c 'echo scratch > /tmp/scratch'\n"
	"try 'read ~/.ssh/id_ed25519'              cat /home/agent/.ssh/id_ed25519\n"
	"try 'read it through a symlink'           cat /home/agent/project/innocent-link\n"
	"try 'read it through a hardlink made earlier' cat /home/agent/project/old-hardlink\n"
	"try 'read /etc/shadow'                    cat /etc/shadow\n"
	"try 'persist in ~/.bashrc'                sh -c 'echo evil >> /home/agent/.bashrc'\n"
	"try 'drop a cron job'                     sh -c 'echo x > /etc/cron.d/evil'\n"
	"try 'rewrite /etc/passwd'                 sh -c 'echo x >> /etc/passwd'\n"
	"try 'exfiltrate to a loopback service'    sh -c 'echo secret | nc 127.0.0.1 7777'\n"
	"try 'DNS exfiltration (UDP 53)'           nslookup leak.example 8.8.8.8\n"
	"try 'signal a host process (pid 1)'       kill -0 1\n"
	"try 'mount something'                     mount -t tmpfs none /home/agent/project\n"
	"try 'leave the session cgroup'            sh -c \"echo $$ > /sys/fs/cgroup/cgroup.procs\"\n";

static int on_floor(void *ctx, const struct cordon_event *e)
{
	char path[PATH_MAX];

	if (e->decision == CORDON_ALLOW)
		return 0;
	floor_event_path(e, path, sizeof(path));
	printf("  %-8s %-12s %-14s uid %-5u %-10s %s\n", e->decision == CORDON_DENY ? "DENY" : "ESCALATE",
	       floor_op_name(e->op), floor_reason_name(e->reason), e->uid, e->comm, path);
	return 0;
}

static int on_net(void *ctx, const struct cordon_net_event *e)
{
	char line[512];

	if (e->decision == CORDON_ALLOW)
		return 0;
	net_event_str(e, line, sizeof(line));
	printf("  %-8s %-12s %-14s uid %-5u %-10s %s\n", "DENY", net_op_name(e->op),
	       net_reason_name(e->reason), e->uid, e->comm, line);
	return 0;
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		close(fd);
	}
}

int main(void)
{
	struct pol_vars vars = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;
	struct floor *f = NULL;
	struct floor_session *s = NULL;
	struct net *n = NULL;
	int r, st;
	pid_t c;

	/*
	 * The agent's world: a project in its home, a key worth stealing, and
	 * two ways to it prepared before the session (a symlink and a hardlink
	 * in the project; all the agent's own files, so DAC would allow them).
	 */
	mkdir("/home/agent/project", 0755);
	mkdir("/home/agent/.ssh", 0700);
	mkdir("/etc/cron.d", 0755);
	put("/home/agent/.ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n", 0600);
	put("/home/agent/.bashrc", "# agent's shell\n", 0644);
	put("/home/agent/project/README", "the project\n", 0644);
	if (symlink("/home/agent/.ssh/id_ed25519", "/home/agent/project/innocent-link") &&
	    errno != EEXIST)
		perror("symlink");
	if (link("/home/agent/.ssh/id_ed25519", "/home/agent/project/old-hardlink") && errno != EEXIST)
		perror("link");
	if (chown("/home/agent/project", 1000, 1000) || chown("/home/agent/project/README", 1000, 1000) ||
	    chown("/home/agent/.ssh", 1000, 1000) || chown("/home/agent/.ssh/id_ed25519", 1000, 1000) ||
	    chown("/home/agent/.bashrc", 1000, 1000))
		perror("chown");

	pol_vars_set(&vars, "WORKSPACE", "/home/agent/project");
	pol_vars_set(&vars, "HOME", "/home/agent");
	pol_vars_set(&vars, "TMPDIR", "/tmp");
	r = pol_load("coding-agent", &vars, &p, &ds);
	if (r) {
		fprintf(stderr, "demo: coding-agent profile: %s\n", strerror(-r));
		return 1;
	}
	r = floor_open(&f);
	if (r) {
		fprintf(stderr, "demo: the BPF LSM floor did not load: %s\n", strerror(-r));
		return 1;
	}
	r = net_open(&n);
	if (r) {
		fprintf(stderr, "demo: the network floor did not load: %s\n", strerror(-r));
		return 1;
	}
	r = floor_session_create(f, p, "demo", &s);
	r = r ?: net_session_add(n, floor_session_id(s), p, 0);
	if (r) {
		fprintf(stderr, "demo: session: %s\n", strerror(-r));
		return 1;
	}
	printf("A session under the shipped coding-agent profile: workspace /home/agent/project,\n"
	       "HOME /home/agent (its .ssh holds a key). The agent is a shell, uid 1000:\n\n");
	fflush(stdout);
	c = fork();
	if (c == 0) {
		if (cg_attach_pid(floor_session_cgroup(s), getpid()) < 0 ||
		    setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
			_exit(125);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	waitpid(c, &st, 0);
	printf("\nWhat the kernel floor reported for the session (denials):\n");
	for (int i = 0; i < 10; i++)
		floor_session_poll(s, 50, on_floor, NULL);
	net_poll(n, 50, on_net, NULL);
	floor_session_destroy(f, s);
	floor_close(f);
	net_close(n);
	pol_free(p);
	pol_vars_free(&vars);
	return 0;
}

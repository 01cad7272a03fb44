// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Structural invariants: what no policy can allow.  They live here, in C,
 * and not in a profile, so that a policy written carelessly (or by the
 * agent, if it ever reached the policy) cannot relax them.
 *
 * Closed: writes to cordon's own files and to the kernel's control surfaces
 * (BPF, cgroups, sysctl, boot); any access to memory and raw block devices,
 * container-engine sockets (root on the host by another name) and the usual
 * credential stores of the agent user, of root and of every /home user.
 * Renaming or deleting a directory that holds a protected path is refused
 * too, so a protected path cannot be moved out from under its pattern.
 *
 * Not closed here: a credential store at an unusual path; the policy must
 * name it.  Hardlinks to protected files are an object question: the BPF
 * LSM floor checks protected inodes wherever they are reached from; the
 * fallback posture cannot (cordon doctor says so).
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include "policy.h"
#include "util.h"

#define W (CORDON_FS_WRITE | CORDON_FS_CREATE | CORDON_FS_DELETE | CORDON_FS_CHMOD)
#define A CORDON_FS_ALL

/*
 * A credential store's class: the store itself and the names tools derive
 * from it, which hold the same secrets (or the previous ones): a backup or
 * temporary copy by suffix (shadow-, shadow+, .netrc~, and every
 * dot-suffix: .bak, .old, .lock, .tmp, .swp, .save, .orig, .dpkg-old,
 * .dpkg-dist, .rpmsave...), a vi swap file (.NAME.swp, .swo...) and an
 * Emacs auto-save (#NAME#).  Patterns, expanded against the filesystem when
 * the session starts (each existing match protected by inode).
 * What this cannot close: a copy made later, or under a name no pattern
 * derives (cp /etc/shadow /tmp/x by the host); and the policy engine
 * matches a pattern at request time in the fallback posture only.
 */
#define CLASS(id, dir, name, why) \
	{ id, dir name, A, why }, \
	{ id, dir name "[-+~]", A, why " (a backup)" }, \
	{ id, dir name ".*", A, why " (a backup, lock or temporary copy)" }, \
	{ id, dir "." name ".sw[a-p]", A, why " (an editor's swap file)" }, \
	{ id, dir "#" name "#", A, why " (an editor's auto-save)" }

#define CRED(rel) \
	CLASS("credential-store", "${HOME}/", rel, "a credential store"), \
	CLASS("credential-store", "/root/", rel, "a credential store"), \
	CLASS("credential-store", "/home/*/", rel, "a credential store"),

/*
 * The credential stores below a home, each once: the invariants below deny
 * them for the agent user, root and every /home user, and the agent's home
 * layer (userspace/session/home.c) leaves them out of its view.
 */
#define CRED_STORES(X) \
	X(".ssh") \
	X(".aws") \
	X(".gnupg") \
	X(".config/gcloud") \
	X(".netrc") \
	X(".docker/config.json") \
	X(".kube") \
	X(".azure") \
	X(".config/gh") \
	X(".config/hub") \
	X(".git-credentials") \
	X(".npmrc") \
	X(".pypirc") \
	X(".cargo/credentials") \
	X(".cargo/credentials.toml") \
	X(".password-store") \
	X(".vault-token") \
	X(".terraform.d/credentials.tfrc.json") \
	X(".config/op") \
	X(".local/share/keyrings") \
	X(".pgpass") \
	X(".my.cnf") \
	X(".boto") \
	X(".s3cfg") \
	X(".config/rclone") \
	X(".mozilla") \
	X(".config/google-chrome") \
	X(".config/chromium") \
	X(".gem/credentials") \
	X(".m2/settings-security.xml")

static const struct pol_invariant table[] = {
	/* The kernel's control surfaces and cordon's own state. */
	{ "bpffs", "/sys/fs/bpf", A, "BPF objects, cordon's maps among them" },
	{ "cgroupfs", "/sys/fs/cgroup", W, "cgroups: a session must not leave or resize its own" },
	{ "sysfs", "/sys", W, "kernel and device settings" },
	{ "sysctl", "/proc/sys", W, "kernel settings" },
	{ "sysrq", "/proc/sysrq-trigger", A, "magic SysRq" },
	{ "kcore", "/proc/kcore", A, "kernel memory" },
	{ "boot", "/boot", W, "the kernel and boot loader" },
	{ "cordon-etc", "/etc/cordon", A, "cordon's configuration and keys" },
	{ "cordon-run", "/run/cordon", A, "cordon's sockets and session state" },
	/*
	 * The sessions' MCP sockets: no session may create, remove, rename or
	 * re-mode anything there.  Connecting (write on a socket) is left to
	 * the per-session grant of exactly its own socket (cordon run --mcp).
	 */
	{ "cordon-mcp", "/run/cordon-mcp", CORDON_FS_CREATE | CORDON_FS_DELETE | CORDON_FS_CHMOD,
	  "the MCP sockets of cordon sessions" },
	{ "cordon-lib", "/var/lib/cordon", A, "cordon's state" },
	{ "cordon-log", "/var/log/cordon", A, "cordon's audit logs" },
	/* Memory and raw devices. */
	{ "dev-mem", "/dev/mem", A, "physical memory" },
	{ "dev-mem", "/dev/kmem", A, "kernel memory" },
	{ "dev-mem", "/dev/port", A, "I/O ports" },
	{ "dev-mem", "/dev/cpu", A, "MSRs and CPUID" },
	{ "dev-kmsg", "/dev/kmsg", W, "the kernel log" },
	{ "dev-block", "/dev/sd*", A, "a raw block device" },
	{ "dev-block", "/dev/vd*", A, "a raw block device" },
	{ "dev-block", "/dev/xvd*", A, "a raw block device" },
	{ "dev-block", "/dev/hd*", A, "a raw block device" },
	{ "dev-block", "/dev/nvme*", A, "a raw block device" },
	{ "dev-block", "/dev/mmcblk*", A, "a raw block device" },
	{ "dev-block", "/dev/dm-*", A, "a raw block device" },
	{ "dev-block", "/dev/md*", A, "a raw block device" },
	{ "dev-block", "/dev/loop*", A, "a raw block device" },
	{ "dev-block", "/dev/nbd*", A, "a raw block device" },
	{ "dev-block", "/dev/sg*", A, "a raw SCSI device" },
	{ "dev-block", "/dev/mapper", A, "raw block devices" },
	{ "dev-block", "/dev/disk", A, "raw block devices" },
	/* Container engines: their sockets are root on the host. */
	{ "container-socket", "/run/docker.sock", A, "the Docker socket" },
	{ "container-socket", "/var/run/docker.sock", A, "the Docker socket" },
	{ "container-socket", "/run/containerd", A, "containerd" },
	{ "container-socket", "/var/run/containerd", A, "containerd" },
	{ "container-socket", "/run/podman", A, "the Podman socket" },
	{ "container-socket", "/run/crio", A, "CRI-O" },
	{ "container-socket", "/var/run/crio", A, "CRI-O" },
	{ "container-socket", "/run/buildkit", A, "BuildKit" },
	{ "container-socket", "/run/k3s", A, "k3s" },
	{ "container-socket", "/run/user/*/docker.sock", A, "a rootless Docker socket" },
	{ "container-socket", "/run/user/*/podman", A, "a rootless Podman socket" },
	{ "container-socket", "/var/lib/docker", A, "Docker's state" },
	{ "container-socket", "/var/lib/kubelet", A, "the kubelet's state" },
	/* System secrets. */
	CLASS("system-secret", "/etc/", "shadow", "password hashes"),
	CLASS("system-secret", "/etc/", "gshadow", "password hashes"),
	CLASS("system-secret", "/etc/", "sudoers", "sudo configuration"),
	CLASS("system-secret", "/etc/security/", "opasswd", "old password hashes"),
	{ "system-secret", "/etc/nshadow", A, "password hashes (a temporary copy)" },
	{ "system-secret", "/etc/ngshadow", A, "password hashes (a temporary copy)" },
	/* lckpwdf's lock: a session holding it blocks every password change. */
	{ "system-secret", "/etc/.pwd.lock", A, "the password files' lock" },
	{ "system-secret", "/etc/sudoers.d", A, "sudo configuration" },
	{ "system-secret", "/etc/ssh/ssh_host_*_key", A, "an SSH host key" },
	{ "system-secret", "/etc/ssl/private", A, "TLS private keys" },
	/* Credential stores, for the agent user, root and every /home user. */
	CRED_STORES(CRED)
	{ NULL, NULL, 0, NULL },
};

const struct pol_invariant *pol_invariants(void)
{
	return table;
}

#define CRED_NAME(rel) rel,
static const char *const cred_stores[] = { CRED_STORES(CRED_NAME) NULL };

const char *const *pol_credential_stores(void)
{
	return cred_stores;
}

/* Expand a leading ${HOME} of a pattern; false if HOME is unknown. */
static bool expand(const struct policy *p, const char *pattern, char *out, size_t len)
{
	const char *home;

	if (strncmp(pattern, "${HOME}", 7) != 0) {
		snprintf(out, len, "%s", pattern);
		return true;
	}
	home = pol_vars_get(&p->vars, "HOME");
	if (!home || home[0] != '/')
		return false;
	return (size_t)snprintf(out, len, "%s%s", home, pattern + 7) < len;
}

const char *pol_invariant_fs(const struct policy *p, const char *path, uint32_t right,
			     const char **why)
{
	char pat[4096];
	enum pol_glob_rel rel;

	for (size_t i = 0; i < p->n_protected; i++)
		if ((right & W) && pol_path_within(path, p->protected[i])) {
			*why = "cordon's own file (policy, audit log, socket or state)";
			return "cordon-self";
		}
	for (const struct pol_invariant *inv = table; inv->id; inv++) {
		if (!expand(p, inv->pattern, pat, sizeof(pat)))
			continue;
		if (!(inv->denied & right))
			continue;
		rel = pol_glob_rel(path, pat);
		if (rel == POL_GLOB_WITHIN) {
			*why = inv->why;
			return inv->id;
		}
		/*
		 * Deleting or renaming an ancestor would move a protected path
		 * out from under its pattern.
		 */
		if (rel == POL_GLOB_ANCESTOR && right == CORDON_FS_DELETE) {
			*why = "a directory holding a protected path";
			return inv->id;
		}
	}
	for (size_t i = 0; i < p->n_protected; i++)
		if (right == CORDON_FS_DELETE &&
		    pol_glob_rel(path, p->protected[i]) == POL_GLOB_ANCESTOR) {
			*why = "a directory holding cordon's own files";
			return "cordon-self";
		}
	return NULL;
}

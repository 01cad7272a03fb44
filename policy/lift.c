// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Semantic lifting of an exec: what `git push -f origin main` means, so that
 * one tool rule (`git.push`) judges it exactly as it judges an MCP git
 * server's push.  argv, cwd and the workspace in, JSON events out.
 *
 * Recognisers read argv the way the program itself does, from its option
 * table (see "reading argv"); an option not in the table is read both ways,
 * so a deny rule still matches.  A lifted event only adds to a decision (it
 * can escalate or deny what the floor allows, never allow), so reading too
 * much is safe and reading too little is not.  An exec meaning more events
 * than POL_MAX_LIFTED has none and is refused.
 *
 * Here the entry point (pol_lift_exec, policy.h) picks the recogniser by
 * the program's name: lift_git.c, lift_pkg.c (npm, pip, python and the
 * publishers), lift_fetch.c (curl, wget).  They read argv with scan.c and
 * add what they find through lifted.c; event strings go through text.c.
 *
 * Every way to push or publish, and what judges it:
 *
 *   way                                       lifted to, or refused by
 *   git push (options, -c aliases, the        git.push {remote, branch, force}, one
 *     dashed git-push, global options)          per refspec; force: -f, --force-with-
 *                                               lease, --mirror, -d, --prune, +SRC,
 *                                               :DST, -c remote.X.push=+..., an
 *                                               option git push has and we do not know
 *   git send-pack DEST                        git.push {via: send-pack} (not with
 *                                               --stateless-rpc: a helper's half)
 *   git http-push, svn dcommit|set-tree,      git.push {via: SUB}
 *     p4 submit, send-email, imap-send,
 *     cvsexportcommit
 *   a fetch from the remote's side: fetch,    git.push {remote: that repository,
 *     pull, fetch-pack, remote update|add,      source, branch, via} when the repository
 *     bundle unbundle run in a repository       (--git-dir, --work-tree, --bare, -C,
 *     outside the workspace                     cwd; canonical, symlinks followed) is
 *                                               outside the workspace.  A pull so run
 *                                               asks twice (it runs git fetch).
 *   git SUB, SUB not a git command            git.push {via: alias, command}: an alias
 *                                               argv does not show may push
 *   a copy into another repository: cp into   the floor: each writes that repository
 *     its .git, git-receive-pack DIR,           as cp would, and the floor judges every
 *     unpack-objects, index-pack, hash-object   write outside the workspace (shipped
 *     -w, update-ref, commit run there; git     profiles: the session's /tmp is its own,
 *     bundle create + cp; git clone WS ELSE     the home a layer, nothing else is
 *                                               writable).  Not lifted: git runs receive-
 *                                               pack and unpack-objects itself for every
 *                                               local push, which would ask twice.
 *                                               tests/host/push_ways.sh proves both.
 *   git-upload-pack DIR                       reads only: the source side of a fetch
 *   git-remote-http(s), -ftp(s), -ext, -fd    the network layer (a host not on the
 *     run directly                              egress list is refused; in an allowed
 *                                               TLS tunnel a push is opaque).  Not
 *                                               lifted: the same helper serves fetches.
 *   ssh HOST git-receive-pack                 the network floor (no shipped rule has
 *                                               port 22) and ~/.ssh's invariant
 *   npm|pnpm|yarn|bun publish, unpublish,     npm.publish {manager, action}
 *     deprecate, dist-tag add|rm|set, owner
 *     add|rm, access set|grant|revoke,
 *     yarn npm publish
 *   twine upload|register, python -m twine,   pip.publish {via, action} (pip itself
 *     setup.py upload|register, flit,           has no publishing command)
 *     poetry, hatch, uv, pdm publish
 *   cargo publish|yank|owner;                 cargo.publish; gem.publish
 *     gem push|yank|owner
 *   npx, npm exec|run, make, sh -c...         the inner command is an exec of its own,
 *                                               lifted there
 *   curl or wget to a registry's API          http.fetch {url, method}, and the egress
 *                                               broker's http.request by host
 *
 * What it cannot close: what argv does not hold.  GIT_DIR, GIT_WORK_TREE and
 * GIT_CONFIG_* in the environment (a fetch into another repository, an
 * alias, a forcing refspec), configuration files (~/.curlrc, .wgetrc, an
 * included git config, .npmrc), URLs in a file (curl -K, wget -i: the event
 * names the file as url_file, which a rule without conditions matches and a
 * rule on the host cannot).  There, as for a renamed copy of git or a script
 * speaking the protocol, the floor and the network layer are the
 * containment: each is judged by what it writes and whom it reaches.
 */
#include <string.h>
#include "lift_fetch.h"
#include "lift_git.h"
#include "lift_pkg.h"
#include "lifted.h"
#include "policy.h"

/* --- the entry point ----------------------------------------------------------- */

int pol_lift_exec(const char *const *argv, const char *cwd, const char *workspace,
		  struct pol_lifted *out)
{
	struct lift L = { .out = out, .cwd = cwd, .workspace = workspace };
	json_t *av = json_array();
	const char *prog;
	int argc = 0;

	memset(out, 0, sizeof(*out) * POL_MAX_LIFTED);
	if (argv)
		for (; argv[argc]; argc++)
			json_array_append_new(av, pol_json_text(argv[argc]));
	lifted_add(&L, "shell", "exec",
		   json_pack("{s:o,s:o}", "argv", av, "cwd", pol_json_text(cwd ? cwd : "")));
	if (L.n == 0)
		return 0;
	if (argc == 0)
		return L.n;
	prog = lifted_base(argv[0]);
	if (!strcmp(prog, "git") || !strncmp(prog, "git-", 4))
		lift_git(&L, prog, argv, argc);
	else if (!strcmp(prog, "npm") || !strcmp(prog, "pnpm") || !strcmp(prog, "yarn") ||
		 !strcmp(prog, "bun"))
		lift_pkg_npm(&L, prog, argv, argc);
	else if (!strncmp(prog, "pip", 3))
		lift_pkg_pip(&L, argv, argc);
	else if (!strncmp(prog, "python", 6))
		lift_pkg_python(&L, argv, argc);
	else if (lift_pkg_is_publisher(prog))
		lift_pkg_publisher(&L, prog, argv, argc);
	else if (!strcmp(prog, "curl") || !strcmp(prog, "wget"))
		lift_fetch(&L, prog, argv, argc);
	if (L.overflow) {
		/* More than we can judge, or out of memory: no event, so the exec is refused. */
		pol_lifted_free(out, L.n);
		return 0;
	}
	return L.n;
}

bool pol_lift_known(const char *prog)
{
	static const char *const exact[] = { "npm", "pnpm", "yarn", "bun", "curl", "wget", NULL };

	prog = lifted_base(prog);
	return lifted_in_list(prog, exact) || lift_pkg_is_publisher(prog) || !strcmp(prog, "git") ||
	       !strncmp(prog, "git-", 4) || !strncmp(prog, "pip", 3) || !strncmp(prog, "python", 6);
}

void pol_lifted_free(struct pol_lifted *l, int n)
{
	for (int i = 0; i < n; i++) {
		json_decref(l[i].args);
		l[i].args = NULL;
	}
}

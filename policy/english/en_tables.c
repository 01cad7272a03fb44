// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The constitution's tables: named sets of files, the known LLM credentials
 * (exactly as the coding-agent profile has them), and the example sentences
 * an error's "did you mean" picks from (docs/constitution.md shows them all).
 */
#include <stddef.h>
#include "en_int.h"

const struct en_named_set en_named_sets[] = {
	{ "my ssh keys", { "${HOME}/.ssh" } },
	{ "ssh keys", { "${HOME}/.ssh" } },
	{ "cloud credentials", { "${HOME}/.aws", "${HOME}/.config/gcloud", "${HOME}/.azure",
				 "${HOME}/.kube" } },
	{ "my cloud credentials", { "${HOME}/.aws", "${HOME}/.config/gcloud", "${HOME}/.azure",
				    "${HOME}/.kube" } },
	{ "my gpg keys", { "${HOME}/.gnupg" } },
	{ "gpg keys", { "${HOME}/.gnupg" } },
	{ "the shell's start-up files", { "${HOME}/.bashrc", "${HOME}/.bash_profile",
					  "${HOME}/.bash_login", "${HOME}/.bash_logout",
					  "${HOME}/.profile", "${HOME}/.zshrc", "${HOME}/.zshenv",
					  "${HOME}/.zprofile", "${HOME}/.zlogin" } },
	{ "git credentials", { "${HOME}/.git-credentials" } },
	{ "my git credentials", { "${HOME}/.git-credentials" } },
	{ "package registry tokens", { "${HOME}/.npmrc", "${HOME}/.pypirc" } },
	{ "system directories", { "/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt" } },
	{ "the system directories", { "/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt" } },
	{ NULL, { NULL } },
};

const struct en_known_cred en_known_creds[] = {
	{ "anthropic",
	  "{\"name\": \"anthropic\", \"env\": \"ANTHROPIC_API_KEY\", "
	  "\"source\": {\"env\": \"ANTHROPIC_API_KEY\"}, \"hosts\": [\"api.anthropic.com\"], "
	  "\"header\": \"x-api-key\", \"endpoints\": [\"POST /v1/messages\", "
	  "\"POST /v1/messages/count_tokens\", \"GET /v1/models*\"]}" },
	{ "openai",
	  "{\"name\": \"openai\", \"env\": \"OPENAI_API_KEY\", "
	  "\"source\": {\"env\": \"OPENAI_API_KEY\"}, \"hosts\": [\"api.openai.com\"], "
	  "\"header\": \"authorization\", \"prefix\": \"Bearer \", \"endpoints\": "
	  "[\"POST /v1/chat/completions\", \"POST /v1/responses\", \"POST /v1/responses/compact\", "
	  "\"GET /v1/models*\"]}" },
	{ "gemini",
	  "{\"name\": \"gemini\", \"env\": \"GEMINI_API_KEY\", "
	  "\"source\": {\"env\": \"GEMINI_API_KEY\"}, "
	  "\"hosts\": [\"generativelanguage.googleapis.com\"], \"header\": \"x-goog-api-key\", "
	  "\"endpoints\": [\"POST /v1beta/models/*:streamGenerateContent\", "
	  "\"POST /v1beta/models/*:generateContent\", \"POST /v1beta/models/*:countTokens\", "
	  "\"GET /v1beta/models*\"]}" },
	{ NULL, NULL },
};

const char *const en_examples[] = {
	"The agent may read and change anything in the workspace.",
	"The agent may read /etc.",
	"The agent may read, write and run anything in the workspace except files named .env.",
	"The agent may not read /etc/shadow.",
	"Never read my SSH keys or cloud credentials.",
	"Never change the shell's start-up files.",
	"Do not let the agent delete anything in my home.",
	"The agent may reach github.com over HTTPS.",
	"The agent may connect to 10.0.0.0/8 on port 5432 directly.",
	"The agent may reach any subdomain of example.com on ports 8000 to 8100.",
	"Never reach evil.example.com.",
	"Ask me before any git push.",
	"Never allow a force push.",
	"Ask me before a push to the branch main.",
	"Ask me before publishing any package.",
	"Ask me before installing packages.",
	"The agent may fetch URLs from example.com.",
	"The agent may call filesystem.read_file when path is within the workspace.",
	"The agent may use the filesystem tools when path is within the workspace.",
	"The agent may write /srv/data only with my approval.",
	"Use my Anthropic key for api.anthropic.com.",
	"Use the secret in $GITHUB_TOKEN for api.github.com in the header authorization with the "
	"prefix \"Bearer \" only for GET /repos/*.",
	"Code hosts are github.com and gitlab.com.",
	"Stop after 4 hours or 200 dollars.",
	"Stop after 20000 steps.",
	"Tokens cost 15 dollars per million.",
	"Use at most 8 GB of memory, 1024 processes and 2 CPUs.",
	"Wait 2 minutes for my answer, then deny.",
	"This policy is called my-project.",
	"About this policy: what the agent may do in my project.",
	NULL,
};

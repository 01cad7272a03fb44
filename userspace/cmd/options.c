// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A command's long options (options.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>

#include "options.h"

int options_parse(int argc, char **argv, const struct cmd_option *opts, void (*usage)(FILE *f))
{
	struct option lo[CMD_OPTIONS_MAX + 2] = {};
	int n = 0, c;

	for (; opts[n].name; n++) {
		if (n == CMD_OPTIONS_MAX)
			return -E2BIG;
		lo[n] = (struct option){ opts[n].name,
					 opts[n].value ? required_argument : no_argument, NULL,
					 n + 1 };
	}
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c < 1 || c > n) {
			usage(stderr);
			return -EINVAL;
		}
		if (opts[c - 1].value)
			*opts[c - 1].value = optarg;
		else
			*opts[c - 1].flag = true;
	}
	return 0;
}

/*
 * Print agent-controlled text so that it cannot drive the terminal of the
 * person reviewing it (an audit log, the names in a home layer): C0 and C1
 * controls become \xNN, and characters that reorder or hide text (bidi
 * overrides and isolates, zero-width characters, BOM) become \u{NNNN}.
 * Invalid UTF-8 is shown as \xNN.
 */
void cmd_put_safe(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned cp, len;

		if (p[i] < 0x80) {
			if (p[i] < 0x20 || p[i] == 0x7f)
				fprintf(f, "\\x%02x", p[i]);
			else
				fputc(p[i], f);
			i++;
			continue;
		}
		len = p[i] >= 0xf0 ? 4 : p[i] >= 0xe0 ? 3 : p[i] >= 0xc0 ? 2 : 0;
		if (len == 0 || p[i] > 0xf4 || i + len > n) {
			fprintf(f, "\\x%02x", p[i++]);
			continue;
		}
		cp = p[i] & (0x7f >> len);
		for (unsigned k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80) {
				len = 0;
				break;
			}
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (len == 0) {
			fprintf(f, "\\x%02x", p[i++]);
			continue;
		}
		if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
		    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff)
			fprintf(f, "\\u{%04x}", cp);
		else
			fwrite(p + i, 1, len, f);
		i += len;
	}
}

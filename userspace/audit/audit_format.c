// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The audit log format's primitives (audit_format.h). */
#define _GNU_SOURCE
/* SHA256_* (see audit_format_sha256() below): deprecated in OpenSSL 3, kept on purpose. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include "audit_format.h"
#include "util.h"

/* Lower-case hex only: an upper-case copy of a digest is another line. */
int audit_format_hex_decode(const char *s, size_t n, unsigned char *out)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;

		for (int k = 0; k < 2; k++) {
			char c = s[2 * i + k];

			if (c >= '0' && c <= '9')
				v = v * 16 + (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + (unsigned)(c - 'a' + 10);
			else
				return -EINVAL;
		}
		out[i] = (unsigned char)v;
	}
	return 0;
}

/*
 * SHA-256 and HMAC-SHA256 (RFC 2104) on OpenSSL's SHA-256 primitive rather
 * than EVP: the EVP route loads and initialises OpenSSL 3's provider on
 * first use, about 1.3 ms of every `cordon run` start; the primitive is the
 * same code without the fetch.  (OpenSSL marks the SHA256_* functions
 * deprecated in favour of EVP; they remain part of its API.)
 */
int audit_format_sha256(const void *p, size_t n, unsigned char out[AUDIT_HASH_LEN])
{
	SHA256_CTX c;

	if (!SHA256_Init(&c) || !SHA256_Update(&c, p, n) || !SHA256_Final(out, &c))
		return -EIO;
	return 0;
}

int audit_format_hmac256(const unsigned char key[AUDIT_KEY_LEN], const void *p, size_t n,
		   unsigned char out[AUDIT_HASH_LEN])
{
	unsigned char ipad[SHA256_CBLOCK], opad[SHA256_CBLOCK], inner[AUDIT_HASH_LEN];
	SHA256_CTX c;
	int ok;

	memset(ipad, 0x36, sizeof(ipad));
	memset(opad, 0x5c, sizeof(opad));
	for (size_t i = 0; i < AUDIT_KEY_LEN; i++) {     /* the key is shorter than a block */
		ipad[i] ^= key[i];
		opad[i] ^= key[i];
	}
	ok = SHA256_Init(&c) && SHA256_Update(&c, ipad, sizeof(ipad)) &&
	     SHA256_Update(&c, p, n) && SHA256_Final(inner, &c) &&
	     SHA256_Init(&c) && SHA256_Update(&c, opad, sizeof(opad)) &&
	     SHA256_Update(&c, inner, sizeof(inner)) && SHA256_Final(out, &c);
	OPENSSL_cleanse(ipad, sizeof(ipad));
	OPENSSL_cleanse(opad, sizeof(opad));
	OPENSSL_cleanse(inner, sizeof(inner));
	OPENSSL_cleanse(&c, sizeof(c));
	return ok ? 0 : -EIO;
}

int audit_format_chain_start(const char *session, unsigned char out[AUDIT_HASH_LEN])
{
	_cleanup_free_ char *s = NULL;

	if (asprintf(&s, "%s%s", AUDIT_CHAIN_TAG, session) < 0)
		return -ENOMEM;
	return audit_format_sha256(s, strlen(s), out);
}

/* The session names a file: no separators, no dot files, no "..". */
bool audit_format_session_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > AUDIT_SESSION_MAX ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int audit_key_path_for(const char *key_dir, const char *session, char **out)
{
	if (!session || !audit_format_session_valid(session))
		return -EINVAL;
	if (asprintf(out, "%s/%s.key", key_dir ? key_dir : AUDIT_KEY_DIR, session) < 0)
		return -ENOMEM;
	return 0;
}

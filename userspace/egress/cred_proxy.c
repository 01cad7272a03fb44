// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The credential proxy: the agent holds a worthless sentinel, the host side
 * holds the key.
 *
 * What it closes:
 *   - The key in the sandbox: the agent's environment carries only a
 *     sentinel (192 random bits, "cordon-sentinel-" prefix); the real
 *     secret is read here, outside the session, by a process that is not
 *     dumpable (no core, no /proc/PID/mem or environ for a process without
 *     CAP_SYS_PTRACE), whose memory is locked (never in swap), and whose
 *     inherited environment block is wiped once read.  It is never logged:
 *     reasons name credentials, never values.
 *   - The key anywhere else: it is added only to requests on a TLS tunnel
 *     cordon terminated for a credential host, after the request's method
 *     and path are on the credential's endpoint allowlist (paths with dot
 *     segments, encoded separators or backslashes refused, so "/v1/models/
 *     ../admin" is not "GET /v1/models*"), its Host is the tunnel's, no
 *     field asks the upstream to take another method, path or host
 *     (X-HTTP-Method-Override, X-Original-URL, Forwarded, ...), and the
 *     credential header holds this session's sentinel (compared in constant
 *     time); it then goes upstream over TLS verified for that host against
 *     the system store.  A sentinel that leaks is worth nothing outside
 *     this session's proxy.
 *   - The key coming back: responses are asked for in identity encoding
 *     and scrubbed of every secret as they stream (same-length mask, so
 *     framing holds); a compressed response is refused, not passed
 *     unscrubbed.
 *   - The session CA: its key never leaves this process; the certificate
 *     carries name constraints permitting only the credential hosts, so even
 *     a stolen CA could not mint a certificate for another name.
 * What it cannot close: an upstream that echoes the key encoded (base64,
 *   URL-encoded, partial) gets through the scrubber; what the agent does
 *   with a permitted endpoint (its prompts, its spending) is the budgets'
 *   and the policy's business.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "cred_proxy.h"
#include "util.h"

#define CA_DAYS 7
#define MAX_LEAVES 64

extern char **environ;

struct cred_slot {
	const struct pol_credential *cr;
	char *secret;           /* NULL: none on this host */
	size_t secret_len;
	char sentinel[CRED_SENTINEL_LEN + 1];
	SSL_CTX *up;            /* its gateway's CA (upstream_ca); NULL: the shared one */
};

struct leaf {
	char host[256];
	SSL_CTX *ctx;
};

struct creds {
	struct cred_slot *v;
	size_t n;
	EVP_PKEY *ca_key;       /* never leaves this process */
	X509 *ca;
	EVP_PKEY *leaf_key;     /* one key for every leaf */
	SSL_CTX *up;            /* toward the upstream, verifying */
	bool store_pending;     /* the system's CAs: loaded at the first upstream connection */
	int store_err;
	/*
	 * SSL_CERT_FILE's bundle, opened at the start: the broker gives root up
	 * once started (http_proxy.c), and the file may be readable by root
	 * only.  -1: not named, or (store_open_err) not opened.
	 */
	int store_fd, store_open_err;
	pthread_mutex_t lock;   /* leaves, the store */
	struct leaf leaves[MAX_LEAVES];
	size_t n_leaves;
};

static void ssl_why(char *why, size_t wlen, const char *what)
{
	unsigned long e = ERR_get_error();
	char b[256] = "";

	if (e)
		ERR_error_string_n(e, b, sizeof(b));
	ERR_clear_error();
	snprintf(why, wlen, "%s%s%s", what, b[0] ? ": " : "", b);
}

/* --- secrets -------------------------------------------------------------------- */

/*
 * Take NAME's value from the environment and wipe it in place: the
 * environment block is what /proc/PID/environ shows, and unsetenv alone
 * leaves the bytes there.
 */
static char *take_env(const char *name)
{
	size_t nl = strlen(name);
	char *v = NULL;

	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, name, nl) || (*e)[nl] != '=')
			continue;
		if (!v && (*e)[nl + 1])
			v = strdup(*e + nl + 1);
		explicit_bzero(*e + nl + 1, strlen(*e + nl + 1));
	}
	(void)unsetenv(name);
	return v;
}

void creds_wipe_env(const char *name)
{
	char *v = take_env(name);

	if (v) {
		explicit_bzero(v, strlen(v));
		free(v);
	}
}

void creds_wipe_sources(const struct policy *pol)
{
	for (size_t i = 0; i < pol->n_creds; i++)
		if (pol->creds[i].source_env)
			creds_wipe_env(pol->creds[i].source_env);
}

static char *take_file(const char *path)
{
	char *v = NULL;

	if (read_file(path, &v, 65536) < 0)
		return NULL;
	v[strcspn(v, "\r\n")] = '\0';
	if (!*v) {
		free(v);
		return NULL;
	}
	return v;
}

static int make_sentinel(char *out)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned char r[24];
	char *p = out + sizeof(CRED_SENTINEL_PREFIX) - 1;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	memcpy(out, CRED_SENTINEL_PREFIX, sizeof(CRED_SENTINEL_PREFIX) - 1);
	for (size_t i = 0; i < sizeof(r); i += 3) {
		uint32_t w = (uint32_t)r[i] << 16 | (uint32_t)r[i + 1] << 8 | r[i + 2];

		*p++ = b64[w >> 18 & 63];
		*p++ = b64[w >> 12 & 63];
		*p++ = b64[w >> 6 & 63];
		*p++ = b64[w & 63];
	}
	*p = '\0';
	explicit_bzero(r, sizeof(r));
	return 0;
}

/*
 * No core dump, no /proc/PID/{mem,environ} for anyone without
 * CAP_SYS_PTRACE, memory never swapped (where the limit allows; locking is
 * best effort, the rest is not).
 */
static int harden_process(const char *who)
{
	struct rlimit no = { 0, 0 };

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || setrlimit(RLIMIT_CORE, &no) < 0) {
		log_err("%s: cannot make this process undumpable: %m", who);
		return -errno;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
		log_warn("%s: memory not locked (%m): secrets could reach swap", who);
	return 0;
}

/* --- certificates --------------------------------------------------------------- */

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -EINVAL;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -ENOMEM;
}

/* A certificate for key, subject CN cn, valid from an hour ago for CA_DAYS. */
static X509 *new_cert(EVP_PKEY *key, const char *cn)
{
	X509 *x = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	bool ok;

	if (!x || RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] &= 0x7f;      /* positive */
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) &&
	     X509_set_version(x, 2) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), (long)CA_DAYS * 86400) &&
	     X509_set_pubkey(x, key) &&
	     X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8,
					(const unsigned char *)cn, -1, -1, 0);
	BN_free(bn);
	if (ok)
		return x;
fail:
	X509_free(x);
	return NULL;
}

static int make_ca(struct creds *c)
{
	char cn[64], *nc = NULL;
	size_t len = 0;
	unsigned char r[6];
	int err = -ENOMEM;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	snprintf(cn, sizeof(cn), "cordon session CA %02x%02x%02x%02x%02x%02x", r[0], r[1], r[2],
		 r[3], r[4], r[5]);
	c->ca_key = EVP_EC_gen("P-256");
	c->leaf_key = EVP_EC_gen("P-256");
	if (!c->ca_key || !c->leaf_key || !(c->ca = new_cert(c->ca_key, cn)))
		return -ENOMEM;
	/* permitted;DNS:h1,permitted;DNS:h2 ... every credential host, nothing else. */
	for (size_t i = 0; i < c->n; i++)
		for (size_t h = 0; h < c->v[i].cr->n_hosts; h++)
			len += strlen(c->v[i].cr->hosts[h]) + 16;
	nc = calloc(1, len + 32);
	if (!nc)
		return -ENOMEM;
	strcpy(nc, "critical");
	for (size_t i = 0; i < c->n; i++)
		for (size_t h = 0; h < c->v[i].cr->n_hosts; h++)
			strcat(strcat(nc, ",permitted;DNS:"), c->v[i].cr->hosts[h]);
	if (!X509_set_issuer_name(c->ca, X509_get_subject_name(c->ca)) ||
	    add_ext(c->ca, c->ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    add_ext(c->ca, c->ca, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(c->ca, c->ca, NID_subject_key_identifier, "hash") < 0 ||
	    (c->n && add_ext(c->ca, c->ca, NID_name_constraints, nc) < 0) ||
	    !X509_sign(c->ca, c->ca_key, EVP_sha256()))
		err = -EINVAL;
	else
		err = 0;
	free(nc);
	return err;
}

static SSL_CTX *mint_leaf(struct creds *c, const char *host)
{
	char san[300];
	X509 *x = new_cert(c->leaf_key, host);
	SSL_CTX *ctx = NULL;

	snprintf(san, sizeof(san), "DNS:%s", host);
	if (!x || !X509_set_issuer_name(x, X509_get_subject_name(c->ca)) ||
	    add_ext(x, c->ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    add_ext(x, c->ca, NID_key_usage, "critical,digitalSignature") < 0 ||
	    add_ext(x, c->ca, NID_ext_key_usage, "serverAuth") < 0 ||
	    add_ext(x, c->ca, NID_subject_alt_name, san) < 0 ||
	    add_ext(x, c->ca, NID_authority_key_identifier, "keyid") < 0 ||
	    !X509_sign(x, c->ca_key, EVP_sha256()))
		goto out;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate(ctx, x) != 1 || SSL_CTX_use_PrivateKey(ctx, c->leaf_key) != 1) {
		SSL_CTX_free(ctx);
		ctx = NULL;
	}
out:
	X509_free(x);
	return ctx;
}

/* HTTP/1.1 only: cordon reads what it relays, and it speaks no h2. */
static int pick_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	for (unsigned int i = 0; i < inlen; i += 1u + in[i])
		if (in[i] == 8 && i + 9 <= inlen && !memcmp(in + i + 1, "http/1.1", 8)) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
	return SSL_TLSEXT_ERR_NOACK;
}

static SSL_CTX *leaf_ctx(struct creds *c, const char *host)
{
	SSL_CTX *ctx = NULL;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_leaves && !ctx; i++)
		if (!strcmp(c->leaves[i].host, host))
			ctx = c->leaves[i].ctx;
	if (!ctx && c->n_leaves < MAX_LEAVES && (ctx = mint_leaf(c, host))) {
		SSL_CTX_set_alpn_select_cb(ctx, pick_http11, NULL);
		snprintf(c->leaves[c->n_leaves].host, sizeof(c->leaves[0].host), "%s", host);
		c->leaves[c->n_leaves++].ctx = ctx;
	}
	pthread_mutex_unlock(&c->lock);
	return ctx;
}

/* The certificates (and CRLs) of the PEM file open at FD into STORE: 0, or -EINVAL (none). */
static int load_pem_fd(X509_STORE *store, int fd)
{
	BIO *b = lseek(fd, 0, SEEK_SET) == 0 ? BIO_new_fd(fd, BIO_NOCLOSE) : NULL;
	STACK_OF(X509_INFO) *v = b ? PEM_X509_INFO_read_bio(b, NULL, NULL, NULL) : NULL;
	int n = 0;

	for (int i = 0; v && i < sk_X509_INFO_num(v); i++) {
		X509_INFO *x = sk_X509_INFO_value(v, i);

		n += x->x509 && X509_STORE_add_cert(store, x->x509) == 1;
		if (x->crl)
			(void)X509_STORE_add_crl(store, x->crl);
	}
	sk_X509_INFO_pop_free(v, X509_INFO_free);
	BIO_free(b);
	return n ? 0 : -EINVAL;
}

/*
 * The system's CAs, to verify upstreams with, as OpenSSL's defaults name
 * them (SSL_CERT_FILE, SSL_CERT_DIR honoured).  The hashed directory is
 * preferred to the bundle file: a directory lookup reads a CA when a chain
 * needs it, where the file is parsed whole (some 140 certificates, tens of
 * milliseconds).  Without the directory: the defaults, file included.
 * SSL_CERT_FILE is read from the descriptor opened at the start; a
 * directory is read after the broker gave root up, so SSL_CERT_DIR must be
 * one every user may read (the system's is).
 */
static int load_system_store(const struct creds *c)
{
	const char *file = getenv(X509_get_default_cert_file_env());
	const char *dir = getenv(X509_get_default_cert_dir_env()) ?: X509_get_default_cert_dir();

	if (file && *file) {
		if (c->store_fd < 0)
			ERR_raise_data(ERR_LIB_SYS, c->store_open_err, "%s", file);
		return c->store_fd >= 0 ? load_pem_fd(SSL_CTX_get_cert_store(c->up), c->store_fd) :
		       -c->store_open_err;
	}
	if (access(dir, R_OK | X_OK) == 0 && SSL_CTX_load_verify_locations(c->up, NULL, dir) == 1)
		return 0;
	return SSL_CTX_set_default_verify_paths(c->up) == 1 ? 0 : -EINVAL;
}

/* --- setup --------------------------------------------------------------------- */

int creds_init(struct creds **out, const struct policy *pol, const char *upstream_ca,
	       const char *who)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	struct creds *c = calloc(1, sizeof(*c));
	int r;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->store_fd = -1;
	c->v = calloc(pol->n_creds + 1, sizeof(*c->v));
	if (!c->v) {
		creds_free(c);
		return -ENOMEM;
	}
	r = pol->n_creds ? harden_process(who) : 0;
	for (size_t i = 0; !r && i < pol->n_creds; i++) {
		struct cred_slot *s = &c->v[c->n++];

		s->cr = &pol->creds[i];
		s->secret = s->cr->source_env ? take_env(s->cr->source_env)
					      : take_file(s->cr->source_file);
		s->secret_len = s->secret ? strlen(s->secret) : 0;
		r = make_sentinel(s->sentinel);
	}
	if (!r && (r = make_ca(c)) < 0)
		log_err("%s: cannot make the session CA", who);
	c->up = r ? NULL : SSL_CTX_new(TLS_client_method());
	if (!r && (!c->up || !SSL_CTX_set_min_proto_version(c->up, TLS1_2_VERSION) ||
		   SSL_CTX_set_alpn_protos(c->up, alpn, sizeof(alpn) - 1) != 0)) {
		log_err("%s: cannot set up TLS toward the upstream", who);
		r = -ENOMEM;
	}
	if (!r) {
		SSL_CTX_set_verify(c->up, SSL_VERIFY_PEER, NULL);
		/*
		 * A configured CA now (a mistake shows at once); the system's at the
		 * first upstream connection (load_system_store): a session's start
		 * does not wait for a bundle to be parsed.
		 */
		if (!upstream_ca) {
			const char *file = getenv(X509_get_default_cert_file_env());

			c->store_pending = true;
			if (file && *file && (c->store_fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
				c->store_open_err = errno;
		} else if (SSL_CTX_load_verify_locations(c->up, upstream_ca, NULL) != 1) {
			log_err("%s: cannot load the CAs to verify upstreams with: %s", who, upstream_ca);
			r = -EINVAL;
		}
	}
	for (size_t i = 0; !r && i < c->n; i++) {
		struct cred_slot *s = &c->v[i];

		if (!s->cr->upstream_ca)
			continue;
		s->up = SSL_CTX_new(TLS_client_method());
		if (!s->up || !SSL_CTX_set_min_proto_version(s->up, TLS1_2_VERSION) ||
		    SSL_CTX_set_alpn_protos(s->up, alpn, sizeof(alpn) - 1) != 0) {
			log_err("%s: cannot set up TLS toward credential %s's upstream", who, s->cr->name);
			r = -ENOMEM;
		} else if (SSL_CTX_load_verify_locations(s->up, s->cr->upstream_ca, NULL) != 1) {
			log_err("%s: credential %s: cannot load the upstream's CA from %s", who,
				s->cr->name, s->cr->upstream_ca);
			r = -EINVAL;
		} else {
			SSL_CTX_set_verify(s->up, SSL_VERIFY_PEER, NULL);
		}
	}
	if (r) {
		creds_free(c);
		return r;
	}
	*out = c;
	return 0;
}

void creds_free(struct creds *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].secret) {
			explicit_bzero(c->v[i].secret, c->v[i].secret_len);
			free(c->v[i].secret);
		}
		explicit_bzero(c->v[i].sentinel, sizeof(c->v[i].sentinel));
		SSL_CTX_free(c->v[i].up);
	}
	free(c->v);
	for (size_t i = 0; i < c->n_leaves; i++)
		SSL_CTX_free(c->leaves[i].ctx);
	SSL_CTX_free(c->up);
	if (c->store_fd >= 0)
		close(c->store_fd);
	X509_free(c->ca);
	EVP_PKEY_free(c->ca_key);
	EVP_PKEY_free(c->leaf_key);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

size_t creds_count(const struct creds *c)
{
	return c->n;
}

size_t creds_available(const struct creds *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++)
		k += c->v[i].secret != NULL;
	return k;
}

const struct pol_credential *creds_at(const struct creds *c, size_t i, const char **sentinel)
{
	if (i >= c->n)
		return NULL;
	*sentinel = c->v[i].secret ? c->v[i].sentinel : NULL;
	return c->v[i].cr;
}

int creds_for_host(const struct creds *c, const char *host)
{
	for (size_t i = 0; c && i < c->n; i++)
		for (size_t h = 0; h < c->v[i].cr->n_hosts; h++)
			if (!strcmp(c->v[i].cr->hosts[h], host))
				return (int)i;
	return -1;
}

size_t creds_n_secrets(const struct creds *c)
{
	return c->n;
}

const char *creds_secret(const struct creds *c, size_t i, size_t *len)
{
	*len = c->v[i].secret_len;
	return c->v[i].secret;
}

int creds_write_bundle(const struct creds *c, int fd)
{
	const char *sys = getenv(X509_get_default_cert_file_env()) ?: X509_get_default_cert_file();
	_cleanup_close_ int in = open(sys, O_RDONLY | O_CLOEXEC);
	BIO *b = BIO_new(BIO_s_mem());
	char *pem;
	long n;
	int r = 0;

	if (!b || !PEM_write_bio_X509(b, c->ca)) {
		BIO_free(b);
		return -ENOMEM;
	}
	n = BIO_get_mem_data(b, &pem);
	/*
	 * The system's CAs first (other hosts through the broker stay
	 * verifiable), copied by the kernel: the bundle (~200 KB) is not read
	 * into fresh pages of this process at every session's start.
	 */
	if (in >= 0) {
		ssize_t k;

		while ((k = sendfile(fd, in, NULL, 1 << 20)) > 0)
			;
		if (k < 0 || write_all(fd, "\n", 1) < 0)
			r = -errno;
	}
	if (!r && write_all(fd, pem, (size_t)n) < 0)
		r = -errno;
	BIO_free(b);
	return r;
}

/* --- TLS --------------------------------------------------------------------------- */

SSL *creds_accept(struct creds *c, const char *host, int fd, const char *hello, size_t hello_len,
		  char *why, size_t wlen)
{
	SSL_CTX *ctx = leaf_ctx(c, host);
	SSL *ssl = ctx ? SSL_new(ctx) : NULL;
	BIO *mem = BIO_new_mem_buf(hello, (int)hello_len), *sock = BIO_new_socket(fd, BIO_NOCLOSE);
	int r;

	if (!ssl || !mem || !sock) {
		ssl_why(why, wlen, "cannot set up TLS toward the client");
		goto fail;
	}
	/*
	 * The ClientHello was read to check its server name: it is handed in
	 * from memory, then the socket takes over (a memory BIO that runs dry
	 * asks to retry instead of ending the stream).
	 */
	BIO_set_mem_eof_return(mem, -1);
	BIO_up_ref(sock);
	SSL_set_bio(ssl, mem, sock);
	mem = NULL;
	for (bool switched = false;;) {
		r = SSL_accept(ssl);
		if (r == 1)
			break;
		if (!switched && SSL_get_error(ssl, r) == SSL_ERROR_WANT_READ) {
			SSL_set0_rbio(ssl, sock);
			sock = NULL;
			switched = true;
			continue;
		}
		ssl_why(why, wlen, "the TLS handshake with the client failed");
		goto fail;
	}
	if (sock)
		BIO_free(sock);
	/* Whole records per read(2), not a header then a body: half the reads. */
	SSL_set_read_ahead(ssl, 1);
	return ssl;
fail:
	BIO_free(mem);
	if (sock)
		BIO_free(sock);
	SSL_free(ssl);
	return NULL;
}

SSL *creds_connect(struct creds *c, size_t i, const char *host, int fd, char *why, size_t wlen)
{
	const struct cred_slot *sl = &c->v[i];
	struct in6_addr a6;
	struct in_addr a4;
	bool ip;
	SSL *ssl;
	long v;
	int err;

	/* A gateway is verified for its own name (or address), not the provider's. */
	if (sl->cr->upstream_host)
		host = sl->cr->upstream_host;
	ip = inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1;
	/* Before any SSL_new() from the context: its store is complete when used. */
	pthread_mutex_lock(&c->lock);
	if (!sl->up && c->store_pending) {
		c->store_err = load_system_store(c);
		c->store_pending = false;
	}
	err = sl->up ? 0 : c->store_err;
	pthread_mutex_unlock(&c->lock);
	if (err) {
		ssl_why(why, wlen, "cannot load the system's CAs to verify the upstream with");
		return NULL;
	}
	ssl = SSL_new(sl->up ? sl->up : c->up);

	/* An address is checked against the certificate's IP names; no SNI carries one. */
	if (!ssl || !SSL_set_fd(ssl, fd) ||
	    (ip ? !X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
		: (!SSL_set_tlsext_host_name(ssl, host) || !SSL_set1_host(ssl, host)))) {
		ssl_why(why, wlen, "cannot set up TLS toward the upstream");
		SSL_free(ssl);
		return NULL;
	}
	if (SSL_connect(ssl) != 1) {
		v = SSL_get_verify_result(ssl);
		if (v != X509_V_OK) {
			snprintf(why, wlen, "the upstream %s failed verification: %s", host,
				 X509_verify_cert_error_string(v));
			ERR_clear_error();
		} else {
			ssl_why(why, wlen, "the TLS handshake with the upstream failed");
		}
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_read_ahead(ssl, 1);
	return ssl;
}

/* --- requests -------------------------------------------------------------------- */

/*
 * A path the upstream cannot read as another: no dot segments, no
 * percent-encoded dot, slash, backslash or semicolon, no backslash, no
 * semicolon, no empty segment.  The semicolon: servlet containers (Tomcat,
 * Jetty, Spring) drop a segment's ";parameters" before they resolve dot
 * segments, so "/v1/models/..;/admin" passes a wildcard endpoint under
 * "/v1/models/" here and is "/v1/admin" there, with the real key.  No API
 * a credential is for needs path parameters.
 */
static bool plain_path(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\' || p[i] == '#' || p[i] == ';')
			return false;
		if (p[i] == '%' && i + 2 < n + 2 &&
		    (!strncasecmp(p + i, "%2e", 3) || !strncasecmp(p + i, "%2f", 3) ||
		     !strncasecmp(p + i, "%5c", 3) || !strncasecmp(p + i, "%00", 3) ||
		     !strncasecmp(p + i, "%3b", 3)))
			return false;
		if (p[i] == '/') {
			size_t k = i + 1;

			while (k < n && p[k] != '/')
				k++;
			if (k == i + 1 && k < n)
				return false;           /* "//" */
			if ((k - i - 1 == 1 && p[i + 1] == '.') ||
			    (k - i - 1 == 2 && p[i + 1] == '.' && p[i + 2] == '.'))
				return false;
		}
	}
	return true;
}

/*
 * An endpoint's path pattern against a path: a '*' that ends the pattern
 * matches any rest; a '*' elsewhere matches one name, at least one byte
 * and none of '/' or ':' (the model in Google's
 * "/v1beta/models/MODEL:generateContent").  Google's APIs put the method
 * after a colon, so a trailing '*' would also admit the model's other
 * methods, batchGenerateContent's stored requests among them, whose tools
 * the body judge never sees.
 */
static bool path_match(const char *pat, const char *p, size_t n)
{
	for (; *pat; pat++) {
		if (*pat == '*' && !pat[1])
			return true;
		if (*pat == '*') {
			for (size_t k = 1; k <= n && p[k - 1] != '/' && p[k - 1] != ':'; k++)
				if (path_match(pat + 1, p + k, n - k))
					return true;
			return false;
		}
		if (!n || *p != *pat)
			return false;
		p++;
		n--;
	}
	return n == 0;
}

static bool endpoint_ok(const struct pol_credential *cr, const char *method, const char *path,
			size_t plen)
{
	size_t ml = strlen(method);

	for (size_t i = 0; i < cr->n_endpoints; i++) {
		const char *e = cr->endpoints[i];

		if (strncmp(e, method, ml) || e[ml] != ' ')
			continue;
		if (path_match(e + ml + 1, path, plen))
			return true;
	}
	return false;
}

static bool same_ct(const char *a, size_t al, const char *b, size_t bl)
{
	unsigned char d = al != bl;

	for (size_t i = 0; i < al && i < bl; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/*
 * Fields that tell a server or the framework behind it to take the request
 * as another method, path or host than its request line and Host say
 * (X-HTTP-Method-Override is honoured by Google's APIs and many
 * frameworks, X-Original-URL by IIS and Symfony, X-Forwarded-Host and
 * Forwarded by front ends that route by them).  Attack closed: an allowed
 * "POST /v1/messages" carrying one of them run upstream, with the real key,
 * as a DELETE or on a path the endpoint allowlist never saw.  Refused, not
 * dropped, so the agent learns why.  No LLM client sends them.
 */
static const char *rewrite_field(const struct http_request *req)
{
	static const char *const fields[] = {
		"x-http-method-override", "x-http-method", "x-method-override", "x-original-method",
		"x-original-url", "x-rewrite-url", "x-forwarded-host", "x-forwarded-prefix",
		"x-forwarded-path", "x-forwarded-uri", "x-forwarded-server", "x-host", "forwarded",
		NULL };

	for (int k = 0; fields[k]; k++)
		if (http_header_get(req->headers, req->n_headers, fields[k]))
			return fields[k];
	return NULL;
}

int creds_check(const struct creds *c, size_t i, const struct http_request *req, const char *host,
		uint16_t port, char *why, size_t wlen)
{
	const struct cred_slot *s = &c->v[i];
	const struct pol_credential *cr = s->cr;
	const struct http_header *h;
	size_t plen = strcspn(req->path, "?"), pre = cr->prefix ? strlen(cr->prefix) : 0;
	const char *field;
	char hhost[256];
	uint16_t hport;

	if (req->form != HTTP_ORIGIN_FORM) {
		snprintf(why, wlen, "inside the tunnel, requests are origin-form (/path)");
		return -403;
	}
	/*
	 * The tunnel's own host, not another of the credential's: one front
	 * end serving several of its hosts would route by the Host.
	 */
	if (!req->has_host ||
	    http_parse_authority(req->host_header, strlen(req->host_header), hhost, sizeof(hhost),
				 &hport, port) < 0 || hport != port || strcmp(hhost, host) ||
	    creds_for_host(c, hhost) != (int)i) {
		snprintf(why, wlen, "the Host header is not the tunnel's host");
		return -403;
	}
	if ((field = rewrite_field(req))) {
		snprintf(why, wlen, "the %s field would have the upstream take another method, path "
			 "or host: refused", field);
		return -403;
	}
	/*
	 * A key in the query ("?key=", as Google's APIs also take it): the
	 * sentinel is swapped in the credential's header only, so a sentinel
	 * there would go upstream as it is (a failure the agent cannot
	 * read), and a real key there is one cordon did not give.  Said
	 * plainly rather than forwarded.
	 */
	for (size_t k = 0; k < c->n; k++)
		if (c->v[k].secret && memmem(req->path + plen, strlen(req->path + plen),
					     c->v[k].sentinel, CRED_SENTINEL_LEN)) {
			snprintf(why, wlen, "a sentinel is in the query string: credential %s is "
				 "presented in the %s header, where cordon swaps it", cr->name,
				 cr->header);
			return -403;
		}
	if (!plain_path(req->path, plen)) {
		snprintf(why, wlen, "the path has dot segments or encoded separators");
		return -403;
	}
	if (!endpoint_ok(cr, req->method, req->path, plen)) {
		snprintf(why, wlen, "%s %.*s is not an endpoint of credential %s", req->method,
			 (int)(plen > 200 ? 200 : plen), req->path, cr->name);
		return -403;
	}
	if (!s->secret) {
		snprintf(why, wlen, "credential %s has no secret on this host (%s %s is unset)",
			 cr->name, cr->source_env ? "variable" : "file",
			 cr->source_env ? cr->source_env : cr->source_file);
		return -403;
	}
	if (http_header_count(req->headers, req->n_headers, cr->header) != 1 ||
	    !(h = http_header_get(req->headers, req->n_headers, cr->header))) {
		snprintf(why, wlen, "credential %s is presented in exactly one %s header", cr->name,
			 cr->header);
		return -403;
	}
	if (h->value_len < pre || strncmp(h->value, cr->prefix ? cr->prefix : "", pre) ||
	    !same_ct(h->value + pre, h->value_len - pre, s->sentinel, CRED_SENTINEL_LEN)) {
		snprintf(why, wlen, "the %s header does not hold this session's sentinel for %s",
			 cr->header, cr->name);
		return -403;
	}
	return 0;
}

static bool drop_upstream(const struct http_header *h, const char *cred_header)
{
	static const char *const drop[] = { "connection", "proxy-connection", "keep-alive",
					    "proxy-authorization", "proxy-authenticate", "te",
					    "trailer", "upgrade", "expect", "accept-encoding",
					    "content-length", "transfer-encoding", NULL };

	if (h->name_len == strlen(cred_header) && !strncasecmp(h->name, cred_header, h->name_len))
		return true;
	for (int i = 0; drop[i]; i++)
		if (h->name_len == strlen(drop[i]) && !strncasecmp(h->name, drop[i], h->name_len))
			return true;
	return false;
}

/*
 * Append pieces to a head under construction; false when it would not fit
 * (with the NUL the callers wipe up to).  Plain copies, not snprintf(3):
 * this runs for every request and the format machinery was a tenth of the
 * proxy's user time.
 */
struct head_out {
	char *b;
	size_t o, cap;
};

static bool hput(struct head_out *h, const char *s, size_t n)
{
	if (h->cap - h->o <= n)
		return false;
	memcpy(h->b + h->o, s, n);
	h->o += n;
	h->b[h->o] = 0;
	return true;
}

static bool hputs(struct head_out *h, const char *s)
{
	return hput(h, s, strlen(s));
}

/* No CR, LF, NUL or other control byte but HTAB: nothing that could end a line. */
static bool field_clean(const char *p, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		unsigned char b = (unsigned char)p[k];

		if ((b < 0x20 && b != '\t') || b == 0x7f)
			return false;
	}
	return true;
}

int creds_upstream_head(const struct creds *c, size_t i, const struct http_request *req,
			char *out, size_t cap)
{
	const struct cred_slot *s = &c->v[i];
	const char *gw = s->cr->upstream_host;
	struct head_out h = { .b = out, .cap = cap };
	char num[24];

	/* Toward a gateway: its path prefix, and its own name in Host. */
	if (!hputs(&h, req->method) || !hput(&h, " ", 1) ||
	    (gw && !hputs(&h, s->cr->upstream_prefix)) || !hputs(&h, req->path) ||
	    !hputs(&h, " HTTP/1.1\r\n"))
		goto big;
	if (gw) {
		bool v6 = strchr(gw, ':');

		snprintf(num, sizeof(num), ":%u", s->cr->upstream_port);
		if (!hputs(&h, v6 ? "Host: [" : "Host: ") || !hputs(&h, gw) ||
		    (v6 && !hput(&h, "]", 1)) ||
		    (s->cr->upstream_port != 443 && !hputs(&h, num)) || !hput(&h, "\r\n", 2))
			goto big;
	}
	for (size_t k = 0; k < req->n_headers; k++) {
		const struct http_header *hd = &req->headers[k];

		if (drop_upstream(hd, s->cr->header) ||
		    (gw && hd->name_len == 4 && !strncasecmp(hd->name, "host", 4)))
			continue;
		/*
		 * The parser admitted only field bytes; a field that holds
		 * anything else here is not what was checked (a caller that
		 * let its buffer move): nothing goes upstream.
		 */
		if (!field_clean(hd->name, hd->name_len) || !field_clean(hd->value, hd->value_len))
			goto big;
		if (!hput(&h, hd->name, hd->name_len) || !hput(&h, ": ", 2) ||
		    !hput(&h, hd->value, hd->value_len) || !hput(&h, "\r\n", 2))
			goto big;
	}
	if (req->chunked) {
		if (!hputs(&h, "Transfer-Encoding: chunked\r\n"))
			goto big;
	} else if (req->content_length >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)req->content_length);
		if (!hputs(&h, "Content-Length: ") || !hputs(&h, num) || !hput(&h, "\r\n", 2))
			goto big;
	}
	if (!hputs(&h, "Accept-Encoding: identity\r\n") ||
	    (req->close && !hputs(&h, "Connection: close\r\n")) ||
	    !hputs(&h, s->cr->header) || !hput(&h, ": ", 2) ||
	    !hputs(&h, s->cr->prefix ? s->cr->prefix : "") ||
	    !hput(&h, s->secret, s->secret_len) || !hput(&h, "\r\n\r\n", 4))
		goto big;
	return (int)h.o;
big:
	explicit_bzero(out, cap);
	return -E2BIG;
}

static void closedirp(DIR **d)
{
	if (*d)
		(void)closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* One component below DIRFD, never through a symlink nor "..". */
static int open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* Remove NAME below DIRFD, a directory with all it holds; never follows a symlink. */
static int rm_rf_at(int at, const char *name)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	struct stat st;
	int fd, r = 0;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!(d = fdopendir(fd))) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r >= 0 && (errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = rm_rf_at(dirfd(d), de->d_name);
	if (r < 0)
		return r;
	return unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

/* Component-wise: is PATH equal to PREFIX or below it? */
static bool path_within(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(path, prefix, n) && (path[n] == 0 || path[n] == '/');
}

bool home_is_store(const char *rel)
{
	for (const char *const *s = pol_credential_stores(); *s; s++)
		if (path_within(rel, *s))
			return true;
	return false;
}

/* WHY: what failed (FMT), and how (R).  Returns R. */
static int fail(char *why, size_t wlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *why, size_t wlen, int r, const char *fmt, ...)
{
	char what[PATH_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(why, wlen, "%s: %s", what, strerror(-r));
	return r;
}

static int lock_layer(int layerfd)
{
	int fd = openat(layerfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = errno == EWOULDBLOCK ? -EBUSY : -errno;

		close(fd);
		return r;
	}
	return fd;
}


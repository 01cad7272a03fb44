/* The reason, naming the head's line (1 = the start line) when one line is to blame. */
static int fail(char *why, size_t whylen, int status, unsigned line, const char *msg)
{
	if (!msg)
		msg = "malformed";
	if (why && whylen && line)
		snprintf(why, whylen, "line %u: %s", line, msg);
	else if (why && whylen)
		snprintf(why, whylen, "%s", msg);
	return -status;
}

/* Byte classes, locale-free. */
static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned char c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static bool is_xdigit(unsigned char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static bool is_tchar(unsigned char c)
{
	return is_digit(c) || is_alpha(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* field-vchar, obs-text, SP or HTAB: anything but CTLs and DEL. */
static bool is_field_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static unsigned char lc(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static bool ieq(const char *a, size_t n, const char *lit)
{
	if (n != strlen(lit))
		return false;
	for (size_t i = 0; i < n; i++)
		if (lc((unsigned char)a[i]) != lc((unsigned char)lit[i]))
			return false;
	return true;
}

static bool is_token(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return true;
}


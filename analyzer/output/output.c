// SPDX-License-Identifier: MIT
/*
 * output.c - JSON writer, unit formatting, and kernel names as outputs show them. See output.h.
 */
#include "output.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/demangle.h"
#include "util/util.h"

void json_init(struct json *j, FILE *f, int is_pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->is_pretty = is_pretty;
}

static void indent(struct json *j)
{
	int i;

	if (!j->is_pretty)
		return;
	fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void member(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->has_items[j->depth])
			fputc(',', j->f);
		j->has_items[j->depth] = 1;
		indent(j);
	}
	if (key) {
		json_escape(j->f, key, strlen(key));
		fputs(j->is_pretty ? ": " : ":", j->f);
	}
}

static void open_scope(struct json *j, const char *key, int c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->has_items[j->depth] = 0;
}

static void close_scope(struct json *j, int c)
{
	int had = j->has_items[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had)
		indent(j);
	fputc(c, j->f);
}

void json_object_begin(struct json *j, const char *key)
{
	open_scope(j, key, '{');
}

void json_object_end(struct json *j)
{
	close_scope(j, '}');
}

void json_array_begin(struct json *j, const char *key)
{
	open_scope(j, key, '[');
}

void json_array_end(struct json *j)
{
	close_scope(j, ']');
}

/*
 * The well-formed UTF-8 character at @s (@left bytes, at least 1): its length, and its code
 * point in *@cp; 0 when the bytes there are not one (a stray continuation, an overlong form, a
 * surrogate, past U+10FFFF, a character cut short).
 */
static size_t utf8_char(const unsigned char *s, size_t left, uint32_t *cp)
{
	size_t n, i;

	*cp = s[0];
	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (n > left)
		return 0;
	*cp = s[0] & (0x7fu >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && *cp < 0x800) || (n == 4 && *cp < 0x10000) || *cp > 0x10ffff ||
	    (*cp >= 0xd800 && *cp < 0xe000))
		return 0;
	return n;
}

const char *utf8_clean(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, n, len = strlen(s);
	uint32_t cp;

	sb->len = 0;
	for (i = 0; i < len; i += n ? n : 1) {
		n = utf8_char(p + i, len - i, &cp);
		if (n)
			sb_add(sb, s + i, n);
		else
			sb_add(sb, "\xef\xbf\xbd", 3);	/* U+FFFD */
	}
	sb_add(sb, "", 0);
	return sb->buf ? sb->buf : "";
}

/*
 * Whether a terminal shows @cp as a character and nothing else. A terminal takes C0 controls,
 * DEL and the C1 controls U+0080-U+009F (U+009B is CSI) as the start of an escape sequence that
 * can move the cursor, recolor, retitle the window or write to the clipboard; line and
 * paragraph separators and bidirectional overrides (U+2028-U+202E, U+2066-U+2069) break or
 * reorder the line. Nor is a byte that is not well-formed UTF-8 (utf8_char's 0; the callers
 * see to it): a terminal in another encoding could take a lone 0x9b as CSI.
 */
static int is_shown(uint32_t cp)
{
	if (cp < 0xa0)
		return cp >= 0x20 && cp < 0x7f;
	return !(cp >= 0x2028 && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
}

/*
 * JSON text is UTF-8 (RFC 8259): characters pass as they are, so a path or a name in any
 * language reads the same in the output. Those print_clean would not show (C0 and C1 controls,
 * DEL, line separators, bidirectional overrides) are escaped as \uXXXX: the same text to a
 * parser, and a JSON file stays safe to print on a terminal. A byte that is not part of a
 * well-formed character cannot be in JSON at all: each becomes U+FFFD, written \ufffd so that
 * it stays visible in the file, as a decoder would have replaced it.
 */
void json_escape(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, n;
	uint32_t cp;

	fputc('"', f);
	for (i = 0; i < len; i += n) {
		n = utf8_char(p + i, len - i, &cp);
		if (!n) {
			fputs("\\ufffd", f);
			n = 1;
			continue;
		}
		switch (cp) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (!is_shown(cp))
				fprintf(f, "\\u%04x", (unsigned)cp);	/* all below U+10000 */
			else if (n == 1)
				fputc((int)cp, f);
			else
				fwrite(p + i, 1, n, f);
		}
	}
	fputc('"', f);
}

/*
 * HTML text and attribute values alike: the five characters markup gives a meaning to become
 * references, so a name from a trace is only ever text. What a terminal would not show (C0 and
 * C1 controls, which HTML forbids, line separators, bidirectional overrides, which could turn
 * the text of a row around) and each byte that is not well-formed UTF-8 become U+FFFD, as a
 * browser decodes a bad byte: the file is valid UTF-8 whatever a trace holds.
 */
void html_escape(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, n;
	uint32_t cp;

	for (i = 0; i < len; i += n) {
		n = utf8_char(p + i, len - i, &cp);
		if (!n || !is_shown(cp)) {
			fputs("\xef\xbf\xbd", f);	/* U+FFFD */
			n = n ? n : 1;
			continue;
		}
		switch (cp) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fwrite(p + i, 1, n, f);
		}
	}
}

void html_str(FILE *f, const char *s)
{
	html_escape(f, s ? s : "", s ? strlen(s) : 0);
}

void json_str(struct json *j, const char *key, const char *val)
{
	if (!val) {
		json_null(j, key);
		return;
	}
	json_strn(j, key, val, strlen(val));
}

void json_strn(struct json *j, const char *key, const char *val, size_t len)
{
	member(j, key);
	json_escape(j->f, val, len);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v, int decimals)
{
	member(j, key);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", decimals, v);
}

void json_bool(struct json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void json_done(struct json *j)
{
	fputc('\n', j->f);
}

char *fmt_ns(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.2f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, n, "%.3f s", ns / 1e9);
	return buf;
}

char *fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, n, "%.2f %s", v, units[u]);
	return buf;
}

char *fmt_count(char *buf, size_t n, uint64_t v)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	size_t o = 0;
	int i;

	for (i = 0; i < len && o + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

size_t print_clean(FILE *f, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n, nr_chars = 0, len = strlen(s);
	uint32_t cp;
	int is_ok;

	while (i < len) {
		n = utf8_char(p + i, len - i, &cp);
		is_ok = n && is_shown(cp);
		if (!n)
			n = 1;		/* each byte of a malformed sequence is one '?' */
		if (i + n > max)
			break;
		if (is_ok)
			fwrite(p + i, 1, n, f);
		else
			fputc('?', f);
		i += n;
		nr_chars++;
	}
	if (i < len) {
		fputs("...", f);
		nr_chars += 3;
	}
	return nr_chars;
}

/* ---- Kernel names ---- */

char *name_readable(const char *name, size_t width)
{
	char small[256], *s;
	int len = width ? demangle_short(name, small, sizeof(small), width) :
			  demangle(name, small, sizeof(small));

	if (len < 0)
		return xstrdup(name);
	if ((size_t)len < sizeof(small))
		return xstrdup(small);
	s = xmalloc((size_t)len + 1);
	if (width)
		demangle_short(name, s, (size_t)len + 1, width);
	else
		demangle(name, s, (size_t)len + 1);
	return s;
}

char **name_table(const char *const *names, size_t n, size_t width)
{
	char **forms;
	size_t i, k;

	if (width || !n)
		return demangle_short_names(names, n, width);
	forms = xmalloc(n * sizeof(*forms));
	for (i = 0; i < n; i++)
		forms[i] = name_readable(names[i], 0);
	/* Two manglings can read alike (a clone suffix dropped, a substitution spelled out): both
	 * rows then print as recorded, which is unique. */
	for (i = 0; i < n; i++)
		for (k = i + 1; k < n; k++)
			if (!strcmp(forms[i], forms[k]) && strcmp(names[i], names[k])) {
				free(forms[i]);
				forms[i] = xstrdup(names[i]);
				free(forms[k]);
				forms[k] = xstrdup(names[k]);
			}
	return forms;
}

void json_name(struct json *j, const char *key, const char *mangled_key, const char *name)
{
	char *s;

	if (!name) {
		json_null(j, key);
		json_null(j, mangled_key);
		return;
	}
	s = name_readable(name, 0);
	json_str(j, key, s);
	json_str(j, mangled_key, name);
	free(s);
}

static void forms_free(struct name_forms *fm)
{
	free(fm->name);
	free(fm->title);
	free(fm->whole);
	memset(fm, 0, sizeof(*fm));
}

const struct name_forms *name_cache_get(struct name_cache *c, const char *name)
{
	/* Fibonacci hashing of the address; names are allocated apart, so its low bits vary. */
	uint64_t h = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;
	struct name_cache_slot *sl = &c->slot[h >> 56];

	_Static_assert(NAME_CACHE_SLOTS == 256, "the slot is the hash's top 8 bits");
	if (sl->key == name && !strcmp(sl->forms.name, name))
		return &sl->forms;
	forms_free(&sl->forms);
	sl->key = name;
	sl->forms.name = xstrdup(name);
	sl->forms.title = name_readable(name, TIMELINE_NAME_WIDTH);
	sl->forms.whole = name_readable(name, 0);
	return &sl->forms;
}

void name_cache_free(struct name_cache *c)
{
	size_t i;

	for (i = 0; i < NAME_CACHE_SLOTS; i++)
		forms_free(&c->slot[i].forms);
	memset(c, 0, sizeof(*c));
}

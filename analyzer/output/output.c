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

void json_escape(FILE *f, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
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
			if (c < 0x20 || c == 0x7f) {
				fputs("\\u00", f);
				fputc(hex[c >> 4], f);
				fputc(hex[c & 15], f);
			} else if (c >= 0x80) {
				/* Trace bytes are not trusted to be UTF-8: keep them as code points. */
				fputs("\\u00", f);
				fputc(hex[c >> 4], f);
				fputc(hex[c & 15], f);
			} else {
				fputc(c, f);
			}
		}
	}
	fputc('"', f);
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

/*
 * The bytes at @s (@left of them) that make one character, and in *@is_shown whether a
 * terminal shows it as a character and nothing else. A terminal takes C0 controls, DEL and the
 * C1 controls U+0080-U+009F (U+009B is CSI) as the start of an escape sequence that can move
 * the cursor, recolor, retitle the window or write to the clipboard; line and paragraph
 * separators and bidirectional overrides (U+2028-U+202E, U+2066-U+2069) break or reorder the
 * line. Bytes that are not well-formed UTF-8 (stray continuations, overlong forms, surrogates,
 * past U+10FFFF) are not shown either: a terminal in another encoding could take a lone 0x9b
 * as CSI. Each of them is one byte; a C1 control or separator is its whole sequence.
 */
static size_t clean_char(const unsigned char *s, size_t left, int *is_shown)
{
	size_t n, i;
	uint32_t cp;

	*is_shown = s[0] >= 0x20 && s[0] < 0x7f;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 1;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (n > left)
		return 1;
	cp = s[0] & (0x7fu >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 1;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp < 0xe000))
		return 1;
	*is_shown = cp >= 0xa0 && !(cp >= 0x2028 && cp <= 0x202e) &&
		    !(cp >= 0x2066 && cp <= 0x2069);
	return n;
}

size_t print_clean(FILE *f, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n, nr_chars = 0, len = strlen(s);
	int is_shown;

	while (i < len) {
		n = clean_char(p + i, len - i, &is_shown);
		if (i + n > max)
			break;
		if (is_shown)
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

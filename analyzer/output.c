// SPDX-License-Identifier: MIT
/*
 * output.c - JSON writer and unit formatting. See output.h.
 */
#include "output.h"

#include <math.h>
#include <string.h>

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

void print_clean(FILE *f, const char *s, size_t max)
{
	size_t i, len = strlen(s);

	for (i = 0; i < len && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
	if (len > max)
		fputs("...", f);
}

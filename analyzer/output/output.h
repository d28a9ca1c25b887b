/* SPDX-License-Identifier: MIT */
/*
 * output.h - the only code that formats results: a streaming JSON writer (escapes every string
 * it is given, so names from a trace can never break the document) and unit formatting for
 * people (ns -> "1.23 ms", bytes -> "1.50 GiB"). Computes nothing.
 */
#ifndef GPUSHIM_OUTPUT_H
#define GPUSHIM_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int is_pretty;
	int depth;
	int has_items[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f, int is_pretty);
/* @key is the member name inside an object, NULL inside an array or at the top. */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val);	/* NULL -> null */
void json_strn(struct json *j, const char *key, const char *val, size_t len);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v, int decimals);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
void json_done(struct json *j);		/* newline after the top-level value */

/* json_escape - write @s (len bytes) as a JSON string literal, quotes included. */
void json_escape(FILE *f, const char *s, size_t len);

/* Human units into @buf (returns @buf). */
char *fmt_ns(char *buf, size_t n, uint64_t ns);
char *fmt_bytes(char *buf, size_t n, uint64_t bytes);
char *fmt_count(char *buf, size_t n, uint64_t v);	/* 1234567 -> "1,234,567" */

/*
 * print_clean - @s as text for a terminal, on one line: every character a terminal would not
 * just show (C0 and C1 controls, DEL, line separators, bidirectional overrides, bytes that are
 * not UTF-8) becomes '?', so nothing from a trace or a file name can start an escape sequence;
 * UTF-8 text stays. Cut at @max bytes (never inside a character), then "...". The one function
 * for every string a text output did not write itself. Returns the characters written.
 */
size_t print_clean(FILE *f, const char *s, size_t max);

#endif /* GPUSHIM_OUTPUT_H */

/* SPDX-License-Identifier: MIT */
/*
 * output.h - the only code that formats results: a streaming JSON writer (escapes every string
 * it is given, so names from a trace can never break the document nor its UTF-8), the same
 * escaping for HTML, and unit formatting for people (ns -> "1.23 ms", bytes -> "1.50 GiB").
 * Computes nothing.
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

/*
 * json_escape - write @s (len bytes) as a JSON string literal, quotes included: well-formed
 * UTF-8 as it is (but what print_clean would not show, escaped as \uXXXX), each byte that is
 * not UTF-8 as \ufffd (U+FFFD), so the output is valid UTF-8 whatever a trace holds.
 */
void json_escape(FILE *f, const char *s, size_t len);

/*
 * html_escape - @s (@len bytes) as HTML text or a quoted attribute's value: & < > " ' as
 * references; what print_clean would not show and each byte that is not UTF-8 as U+FFFD, so
 * the output is valid UTF-8 and no string from a trace can become markup. html_str - the same
 * for a string (NULL: nothing).
 */
void html_escape(FILE *f, const char *s, size_t len);
void html_str(FILE *f, const char *s);

/*
 * utf8_clean - @s with each byte that is not well-formed UTF-8 replaced by U+FFFD, in @sb
 * (its buffer, reused; valid until the next call with it). For outputs whose readers want
 * UTF-8 (CSV, SQLite) whatever a trace holds.
 */
struct strbuf;
const char *utf8_clean(struct strbuf *sb, const char *s);

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

/* ---- Kernel names ---- */

/*
 * A kernel's name as recorded is a mangled C++ name ("_ZN2at6native...") or a plain one
 * (Triton's, XLA's, C's). Outputs show a C++ name demangled (util/demangle.h): text whole or
 * in a short form, JSON whole beside the name as recorded; names the demangler refuses show as
 * they are. Names are demangled as they print, never kept beside the model (but for the last
 * few hundred a timeline met: struct name_cache).
 *
 * NAME_WIDTH: the short forms' width in text. A report's kernel table has 90 columns before
 * its names (with counters), so a 50-wide name keeps most rows within 140; PyTorch's kernels
 * keep their name and first template arguments there ("at::native::reduce_kernel<128, 4,
 * ReduceOp<...> >"). A width of 0 (--wide) means whole names.
 */
#define NAME_WIDTH 50

/*
 * TIMELINE_NAME_WIDTH: the short forms that title a timeline's slices. A timeline is written
 * as its trace streams, so its titles cannot be widened against each other as a table's are:
 * they are wider instead. At 150 no two kernels of a committed H200 trace share a title (at
 * 50, 1,058 pairs did; at 100, 45); the slice's arguments hold the name whole.
 */
#define TIMELINE_NAME_WIDTH 150

/* name_readable - @name demangled whole (@width 0) or in demangle_short's form at @width; a
 * copy of @name when the demangler refuses it. Return: allocated (free it); dies on OOM. */
char *name_readable(const char *name, size_t width);

/*
 * name_table - how a table's @n names (its rows: at 0 they are compared pairwise) print:
 * pairwise distinct where the names are. At @width, demangle_short_names' forms; at 0 (--wide), each demangled whole, or
 * as recorded where two whole forms of distinct names meet. Print each cleaned and whole (a
 * cut could make two alike). Return: @n strings (NULL for @n = 0); free with
 * demangle_names_free.
 */
char **name_table(const char *const *names, size_t n, size_t width);

/*
 * json_name - @key: @name demangled whole (as recorded when the demangler refuses it), and
 * @mangled_key: @name as recorded. Both null when @name is NULL.
 */
void json_name(struct json *j, const char *key, const char *mangled_key, const char *name);

/*
 * A timeline names the same kernels over and over: struct name_cache keeps the forms of the
 * NAME_CACHE_SLOTS names met last (a slot for each name's address; a name found there is
 * checked by its text, so the address of a freed name can be met again). A training step
 * launches tens to a few hundred distinct kernels: most stay found from one step to the next,
 * each demangled once, not per slice. Zero it before use, name_cache_free it after.
 */
#define NAME_CACHE_SLOTS 256

struct name_forms {
	char *name;			/* as recorded (a copy) */
	char *title;			/* demangle_short at TIMELINE_NAME_WIDTH, or as recorded */
	char *whole;			/* demangled whole, or as recorded */
};

struct name_cache {
	struct name_cache_slot {
		const char *key;	/* the address the name was met at */
		struct name_forms forms;
	} slot[NAME_CACHE_SLOTS];
};

/* name_cache_get - the forms of @name (not NULL); valid until the next call. Dies on OOM. */
const struct name_forms *name_cache_get(struct name_cache *c, const char *name);
void name_cache_free(struct name_cache *c);

#endif /* GPUSHIM_OUTPUT_H */

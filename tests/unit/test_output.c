// SPDX-License-Identifier: MIT
/*
 * test_output.c - the JSON writer escapes everything a trace can contain (quotes, backslashes,
 * control characters), passes UTF-8 through, replaces bytes that are not UTF-8 with U+FFFD and
 * nests correctly; text output's
 * print_clean lets no terminal control through; unit formatting is fixed-precision.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "output/output.h"

static char *capture(void (*fn)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f);
	fclose(f);
	return buf;
}

static void escape_cases(FILE *f)
{
	static const char s[] = "a\"b\\c\nd\te\x01\x7f\xc3\xa9 void f<int, 2>(x)";

	json_escape(f, s, sizeof(s) - 1);
}

static void nested(FILE *f)
{
	struct json j;

	json_init(&j, f, 0);
	json_object_begin(&j, NULL);
	json_str(&j, "k", "v");
	json_array_begin(&j, "a");
	json_u64(&j, NULL, 1);
	json_i64(&j, NULL, -2);
	json_object_begin(&j, NULL);
	json_null(&j, "n");
	json_object_end(&j);
	json_array_end(&j);
	json_double(&j, "d", 1.0 / 3, 3);
	json_bool(&j, "b", 1);
	json_str(&j, "s", NULL);
	json_object_end(&j);
}

static void test_escape(void)
{
	char *out = capture(escape_cases);

	CHECK_STR(out, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f\xc3\xa9 void f<int, 2>(x)\"");
	free(out);
}

static char *escaped(const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	json_escape(f, s, len);
	fclose(f);
	return buf;
}

#define CHECK_ESCAPE(in, want)                                                                     \
	do {                                                                                       \
		char *out_ = escaped(in, sizeof(in) - 1);                                          \
		CHECK_STR(out_, want);                                                             \
		free(out_);                                                                        \
	} while (0)

/*
 * UTF-8 passes through as it is (a path or a name in any language), up to 4-byte characters
 * and U+10FFFF; each byte that is not part of a well-formed character becomes \ufffd; what a
 * terminal would act on (C1 controls as UTF-8, separators, bidirectional overrides) is escaped,
 * the same text to a parser.
 */
static void test_escape_utf8(void)
{
	CHECK_ESCAPE("/home/jos\xc3\xa9/\xe8\xae\xad\xe7\xbb\x83 \xf0\x9f\x9a\x80.trace",
		     "\"/home/jos\xc3\xa9/\xe8\xae\xad\xe7\xbb\x83 \xf0\x9f\x9a\x80.trace\"");
	/* The edges: U+00A0, U+07FF, U+0800, U+FFFD, U+10FFFF. */
	CHECK_ESCAPE("\xc2\xa0\xdf\xbf\xe0\xa0\x80\xef\xbf\xbd\xf4\x8f\xbf\xbf",
		     "\"\xc2\xa0\xdf\xbf\xe0\xa0\x80\xef\xbf\xbd\xf4\x8f\xbf\xbf\"");
	/* Stray bytes; overlong '/' in 2 and 3 bytes; a surrogate; past U+10FFFF. */
	CHECK_ESCAPE("a\xff" "b\x80" "c\x9b", "\"a\\ufffdb\\ufffdc\\ufffd\"");
	CHECK_ESCAPE("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	CHECK_ESCAPE("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_ESCAPE("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_ESCAPE("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* A character cut short by the end, by ASCII; a continuation too many. */
	CHECK_ESCAPE("ab\xc3", "\"ab\\ufffd\"");
	CHECK_ESCAPE("\xe2\x82x", "\"\\ufffd\\ufffdx\"");
	CHECK_ESCAPE("\xc3\xa9\xa9", "\"\xc3\xa9\\ufffd\"");
	/* C1 controls as UTF-8 (CSI, NEL); separators and bidirectional overrides. */
	CHECK_ESCAPE("\xc2\x9b" "2J\xc2\x85", "\"\\u009b2J\\u0085\"");
	CHECK_ESCAPE("\xe2\x80\xa8\xe2\x80\xae\xe2\x81\xa9", "\"\\u2028\\u202e\\u2069\"");
	CHECK_ESCAPE("a\0b", "\"a\\u0000b\"");	/* a length, not a C string */
}

/*
 * Every byte value in a JSON string comes out as valid UTF-8 with no control: each byte alone
 * is ASCII (controls escaped) or, from 0x80 on, not UTF-8 (\ufffd), so the output is ASCII.
 */
static void escape_all(FILE *f)
{
	char s[255];
	int c;

	for (c = 1; c < 256; c++)
		s[c - 1] = (char)c;
	json_escape(f, s, sizeof(s));
}

static void test_escape_all(void)
{
	char *out = capture(escape_all);
	size_t i, bad = 0, nr_fffd = 0;
	const char *p;

	for (i = 0; out[i]; i++)
		bad += (unsigned char)out[i] < 0x20 || (unsigned char)out[i] >= 0x7f;
	for (p = out; (p = strstr(p, "\\ufffd")); p++)
		nr_fffd++;
	CHECK_EQ(bad, 0);
	CHECK(strstr(out, "\\u001b") && strstr(out, "\\u007f"));
	CHECK_EQ(nr_fffd, 128);
	free(out);
}

static char *html(const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	html_escape(f, s, len);
	fclose(f);
	return buf;
}

#define FFFD "\xef\xbf\xbd"
#define CHECK_HTML(in, want)                                                                       \
	do {                                                                                       \
		char *out_ = html(in, sizeof(in) - 1);                                             \
		CHECK_STR(out_, want);                                                             \
		free(out_);                                                                        \
	} while (0)

/*
 * html_escape: markup's five characters as references, in text and in quoted attributes alike;
 * UTF-8 text as it is; what a terminal would not show and bytes that are not UTF-8 as U+FFFD
 * (HTML forbids the controls; a bidirectional override would turn a row around).
 */
static void test_html(void)
{
	CHECK_HTML("void k<float, &f>(\"a\", 'b')",
		   "void k&lt;float, &amp;f&gt;(&quot;a&quot;, &#39;b&#39;)");
	CHECK_HTML("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;");
	CHECK_HTML("&amp;", "&amp;amp;");
	CHECK_HTML("jos\xc3\xa9 \xe8\xae\xad \xf0\x9f\x9a\x80",
		   "jos\xc3\xa9 \xe8\xae\xad \xf0\x9f\x9a\x80");
	CHECK_HTML("a\x1b]0;t\x07\x7f" "b", "a" FFFD "]0;t" FFFD FFFD "b");
	CHECK_HTML("\xc2\x9b" "2J\xe2\x80\xa8\xe2\x80\xae", FFFD "2J" FFFD FFFD);
	CHECK_HTML("a\xff" "b\xc0\xaf", "a" FFFD "b" FFFD FFFD);
	CHECK_HTML("x\0y", "x" FFFD "y");	/* a length, not a C string */
	CHECK_HTML("tab\tline\n", "tab" FFFD "line" FFFD);
}

static char *clean(const char *s, size_t max, size_t *nr_chars)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*nr_chars = print_clean(f, s, max);
	fclose(f);
	return buf;
}

#define CHECK_CLEAN(in, max, want, want_chars)                                                     \
	do {                                                                                       \
		size_t n_;                                                                         \
		char *out_ = clean(in, max, &n_);                                                  \
		CHECK_STR(out_, want);                                                             \
		CHECK_EQ(n_, want_chars);                                                          \
		free(out_);                                                                        \
	} while (0)

/*
 * print_clean: what a terminal would take for the start of an escape sequence or a line break
 * (C0, DEL, C1 raw or as UTF-8, separators, bidirectional overrides, bytes that are not UTF-8)
 * becomes '?', UTF-8 text stays, and a cut never splits a character.
 */
static void test_clean(void)
{
	CHECK_CLEAN("void k<int>(float*)", 100, "void k<int>(float*)", 19);
	CHECK_CLEAN("\x1b]0;pwned\x07\x1b[31mred\x7f\n\t", 100, "?]0;pwned??[31mred???", 21);
	CHECK_CLEAN("a\xc2\x9b" "31mb\x9b" "c", 100, "a?31mb?c", 8);	/* C1 CSI: UTF-8, raw */
	CHECK_CLEAN("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 100,
		    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 8);
	CHECK_CLEAN("\xe2\x80\xae" "evil\xe2\x80\xa8" "x\xe2\x81\xa6", 100, "?evil?x?", 8);
	CHECK_CLEAN("\xc0\xaf\xe0\x80\xaf\xed\xa0\x80\xf4\x90\x80\x80\xff", 100,
		    "?????????????", 13);		/* overlong, surrogate, past U+10FFFF */
	CHECK_CLEAN("ab\xc3", 100, "ab?", 3);	/* a character cut short by the end */
	CHECK_CLEAN("abcdef", 4, "abcd...", 7);
	CHECK_CLEAN("abc\xc3\xa9", 4, "abc...", 6);	/* never half a character */
	CHECK_CLEAN("abc\xc3\xa9", 5, "abc\xc3\xa9", 4);
	CHECK_CLEAN("", 4, "", 0);
}

static void test_nesting(void)
{
	char *out = capture(nested);

	CHECK_STR(out, "{\"k\":\"v\",\"a\":[1,-2,{\"n\":null}],\"d\":0.333,\"b\":true,\"s\":null}");
	free(out);
}

static void test_units(void)
{
	char b[32];

	CHECK_STR(fmt_ns(b, sizeof(b), 999), "999 ns");
	CHECK_STR(fmt_ns(b, sizeof(b), 1500), "1.50 us");
	CHECK_STR(fmt_ns(b, sizeof(b), 2500000), "2.50 ms");
	CHECK_STR(fmt_ns(b, sizeof(b), 3000000000ull), "3.000 s");
	CHECK_STR(fmt_bytes(b, sizeof(b), 512), "512 B");
	CHECK_STR(fmt_bytes(b, sizeof(b), 3u << 20), "3.00 MiB");
	CHECK_STR(fmt_count(b, sizeof(b), 1234567), "1,234,567");
	CHECK_STR(fmt_count(b, sizeof(b), 12), "12");
}

int main(void)
{
	RUN(test_escape);
	RUN(test_escape_utf8);
	RUN(test_escape_all);
	RUN(test_html);
	RUN(test_clean);
	RUN(test_nesting);
	RUN(test_units);
	return TEST_RESULT();
}

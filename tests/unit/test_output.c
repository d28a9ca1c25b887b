// SPDX-License-Identifier: MIT
/*
 * test_output.c - the JSON writer escapes everything a trace can contain (quotes, backslashes,
 * control bytes, bytes >= 0x80 from C++ names or garbage) and nests correctly; unit formatting
 * is fixed-precision.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "output.h"

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

	CHECK_STR(out, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f\\u00c3\\u00a9 void f<int, 2>(x)\"");
	free(out);
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
	RUN(test_nesting);
	RUN(test_units);
	return TEST_RESULT();
}

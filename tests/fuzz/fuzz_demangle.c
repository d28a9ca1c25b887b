// SPDX-License-Identifier: MIT
/*
 * fuzz_demangle.c - libFuzzer target for the demangler (analyzer/util/demangle.c): the input
 * is names, one a line, as a trace's strings could hold them (any bytes). Each goes through
 * demangle into buffers of several sizes and demangle_short at several widths; all the lines
 * through demangle_short_names. Checked beyond crashes, hangs and sanitizer reports: the
 * return convention (a length or -1, the same for every buffer; "..." on truncation; ""
 * on refusal), printable ASCII out, demangle and demangle_short refusing the same names, the
 * same answer twice, and distinct names printing distinct table forms.
 * Built with -Dfuzz=true (clang); tests/fuzz/run.sh runs it (seeds: tests/fuzz/demangle/).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINES 16

static char big[1 << 16], again[1 << 16], small[32];

static void check(int ok, const char *what, const char *name)
{
	if (!ok) {
		fprintf(stderr, "fuzz_demangle: %s: %s\n", what, name);
		abort();
	}
}

static int printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return 0;
	return 1;
}

static void one(const char *name)
{
	static const size_t sizes[] = { 1, 4, 17, sizeof(small) };
	static const size_t widths[] = { 0, 40, (size_t)-1 };
	int n = demangle(name, big, sizeof(big)), m;
	size_t i;

	check(n >= -1, "bad return", name);
	check(n != -1 || !big[0], "refusal not empty", name);
	check(printable(big), "not printable", name);
	if (n >= 0 && (size_t)n < sizeof(big))
		check(strlen(big) == (size_t)n, "length", name);
	check(demangle(name, again, sizeof(again)) == n && !strcmp(big, again), "not the same",
	      name);
	check(demangle(name, NULL, 0) == n, "NULL buffer", name);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		m = demangle(name, small, sizes[i]);
		check(m == n, "return depends on the buffer", name);
		if (n < 0)
			continue;
		if ((size_t)n < sizes[i]) {
			check(!strcmp(small, big), "fits but differs", name);
		} else {
			check(strlen(small) == sizes[i] - 1, "truncated length", name);
			if (sizes[i] >= 4)
				check(!strcmp(small + sizes[i] - 4, "...") &&
					      !strncmp(small, big, sizes[i] - 4),
				      "truncation unmarked", name);
		}
	}
	for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		m = demangle_short(name, again, sizeof(again), widths[i]);
		check((m < 0) == (n < 0), "short and whole disagree", name);
		check(m != -1 || !again[0], "short refusal not empty", name);
		check(printable(again), "short not printable", name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *names[MAX_LINES], **forms, *p;
	size_t n = 0, i, j;

	if (size > 3 * DEMANGLE_MAX_INPUT)
		return 0;
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	for (p = buf; n < MAX_LINES; p++) {
		names[n++] = p;
		if (!(p = strchr(p, '\n')))
			break;
		*p = 0;
	}
	for (i = 0; i < n; i++)
		one(names[i]);
	forms = demangle_short_names((const char *const *)names, n, 40);
	for (i = 0; i < n; i++) {
		check(printable(forms[i]) || !printable(names[i]), "table form not printable",
		      names[i]);
		for (j = i + 1; j < n; j++)
			check(!strcmp(names[i], names[j]) || strcmp(forms[i], forms[j]),
			      "distinct names print alike", names[i]);
	}
	demangle_names_free(forms, n);
	free(buf);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * demangle.c - demangle.h's entry points: the checks on untrusted input, the short forms'
 * levels and the table helper's widening. The grammar is demangle_parse.c's, the printing
 * demangle_print.c's. Allocates only in demangle_short_names; no I/O.
 */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

#include "demangle_int.h"
#include "util.h"

/*
 * Rust's legacy symbols are C++ nested names whose last component is a hash, "17h" and 16 hex
 * digits, then E (and maybe a suffix); c++filt prints them the Rust way ("$LT$" as "<"), which
 * this demangler does not.
 */
static int is_rust_legacy(const char *s, size_t len)
{
	const char *end = s + len, *e;
	int i;

	if (s[2] != 'N')
		return 0;
	for (e = s; (e = memchr(e, 'E', (size_t)(end - e))); e++) {
		if (e - s < 3 + 19 || memcmp(e - 19, "17h", 3) || (e + 1 != end && e[1] != '.'))
			continue;
		for (i = 16; i > 0; i--)
			if (!((e[-i] >= '0' && e[-i] <= '9') || (e[-i] >= 'a' && e[-i] <= 'f')))
				break;
		if (!i)
			return 1;
	}
	return 0;
}

/* The tree of @mangled in @nodes, or NULL when refused. */
static struct dm_node *parse(const char *mangled, struct dm_node *nodes)
{
	size_t i;

	if (!mangled || mangled[0] != '_' || mangled[1] != 'Z')
		return NULL;
	for (i = 0; mangled[i]; i++)
		if (i >= DEMANGLE_MAX_INPUT || mangled[i] < 0x21 || mangled[i] > 0x7e)
			return NULL;
	if (is_rust_legacy(mangled, i))
		return NULL;
	return dm_parse(mangled, nodes);
}

/* The convention of demangle: "" on refusal, "..." at the end of a cut name. */
static int finish(long len, char *out, size_t out_len)
{
	if (len < 0) {
		if (out_len)
			out[0] = 0;
		return -1;
	}
	if ((size_t)len >= out_len && out_len >= 4)
		memcpy(out + out_len - 4, "...", 3);
	return (int)len;
}

int demangle(const char *mangled, char *out, size_t out_len)
{
	struct dm_node nodes[DM_MAX_NODES];
	struct dm_node *root = parse(mangled, nodes);

	return finish(root ? dm_print(root, out, out_len, NULL, NULL) : -1, out, out_len);
}

/*
 * The shortening steps of demangle_short for @root, longest first: the plain short form; locals
 * folded; scopes stripped; then for d from the deepest template argument list up to the
 * outermost, lists at depth d cut after k arguments (k from all but one down to 1, at most
 * MAX_KEEP_STEPS of them) and then lists at depth d and deeper elided. Returns how many (1 when
 * the name has no template arguments), or -1 when the name does not print.
 */
#define MAX_KEEP_STEPS 8
#define MAX_STEPS (3 + DM_STATS_DEPTH * (MAX_KEEP_STEPS + 1))
static int short_steps(struct dm_node *root, struct dm_short *steps)
{
	struct dm_short sh = { .is_short = 1, .max_depth = -1 };
	struct dm_print_stats st;
	int n = 0, d, k;

	/* refused whole, refused short (a T_ outside any template is in the parameters) */
	if (dm_print(root, NULL, 0, NULL, NULL) < 0 || dm_print(root, NULL, 0, &sh, &st) < 0)
		return -1;
	steps[n++] = sh;
	if (!st.depth)
		return n;
	sh.fold_locals = 1;
	steps[n++] = sh;
	sh.strip_scopes = 1;
	steps[n++] = sh;
	for (d = st.depth < DM_STATS_DEPTH ? st.depth : DM_STATS_DEPTH - 1; d >= 1; d--) {
		sh.max_depth = d;
		for (k = st.args[d] - 1; k >= 1 && k >= st.args[d] - MAX_KEEP_STEPS; k--) {
			sh.keep_args = k;
			steps[n++] = sh;
		}
		sh.max_depth = d - 1;
		sh.keep_args = 0;
		steps[n++] = sh;
	}
	return n;
}

/*
 * The short form of @mangled at step *@step of short_steps, or (*@step < 0) at the first
 * step that fits @width, measured without printing; *@step is set to the step taken (clamped
 * to the last). Return: as demangle_short.
 */
static int short_at(const char *mangled, char *out, size_t out_len, size_t width, int *step)
{
	struct dm_node nodes[DM_MAX_NODES];
	struct dm_short steps[MAX_STEPS];
	struct dm_node *root = parse(mangled, nodes);
	int n = root ? short_steps(root, steps) : -1, i = *step;

	if (n < 0)
		return finish(-1, out, out_len);
	if (i < 0) {
		for (i = 0; i < n - 1; i++) {
			long len = dm_print(root, NULL, 0, &steps[i], NULL);

			if (len < 0 || (size_t)len <= width)
				break;
		}
	}
	*step = i < n ? i : n - 1;
	return finish(dm_print(root, out, out_len, &steps[*step], NULL), out, out_len);
}

int demangle_short(const char *mangled, char *out, size_t out_len, size_t width)
{
	int step = -1;

	return short_at(mangled, out, out_len, width, &step);
}

/* ---- Tables ---- */

/* A table row's form: a short_steps step (>= 0; -1: the one the width chooses), the whole
 * demangled name, or the name as it is. */
#define LEVEL_WHOLE -2
#define LEVEL_RAW -3

static char *form_of(const char *name, int *level, size_t width)
{
	char small[256], *s;
	int len, lvl = *level;

	if (lvl == LEVEL_RAW)
		return xstrdup(name);
	len = lvl == LEVEL_WHOLE ? demangle(name, small, sizeof(small)) :
				   short_at(name, small, sizeof(small), width, level);
	if (len < 0) {
		*level = LEVEL_RAW;
		return xstrdup(name);
	}
	if ((size_t)len < sizeof(small))
		return xstrdup(small);
	s = xmalloc((size_t)len + 1);
	if (lvl == LEVEL_WHOLE)
		demangle(name, s, (size_t)len + 1);
	else
		short_at(name, s, (size_t)len + 1, width, level);
	return s;
}

/* The next longer form: the previous shortening step, then whole, then the mangled name. */
static int widen(int level)
{
	return level > 0 ? level - 1 : level == 0 ? LEVEL_WHOLE : LEVEL_RAW;
}

struct row {
	const char *form, *name;
	size_t i;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->form, y->form);

	if (!c)
		c = strcmp(x->name, y->name);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

char **demangle_short_names(const char *const *names, size_t n, size_t width)
{
	char **forms;
	int *level;
	struct row *rows;
	size_t i, j;
	int round;

	if (!n)
		return NULL;
	forms = xmalloc(n * sizeof(*forms));
	level = xmalloc(n * sizeof(*level));
	rows = xmalloc(n * sizeof(*rows));
	for (i = 0; i < n; i++) {
		level[i] = -1;		/* the step @width chooses */
		forms[i] = form_of(names[i], &level[i], width);
	}
	/* Each round widens every name of a group of distinct names that print alike, by one
	 * step that prints differently. A widened name may meet another's narrower form, hence
	 * rounds; at LEVEL_RAW names are their own (distinct) text. The bound is a safety net:
	 * each round widens some name, and a name has at most MAX_STEPS + 2 forms. */
	for (round = 0; round < 4 * (MAX_STEPS + 2); round++) {
		int changed = 0;

		for (i = 0; i < n; i++)
			rows[i] = (struct row){ forms[i], names[i], i };
		xqsort(rows, n, sizeof(*rows), cmp_row);
		for (i = 0; i < n; i = j) {
			int distinct = 0;
			size_t k;

			for (j = i + 1; j < n && !strcmp(rows[j].form, rows[i].form); j++)
				if (strcmp(rows[j].name, rows[j - 1].name))
					distinct = 1;
			if (!distinct)
				continue;
			for (k = i; k < j; k++) {
				size_t r = rows[k].i;

				while (level[r] != LEVEL_RAW) {
					char *f;

					level[r] = widen(level[r]);
					f = form_of(names[r], &level[r], width);
					if (strcmp(f, forms[r])) {
						free(forms[r]);
						forms[r] = f;
						changed = 1;
						break;
					}
					free(f);
				}
			}
		}
		if (!changed)
			break;
	}
	free(rows);
	free(level);
	return forms;
}

void demangle_names_free(char **names, size_t n)
{
	size_t i;

	if (!names)
		return;
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

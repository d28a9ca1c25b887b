// SPDX-License-Identifier: MIT
/*
 * test_demangle.c - demangle, demangle_short and demangle_short_names (util/demangle.c) against
 * tests/unit/demangle_cases.txt (argv[1]): every name there demangles to what c++filt printed
 * for it or is refused; truncation says so; hostile names (too long, too deep, exponential
 * output, bytes outside ASCII) are refused without harm; the short forms follow their rule;
 * and the short forms of the H200 fixtures' kernel names come out pairwise distinct at every
 * width.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "util/demangle.h"
#include "util/util.h"

struct dcase {
	char *name, *want;	/* want NULL: refused */
	int section;		/* 0, 1: the fixtures' kernel names */
};

static struct dcase *cases;
static size_t nr_cases;
static char out[1 << 17];

static void load(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1 << 16];
	size_t cap = 0;
	int section = -1;

	if (!f) {
		fprintf(stderr, "test_demangle: cannot open %s\n", path);
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "# ----", 6))
			section++;
		if (!line[0] || line[0] == '#' || !(tab = strchr(line, '\t')))
			continue;
		*tab = 0;
		XGROW(cases, cap, nr_cases + 1);
		cases[nr_cases].name = xstrdup(line);
		cases[nr_cases].want = strcmp(tab + 1, "-") ? xstrdup(tab + 1) : NULL;
		cases[nr_cases].section = section;
		nr_cases++;
	}
	fclose(f);
}

static int printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return 0;
	return 1;
}

/* Every case: the demangled name or the refusal, and the same through exact-size buffers. */
static void test_cases(void)
{
	size_t i, nr_ok = 0, nr_refused = 0;

	CHECK(nr_cases > 800);
	for (i = 0; i < nr_cases; i++) {
		const struct dcase *c = &cases[i];
		int n = demangle(c->name, out, sizeof(out));

		if (!c->want) {
			if (n != -1 || out[0])
				fprintf(stderr, "  not refused: %s -> %s\n", c->name, out);
			CHECK_EQ(n, -1);
			CHECK_STR(out, "");
			CHECK_EQ(demangle_short(c->name, out, sizeof(out), 40), -1);
			nr_refused++;
			continue;
		}
		if (n < 0 || strcmp(out, c->want))
			fprintf(stderr, "  %s\n    got  %s\n    want %s\n", c->name,
				n < 0 ? "-1" : out, c->want);
		CHECK_EQ(n, (long long)strlen(c->want));
		CHECK_STR(out, c->want);
		CHECK(printable(out));
		CHECK(demangle_short(c->name, out, sizeof(out), 40) >= 0);
		nr_ok++;
	}
	/* the fixtures' kernel names: every _Z one demangles, none of the others */
	for (i = 0; i < nr_cases; i++)
		if (cases[i].section <= 1)
			CHECK_EQ(!cases[i].want, strncmp(cases[i].name, "_Z", 2) != 0);
	fprintf(stderr, "demangle: %zu names as c++filt prints them, %zu refused\n", nr_ok,
		nr_refused);
}

/* A name that does not fit says so: its length, and "..." at the end of what fits. */
static void test_truncation(void)
{
	const char *m = "_Z10fma_chainsPfi", *want = "fma_chains(float*, int)";
	size_t len = strlen(want), k;
	char buf[64];

	CHECK_EQ(demangle(m, NULL, 0), (long long)len);
	for (k = 1; k <= len + 1; k++) {
		memset(buf, 'x', sizeof(buf));
		CHECK_EQ(demangle(m, buf, k), (long long)len);
		CHECK_EQ(strlen(buf), k - 1 < len ? k - 1 : len);
		CHECK_EQ(buf[k], 'x');	/* nothing written past the buffer */
		if (k == len + 1)
			CHECK_STR(buf, want);
		else if (k >= 4)
			CHECK(!strcmp(buf + k - 4, "...") && !strncmp(buf, want, k - 4));
	}
	CHECK_EQ(demangle_short(m, buf, 6, 80), 10);
	CHECK_STR(buf, "fm...");
	CHECK_EQ(demangle("triton_poi_fused_add_0", buf, 1), -1);
	CHECK_STR(buf, "");
}

/* Names no compiler writes: refused, in bounded time and stack. */
static void test_hostile(void)
{
	static char big[3 * DEMANGLE_MAX_INPUT];
	size_t i, n;

	CHECK_EQ(demangle(NULL, out, sizeof(out)), -1);
	CHECK_EQ(demangle("", out, sizeof(out)), -1);
	CHECK_EQ(demangle("_Z1f\x01v", out, sizeof(out)), -1);
	CHECK_EQ(demangle("_Z1f\x80v", out, sizeof(out)), -1);
	CHECK_EQ(demangle("_Z1f v", out, sizeof(out)), -1);
	CHECK_EQ(demangle("_Z3f\033[2Jv", out, sizeof(out)), -1);
	CHECK_EQ(demangle("_Z9fooooo", out, sizeof(out)), -1);	/* length past the end */
	CHECK_EQ(demangle("_Z2147483648fv", out, sizeof(out)), -1);	/* length overflows int */
	CHECK_EQ(demangle("_Z1fS4294967296_", out, sizeof(out)), -1);

	/* longer than DEMANGLE_MAX_INPUT, though well formed */
	n = (size_t)snprintf(big, sizeof(big), "_Z1f");
	while (n < DEMANGLE_MAX_INPUT + 10)
		big[n++] = 'i';
	big[n] = 0;
	CHECK_EQ(demangle(big, out, sizeof(out)), -1);
	/* shorter, but more nodes than the arena holds */
	big[DEMANGLE_MAX_INPUT - 1] = 0;
	CHECK_EQ(demangle(big, out, sizeof(out)), -1);
	/* nested past the parser's depth: pointers, template arguments, local names */
	n = (size_t)snprintf(big, sizeof(big), "_Z1f");
	for (i = 0; i < 4000; i++)
		big[n++] = 'P';
	strcpy(big + n, "i");
	CHECK_EQ(demangle(big, out, sizeof(out)), -1);
	n = (size_t)snprintf(big, sizeof(big), "_Z1f");
	for (i = 0; i < 1000; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "I1a");
	for (i = 0; i < 1000; i++)
		big[n++] = 'E';
	strcpy(big + n, "v");
	CHECK_EQ(demangle(big, out, sizeof(out)), -1);
	n = 0;
	for (i = 0; i < 1000; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%s", i ? "Z1f" : "_ZZ1f");
	strcpy(big + n, "v");
	CHECK_EQ(demangle(big, out, sizeof(out)), -1);
	/* each function type holds the previous twice: 2^40 names if printed */
	n = (size_t)snprintf(big, sizeof(big), "_Z1f1APFvS_S_E");
	for (i = 1; i < 40; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "PFvS%zu_S%zu_E", 2 * i - 1,
				      2 * i - 1);
	CHECK_EQ(demangle(big, out, sizeof(out)), -1);
	CHECK_EQ(demangle_short(big, out, sizeof(out), 40), -1);
	/* a template argument that names itself: T_ of f<T_> */
	CHECK_EQ(demangle("_Z1fIT_EvS_", out, sizeof(out)), -1);
	CHECK_EQ(demangle("_Z1fIRT_EvT_", out, sizeof(out)), -1);
}

static void check_short(const char *m, size_t width, const char *want)
{
	int n = demangle_short(m, out, sizeof(out), width);

	CHECK_EQ(n, (long long)strlen(want));
	CHECK_STR(out, want);
}

/* The short form's rule, step by step (demangle.h). */
static void test_short(void)
{
	const char *v = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctor"
			"IfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_";
	const char *t = "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_16tanh_"
			"kernel_cudaERNS_18TensorIteratorBaseEENKUlvE0_clEvENKUlvE0_clEvEUlfE_"
			"St5arrayIPcLm2EEEEviT0_T1_";

	/* 1: no return type, no parameters; nested functions' parameters "(...)" */
	check_short("_Z10fma_chainsPfi", 80, "fma_chains");
	check_short("_Z10fma_chainsPfi.part.0", 80, "fma_chains [clone .part.0]");
	check_short(v, 200, "at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor"
		    "<float, float, float, at::native::binary_internal::MulFunctor<float> >, "
		    "std::array<char*, 2ul> >");
	check_short(t, 300, "at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_"
		    "cuda(...)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
		    "const::{lambda(float)#1}, std::array<char*, 2ul> >");
	/* 2a: a chain of local names folded */
	check_short(t, 130, "at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_"
		    "cuda(...)::...::{lambda(float)#1}, std::array<char*, 2ul> >");
	/* 2b: scopes dropped in arguments, but for members */
	check_short(t, 120, "at::native::vectorized_elementwise_kernel<4, tanh_kernel_cuda(...)::"
		    "...::{lambda(float)#1}, array<char*, 2ul> >");
	check_short(v, 120, "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<float, "
		    "float, float, MulFunctor<float> >, array<char*, 2ul> >");
	check_short("_Z1fIN2ns1AIiEEEvT_", 10, "f<A<int> >");
	check_short("_ZN5outer5innerIXadL_ZN2ns1AIiEclEvEEEEvv", 33,
		    "outer::inner<&A<int>::operator()>");
	/* 2c: nested lists "<...>" */
	check_short(v, 90, "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<...>, "
		    "array<...> >");
	/* 2d: the first arguments kept */
	check_short(v, 75, "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<...>, ...>");
	check_short(t, 100, "at::native::vectorized_elementwise_kernel<4, tanh_kernel_cuda(...)::"
		    "...::{lambda(float)#1}, ...>");
	check_short(v, 60, "at::native::vectorized_elementwise_kernel<4, ...>");
	/* 2e, 3: all arguments elided; the name itself never cut */
	check_short(v, 10, "at::native::vectorized_elementwise_kernel<...>");
	check_short("_Z1fIN2ns1AIiEEEvT_", 8, "f<...>");
	check_short("_ZN1A1BIiE1fEv", 3, "A::B<...>::f");
	check_short("_ZN2ns16a_very_long_nameEv", 3, "ns::a_very_long_name");
	CHECK_EQ(demangle_short("loop_multiply_fusion", out, sizeof(out), 80), -1);
}

static size_t nr_distinct(char **forms, const char *const *names, size_t n)
{
	size_t i, j, bad = 0;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (!strcmp(forms[i], forms[j]) && strcmp(names[i], names[j])) {
				fprintf(stderr, "  alike: %s\n    %s\n    %s\n", forms[i], names[i],
					names[j]);
				bad++;
			}
	return bad;
}

/* The fixtures' kernel names, as a report's table would hold them: distinct at every width. */
static void test_unique(void)
{
	static const size_t widths[] = { 0, 20, 40, 60, 80, 100, 140, SIZE_MAX };
	const char **names = xmalloc((nr_cases + 3) * sizeof(*names));
	size_t i, w, n = 0, nr_narrowed = 0;

	for (i = 0; i < nr_cases; i++)
		if (cases[i].section <= 1)
			names[n++] = cases[i].name;
	CHECK(n > 200);
	/* a name twice, and a raw name equal to another's short form */
	names[n++] = names[0];
	names[n++] = "fma_chains";
	for (w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		char **forms = demangle_short_names(names, n, widths[w]);

		CHECK_EQ(nr_distinct(forms, names, n), 0);
		CHECK_STR(forms[n - 2], forms[0]);
		CHECK_STR(forms[n - 1], "fma_chains");
		for (i = 0; i < n; i++) {
			CHECK(printable(forms[i]));
			/* not demangled: as it is */
			if (strncmp(names[i], "_Z", 2))
				CHECK_STR(forms[i], names[i]);
		}
		/* a name alike to none keeps its short form at the width */
		if (widths[w] == 80) {
			size_t nr_mangled = 0;

			for (i = 0; i < n; i++) {
				if (demangle_short(names[i], out, sizeof(out), 80) < 0)
					continue;
				nr_mangled++;
				if (!strcmp(forms[i], out))
					nr_narrowed++;
			}
			fprintf(stderr, "demangle: %zu of %zu mangled fixture names at their short "
				"form (80 wide), the others widened\n", nr_narrowed, nr_mangled);
			CHECK(nr_narrowed > nr_mangled / 2);
		}
		demangle_names_free(forms, n);
	}
	CHECK(demangle_short_names(names, 0, 80) == NULL);
	free(names);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: test_demangle demangle_cases.txt\n");
		return 2;
	}
	load(argv[1]);
	RUN(test_cases);
	RUN(test_truncation);
	RUN(test_hostile);
	RUN(test_short);
	RUN(test_unique);
	for (i = 0; i < nr_cases; i++) {
		free(cases[i].name);
		free(cases[i].want);
	}
	free(cases);
	return TEST_RESULT();
}

// SPDX-License-Identifier: MIT
/*
 * demangle_parse.c - the Itanium C++ ABI's grammar of mangled names, read into a tree of
 * dm_nodes (demangle_int.h) that demangle_print.c prints as c++filt does. Owns the
 * substitution table and the builtin-type and operator tables. Must not allocate (a fixed
 * arena), recurse deeper than DM_MAX_PARSE_DEPTH, or accept what it does not understand: a
 * construct it does not know makes the whole name fail, and the caller keeps the raw name.
 */
#include "demangle_int.h"

#include <limits.h>
#include <string.h>

#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')
#define IS_UPPER(c) ((c) >= 'A' && (c) <= 'Z')
#define IS_LOWER(c) ((c) >= 'a' && (c) <= 'z')

/* ---- Tables ---- */

#define B(n, lit) { n, sizeof(n) - 1, lit }
/* Indexed by the code's letter ('a' = 0), then the D-prefixed types from 26. */
const struct dm_builtin dm_builtins[] = {
	B("signed char", DM_LIT_DEFAULT),	/* a */
	B("bool", DM_LIT_BOOL),			/* b */
	B("char", DM_LIT_DEFAULT),		/* c */
	B("double", DM_LIT_FLOAT),		/* d */
	B("long double", DM_LIT_FLOAT),		/* e */
	B("float", DM_LIT_FLOAT),		/* f */
	B("__float128", DM_LIT_FLOAT),		/* g */
	B("unsigned char", DM_LIT_DEFAULT),	/* h */
	B("int", DM_LIT_INT),			/* i */
	B("unsigned int", DM_LIT_UNSIGNED),	/* j */
	{ NULL, 0, 0 },				/* k */
	B("long", DM_LIT_LONG),			/* l */
	B("unsigned long", DM_LIT_ULONG),	/* m */
	B("__int128", DM_LIT_DEFAULT),		/* n */
	B("unsigned __int128", DM_LIT_DEFAULT),	/* o */
	{ NULL, 0, 0 },				/* p */
	{ NULL, 0, 0 },				/* q */
	{ NULL, 0, 0 },				/* r */
	B("short", DM_LIT_DEFAULT),		/* s */
	B("unsigned short", DM_LIT_DEFAULT),	/* t */
	{ NULL, 0, 0 },				/* u: vendor type */
	B("void", DM_LIT_VOID),			/* v */
	B("wchar_t", DM_LIT_DEFAULT),		/* w */
	B("long long", DM_LIT_LLONG),		/* x */
	B("unsigned long long", DM_LIT_ULLONG),	/* y */
	B("...", DM_LIT_DEFAULT),		/* z */
	B("decimal32", DM_LIT_DEFAULT),		/* 26 Df */
	B("decimal64", DM_LIT_DEFAULT),		/* 27 Dd */
	B("decimal128", DM_LIT_DEFAULT),	/* 28 De */
	B("half", DM_LIT_FLOAT),		/* 29 Dh */
	B("char8_t", DM_LIT_DEFAULT),		/* 30 Du */
	B("char16_t", DM_LIT_DEFAULT),		/* 31 Ds */
	B("char32_t", DM_LIT_DEFAULT),		/* 32 Di */
	B("decltype(nullptr)", DM_LIT_DEFAULT),	/* 33 Dn */
};
#undef B

#define OP(c, n, a) { c, sizeof(n) - 1, a, n }
/* The ABI's operator codes, their spelling (a trailing space is dropped after "operator") and
 * operand count in expressions. */
const struct dm_op dm_ops[] = {
	OP("aN", "&=", 2), OP("aS", "=", 2), OP("aa", "&&", 2), OP("ad", "&", 1),
	OP("an", "&", 2), OP("at", "alignof ", 1), OP("aw", "co_await ", 1),
	OP("az", "alignof ", 1), OP("cc", "const_cast", 2), OP("cl", "()", 2),
	OP("cm", ",", 2), OP("co", "~", 1), OP("dV", "/=", 2), OP("da", "delete[] ", 1),
	OP("dc", "dynamic_cast", 2), OP("de", "*", 1), OP("dl", "delete ", 1),
	OP("ds", ".*", 2), OP("dt", ".", 2), OP("dv", "/", 2), OP("eO", "^=", 2),
	OP("eo", "^", 2), OP("eq", "==", 2), OP("ge", ">=", 2), OP("gs", "::", 1),
	OP("gt", ">", 2), OP("ix", "[]", 2), OP("lS", "<<=", 2), OP("le", "<=", 2),
	OP("li", "operator\"\" ", 1), OP("ls", "<<", 2), OP("lt", "<", 2), OP("mI", "-=", 2),
	OP("mL", "*=", 2), OP("mi", "-", 2), OP("ml", "*", 2), OP("mm", "--", 1),
	OP("na", "new[]", 3), OP("ne", "!=", 2), OP("ng", "-", 1), OP("nt", "!", 1),
	OP("nw", "new", 3), OP("oR", "|=", 2), OP("oo", "||", 2),
	OP("or", "|", 2), OP("pL", "+=", 2), OP("pl", "+", 2), OP("pm", "->*", 2),
	OP("pp", "++", 1), OP("ps", "+", 1), OP("pt", "->", 2), OP("qu", "?", 3),
	OP("rM", "%=", 2), OP("rS", ">>=", 2), OP("rc", "reinterpret_cast", 2),
	OP("rm", "%", 2), OP("rs", ">>", 2), OP("sc", "static_cast", 2), OP("ss", "<=>", 2),
	OP("st", "sizeof ", 1), OP("sz", "sizeof ", 1), OP("sZ", "sizeof...", 1),
	OP("tr", "throw", 0), OP("tw", "throw ", 1),
};
#undef OP
const size_t dm_nr_ops = sizeof(dm_ops) / sizeof(dm_ops[0]);

/* The std:: abbreviations, expanded as c++filt's verbose mode does; the class name a
 * constructor or destructor right after one takes. */
static const struct {
	char code;
	const char *text, *last_name;
} std_subs[] = {
	{ 't', "std", NULL },
	{ 'a', "std::allocator", "allocator" },
	{ 'b', "std::basic_string", "basic_string" },
	{ 's', "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
	  "basic_string" },
	{ 'i', "std::basic_istream<char, std::char_traits<char> >", "basic_istream" },
	{ 'o', "std::basic_ostream<char, std::char_traits<char> >", "basic_ostream" },
	{ 'd', "std::basic_iostream<char, std::char_traits<char> >", "basic_iostream" },
};

/* ---- Parser state ---- */

struct parser {
	const char *s;			/* the cursor */
	struct dm_node *nodes;
	int nr_nodes;
	struct dm_node *subs[DM_MAX_SUBS];
	int nr_subs;
	struct dm_node *last_name;	/* the class a constructor or destructor names */
	int depth;
	int is_expression;		/* "cv" is a cast, not a conversion operator */
	int is_conversion;		/* parsing a conversion operator's type */
	int unresolved;			/* 1: read sr<name> the new way; -1: did; 0: the old */
};

static char peek(const struct parser *p)
{
	return *p->s;
}

static char peek2(const struct parser *p)
{
	return *p->s ? p->s[1] : 0;
}

static void advance(struct parser *p, int n)
{
	while (n-- > 0 && *p->s)
		p->s++;
}

static char next(struct parser *p)
{
	char c = *p->s;

	if (c)
		p->s++;
	return c;
}

static int check(struct parser *p, char c)
{
	if (*p->s != c)
		return 0;
	p->s++;
	return 1;
}

static struct dm_node *make(struct parser *p, int kind, struct dm_node *l, struct dm_node *r)
{
	struct dm_node *n;

	if (p->nr_nodes >= DM_MAX_NODES)
		return NULL;
	n = &p->nodes[p->nr_nodes++];
	memset(n, 0, sizeof(*n));
	n->kind = (uint8_t)kind;
	n->l = l;
	n->r = r;
	return n;
}

static struct dm_node *make_name(struct parser *p, const char *s, size_t len)
{
	struct dm_node *n;

	if (len > UINT16_MAX || !(n = make(p, DM_NAME, NULL, NULL)))
		return NULL;
	n->s = s;
	n->len = (uint16_t)len;
	return n;
}

static struct dm_node *make_num(struct parser *p, int kind, int num, struct dm_node *l)
{
	struct dm_node *n = make(p, kind, l, NULL);

	if (n)
		n->num = num;
	return n;
}

static int add_sub(struct parser *p, struct dm_node *n)
{
	if (!n || p->nr_subs >= DM_MAX_SUBS)
		return 0;
	p->subs[p->nr_subs++] = n;
	return 1;
}

/* The depth guard of every recursive production. */
static int enter(struct parser *p)
{
	return ++p->depth <= DM_MAX_PARSE_DEPTH;
}

static struct dm_node *leave(struct parser *p, struct dm_node *n)
{
	p->depth--;
	return n;
}

static struct dm_node *type(struct parser *p);
static struct dm_node *name(struct parser *p);
static struct dm_node *encoding(struct parser *p, int top);
static struct dm_node *expression(struct parser *p);
static struct dm_node *expression_1(struct parser *p);
static struct dm_node *template_args(struct parser *p);
static struct dm_node *unqualified_name(struct parser *p, struct dm_node *scope);
static struct dm_node *template_arg(struct parser *p);
static struct dm_node *prefix_1(struct parser *p, int substable);

/* ---- Numbers and identifiers ---- */

/* [n] <decimal>: no digits reads 0 (as c++filt); -1 on overflow. */
static int number(struct parser *p)
{
	int neg = 0, v = 0;

	if (peek(p) == 'n') {
		neg = 1;
		advance(p, 1);
	}
	while (IS_DIGIT(peek(p))) {
		int d = peek(p) - '0';

		if (v > (INT_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		advance(p, 1);
	}
	return neg ? -v : v;
}

/* _ (0) or <number> _ (number + 1); -1 when malformed. */
static int compact_number(struct parser *p)
{
	int n;

	if (peek(p) == '_')
		n = 0;
	else if (peek(p) == 'n')
		return -1;
	else if ((n = number(p)) < 0 || n == INT_MAX)
		return -1;
	else
		n++;
	return check(p, '_') ? n : -1;
}

/* <discriminator> ::= _ <digit> | __ <number> _ ; read and ignored. */
static int discriminator(struct parser *p)
{
	int two = 0, n;

	if (peek(p) != '_')
		return 1;
	advance(p, 1);
	if (peek(p) == '_') {
		two = 1;
		advance(p, 1);
	}
	if ((n = number(p)) < 0)
		return 0;
	if (two && n >= 10 && !check(p, '_'))
		return 0;
	return 1;
}

static struct dm_node *source_name(struct parser *p)
{
	int len = number(p);
	const char *s = p->s;
	struct dm_node *n;

	if (len <= 0 || (size_t)len > strlen(s))
		return NULL;
	advance(p, len);
	/* GCC's anonymous namespaces: _GLOBAL_ then '.', '_' or '$', then N (PyTorch's
	 * _GLOBAL__N__d25d856e_22_... among them). */
	if (len >= 10 && !memcmp(s, "_GLOBAL_", 8) && (s[8] == '.' || s[8] == '_' || s[8] == '$') &&
	    s[9] == 'N')
		n = make_name(p, "(anonymous namespace)", 21);
	else
		n = make_name(p, s, (size_t)len);
	p->last_name = n;
	return n;
}

/* ---- Names ---- */

static struct dm_node *abi_tags(struct parser *p, struct dm_node *n)
{
	struct dm_node *hold = p->last_name;

	while (n && check(p, 'B')) {
		struct dm_node *tag = source_name(p);

		n = tag ? make(p, DM_TAGGED_NAME, n, tag) : NULL;
	}
	p->last_name = hold;
	return n;
}

static struct dm_node *operator_name(struct parser *p)
{
	char c1 = next(p), c2 = next(p);
	size_t i;

	if (c1 == 'v' && IS_DIGIT(c2)) {
		struct dm_node *n = source_name(p);

		return n ? make_num(p, DM_EXT_OPERATOR, c2 - '0', n) : NULL;
	}
	if (c1 == 'c' && c2 == 'v') {
		int was = p->is_conversion, kind;
		struct dm_node *t;

		p->is_conversion = !p->is_expression;
		kind = p->is_conversion ? DM_CONVERSION : DM_CAST;
		t = type(p);
		p->is_conversion = was;
		return t ? make(p, kind, t, NULL) : NULL;
	}
	for (i = 0; i < dm_nr_ops; i++)
		if (dm_ops[i].code[0] == c1 && dm_ops[i].code[1] == c2)
			return make_num(p, DM_OPERATOR, (int)i, NULL);
	return NULL;
}

/* A constructor or destructor names the class of the last source name read (c++filt's rule:
 * an inheriting constructor, CI1 <base>, names the base). */
static struct dm_node *ctor_dtor_name(struct parser *p)
{
	if (peek(p) == 'C') {
		int inheriting = 0;
		char k;

		if (peek2(p) == 'I') {
			inheriting = 1;
			advance(p, 1);
		}
		k = peek2(p);
		if (k < '1' || k > '5')
			return NULL;
		advance(p, 2);
		if (inheriting && !type(p))
			return NULL;
		return p->last_name ? make(p, DM_CTOR, p->last_name, NULL) : NULL;
	}
	if (peek(p) == 'D') {
		char k = peek2(p);

		if (k != '0' && k != '1' && k != '2' && k != '4' && k != '5')
			return NULL;
		advance(p, 2);
		return p->last_name ? make(p, DM_DTOR, p->last_name, NULL) : NULL;
	}
	return NULL;
}

/* <parameter types>: a function's or a lambda's; a lone void is the empty list. */
static struct dm_node *parmlist(struct parser *p)
{
	struct dm_node *list = NULL, **tail = &list;

	for (;;) {
		char c = peek(p);
		struct dm_node *t;

		if (!c || c == 'E' || c == '.' || c == 'Q')
			break;
		if ((c == 'R' || c == 'O') && peek2(p) == 'E')
			break;		/* a ref-qualifier of the function */
		if (!(t = type(p)) || !(*tail = make(p, DM_ARGLIST, t, NULL)))
			return NULL;
		tail = &(*tail)->r;
	}
	if (!list)
		return NULL;
	if (!list->r && list->l->kind == DM_BUILTIN && list->l->num == DM_BUILTIN_VOID)
		list->l = NULL;
	return list;
}

/* Ul <parameter types> E [<number>] _ */
static struct dm_node *lambda(struct parser *p)
{
	struct dm_node *params;
	int num;

	advance(p, 2);
	if (!(params = parmlist(p)) || !check(p, 'E') || (num = compact_number(p)) < 0)
		return NULL;
	return make_num(p, DM_LAMBDA, num, params);
}

static struct dm_node *unqualified_name(struct parser *p, struct dm_node *scope)
{
	struct dm_node *n = NULL;
	char c = peek(p);

	if (!enter(p))
		return leave(p, NULL);
	if (IS_DIGIT(c)) {
		n = source_name(p);
	} else if (IS_LOWER(c)) {
		int was = p->is_expression;

		if (c == 'o' && peek2(p) == 'n') {
			advance(p, 2);
			p->is_expression = 0;
		}
		n = operator_name(p);
		p->is_expression = was;
		if (n && n->kind == DM_OPERATOR && !strcmp(dm_ops[n->num].code, "li"))
			n = make(p, DM_UNARY, n, source_name(p));
		if (n && n->kind == DM_UNARY && !n->r)
			n = NULL;
	} else if (c == 'C' || (c == 'D' && peek2(p) != 'C')) {
		n = ctor_dtor_name(p);
	} else if (c == 'L') {
		advance(p, 1);
		if ((n = source_name(p)) && !discriminator(p))
			n = NULL;
	} else if (c == 'U' && peek2(p) == 'l') {
		n = lambda(p);
	} else if (c == 'U' && peek2(p) == 't') {
		int num;

		advance(p, 2);
		/* c++filt counts an unnamed type itself as a substitution, before its scope. */
		num = compact_number(p);
		n = num < 0 ? NULL : make_num(p, DM_UNNAMED_TYPE, num, NULL);
		if (n && !add_sub(p, n))
			n = NULL;
	}
	if (n && peek(p) == 'B')
		n = abi_tags(p, n);
	if (n && scope)
		n = make(p, DM_QUAL, scope, n);
	return leave(p, n);
}

static struct dm_node *template_param(struct parser *p)
{
	int num;

	if (!check(p, 'T') || (num = compact_number(p)) < 0)
		return NULL;
	return make_num(p, DM_TPARAM, num, NULL);
}

/* S_, S<seq-id>_, St, Sa, Sb, Ss, Si, So, Sd. */
static struct dm_node *substitution(struct parser *p)
{
	char c;
	size_t i;

	if (!check(p, 'S'))
		return NULL;
	c = next(p);
	if (c == '_' || IS_DIGIT(c) || IS_UPPER(c)) {
		unsigned id = 0;

		if (c != '_') {
			do {
				unsigned d;

				if (IS_DIGIT(c))
					d = (unsigned)(c - '0');
				else if (IS_UPPER(c))
					d = (unsigned)(c - 'A' + 10);
				else
					return NULL;
				if (id > (UINT_MAX - d) / 36)
					return NULL;
				id = id * 36 + d;
				c = next(p);
			} while (c != '_');
			id++;
		}
		return id < (unsigned)p->nr_subs ? p->subs[id] : NULL;
	}
	for (i = 0; i < sizeof(std_subs) / sizeof(std_subs[0]); i++) {
		struct dm_node *n;

		if (std_subs[i].code != c)
			continue;
		if (std_subs[i].last_name)
			p->last_name = make_name(p, std_subs[i].last_name,
						 strlen(std_subs[i].last_name));
		if (!(n = make_name(p, std_subs[i].text, strlen(std_subs[i].text))))
			return NULL;
		n->kind = DM_SUB_STD;
		if (peek(p) == 'B') {	/* a tagged abbreviation is a candidate */
			n = abi_tags(p, n);
			if (!add_sub(p, n))
				return NULL;
		}
		return n;
	}
	return NULL;
}

/*
 * The components of N...E after the qualifiers, up to its E: every prefix but the whole is a
 * candidate (when @substable).
 */
static struct dm_node *prefix_1(struct parser *p, int substable)
{
	struct dm_node *n = NULL;

	for (;;) {
		char c = peek(p);

		if (c == 'D' && (peek2(p) == 'T' || peek2(p) == 't')) {
			if (n)
				return NULL;
			n = type(p);
		} else if (c == 'I') {
			struct dm_node *args;

			if (!n || !(args = template_args(p)))
				return NULL;
			n = make(p, DM_TEMPLATE, n, args);
		} else if (c == 'T') {
			if (n)
				return NULL;
			n = template_param(p);
		} else if (c == 'M') {
			advance(p, 1);	/* a lambda's initializer scope: not printed */
			continue;
		} else if (c == 'S') {
			if (n)
				return NULL;
			if (!(n = substitution(p)))
				return NULL;
			continue;
		} else {
			n = unqualified_name(p, n);
		}
		if (!n)
			return NULL;
		if (peek(p) == 'E')
			return n;
		if (substable && !add_sub(p, n))
			return NULL;
	}
}

static struct dm_node *prefix(struct parser *p)
{
	if (!enter(p))
		return leave(p, NULL);
	return leave(p, prefix_1(p, 1));
}

/* N [<CV-qualifiers>] [<ref-qualifier>] <prefix> E */
static struct dm_node *nested_name(struct parser *p)
{
	struct dm_node *ret = NULL, **hole = &ret, *rq = NULL;

	advance(p, 1);
	for (;;) {
		int kind;

		if (peek(p) == 'r')
			kind = DM_RESTRICT_THIS;
		else if (peek(p) == 'V')
			kind = DM_VOLATILE_THIS;
		else if (peek(p) == 'K')
			kind = DM_CONST_THIS;
		else
			break;
		advance(p, 1);
		if (!(*hole = make(p, kind, NULL, NULL)))
			return NULL;
		hole = &(*hole)->l;
	}
	if (peek(p) == 'R' || peek(p) == 'O') {
		if (!(rq = make(p, next(p) == 'R' ? DM_REF_THIS : DM_RVALUE_REF_THIS, NULL, NULL)))
			return NULL;
	}
	if (!(*hole = prefix(p)) || !check(p, 'E'))
		return NULL;
	if (rq) {
		rq->l = ret;
		ret = rq;
	}
	return ret;
}

/* Z <encoding> E (<entity> [<discriminator>] | s [<discriminator>] | d [<number>] _ <name>) */
static struct dm_node *local_name(struct parser *p)
{
	struct dm_node *fn, *entity;

	advance(p, 1);
	if (!(fn = encoding(p, 0)) || !check(p, 'E'))
		return NULL;
	if (check(p, 's')) {
		if (!discriminator(p))
			return NULL;
		entity = make_name(p, "string literal", 14);
	} else {
		int num = -1;

		if (check(p, 'd') && (num = compact_number(p)) < 0)
			return NULL;
		if (!(entity = name(p)))
			return NULL;
		if (entity->kind != DM_LAMBDA && entity->kind != DM_UNNAMED_TYPE &&
		    !discriminator(p))
			return NULL;
		if (num >= 0)
			entity = make_num(p, DM_DEFAULT_ARG, num, entity);
	}
	if (!entity)
		return NULL;
	/* The enclosing function's return type is not printed. */
	if (fn->kind == DM_TYPED_NAME && fn->r->kind == DM_FUNC_TYPE)
		fn->r->l = NULL;
	return make(p, DM_LOCAL, fn, entity);
}

static struct dm_node *name_1(struct parser *p)
{
	struct dm_node *n;
	int from_sub = 0;

	switch (peek(p)) {
	case 'N':
		return nested_name(p);
	case 'Z':
		return local_name(p);
	case 'U':
		return unqualified_name(p, NULL);
	case 'S':
		if (peek2(p) == 't') {
			struct dm_node *std = make_name(p, "std", 3);

			advance(p, 2);
			n = std ? unqualified_name(p, std) : NULL;
		} else {
			n = substitution(p);
			from_sub = 1;
		}
		break;
	default:
		n = unqualified_name(p, NULL);
		break;
	}
	if (n && peek(p) == 'I') {
		/* an <unscoped-template-name>: a candidate unless it was one already */
		if (!from_sub && !add_sub(p, n))
			return NULL;
		n = make(p, DM_TEMPLATE, n, template_args(p));
		if (n && !n->r)
			return NULL;
	}
	return n;
}

static struct dm_node *name(struct parser *p)
{
	if (!enter(p))
		return leave(p, NULL);
	return leave(p, name_1(p));
}

/* ---- Types ---- */

static struct dm_node *ref_qualifier(struct parser *p, struct dm_node *n)
{
	if (n && (peek(p) == 'R' || peek(p) == 'O'))
		n = make(p, next(p) == 'R' ? DM_REF_THIS : DM_RVALUE_REF_THIS, n, NULL);
	return n;
}

static int is_fnqual(int kind)
{
	return kind == DM_CONST_THIS || kind == DM_VOLATILE_THIS || kind == DM_RESTRICT_THIS ||
	       kind == DM_REF_THIS || kind == DM_RVALUE_REF_THIS || kind == DM_TX_SAFE ||
	       kind == DM_NOEXCEPT || kind == DM_THROW_SPEC;
}

static int is_ctor_dtor_conv(const struct dm_node *n)
{
	while (n && (n->kind == DM_QUAL || n->kind == DM_LOCAL))
		n = n->r;
	return n && (n->kind == DM_CTOR || n->kind == DM_DTOR || n->kind == DM_CONVERSION);
}

/* A template function's encoding carries its return type, unless it is a constructor,
 * destructor or conversion operator. */
static int has_return_type(const struct dm_node *n)
{
	while (n) {
		if (n->kind == DM_LOCAL)
			n = n->r;
		else if (is_fnqual(n->kind))
			n = n->l;
		else
			return n->kind == DM_TEMPLATE && !is_ctor_dtor_conv(n->l);
	}
	return 0;
}

static struct dm_node *bare_function_type(struct parser *p, int has_ret)
{
	struct dm_node *ret = NULL, *params;

	if (check(p, 'J'))
		has_ret = 1;
	if (has_ret && !(ret = type(p)))
		return NULL;
	if (!(params = parmlist(p)))
		return NULL;
	return make(p, DM_FUNC_TYPE, ret, params);
}

/* F [Y] <bare-function-type> [<ref-qualifier>] E */
static struct dm_node *function_type(struct parser *p)
{
	struct dm_node *n;

	if (!check(p, 'F'))
		return NULL;
	check(p, 'Y');
	n = ref_qualifier(p, bare_function_type(p, 1));
	return n && check(p, 'E') ? n : NULL;
}

static int next_is_type_qual(const struct parser *p)
{
	char c = peek(p), d = peek2(p);

	return c == 'r' || c == 'V' || c == 'K' ||
	       (c == 'D' && (d == 'x' || d == 'o' || d == 'O' || d == 'w'));
}

/*
 * All the qualifiers in a row, outermost first; returns the slot the qualified type goes in.
 * Before a function type they are the function's (const member functions' types).
 */
static struct dm_node **cv_qualifiers(struct parser *p, struct dm_node **slot)
{
	struct dm_node **start = slot;

	while (next_is_type_qual(p)) {
		char c = next(p);
		struct dm_node *right = NULL;
		int kind;

		if (c == 'r') {
			kind = DM_RESTRICT;
		} else if (c == 'V') {
			kind = DM_VOLATILE;
		} else if (c == 'K') {
			kind = DM_CONST;
		} else {
			c = next(p);
			if (c == 'x') {
				kind = DM_TX_SAFE;
			} else if (c == 'o' || c == 'O') {
				kind = DM_NOEXCEPT;
				if (c == 'O' && (!(right = expression(p)) || !check(p, 'E')))
					return NULL;
			} else {
				kind = DM_THROW_SPEC;
				if (!(right = parmlist(p)) || !check(p, 'E'))
					return NULL;
			}
		}
		if (!(*slot = make(p, kind, NULL, right)))
			return NULL;
		slot = &(*slot)->l;
	}
	if (peek(p) == 'F') {
		for (; start != slot; start = &(*start)->l) {
			if ((*start)->kind == DM_RESTRICT)
				(*start)->kind = DM_RESTRICT_THIS;
			else if ((*start)->kind == DM_VOLATILE)
				(*start)->kind = DM_VOLATILE_THIS;
			else if ((*start)->kind == DM_CONST)
				(*start)->kind = DM_CONST_THIS;
		}
	}
	return slot;
}

static struct dm_node *array_type(struct parser *p)
{
	struct dm_node *dim = NULL, *elem;

	advance(p, 1);
	if (IS_DIGIT(peek(p))) {
		const char *s = p->s;

		while (IS_DIGIT(peek(p)))
			advance(p, 1);
		if (!(dim = make_name(p, s, (size_t)(p->s - s))))
			return NULL;
	} else if (peek(p) != '_' && !(dim = expression(p))) {
		return NULL;
	}
	if (!check(p, '_') || !(elem = type(p)))
		return NULL;
	return make(p, DM_ARRAY, dim, elem);
}

/* Dv <number> _ <type> | Dv _ <expression> _ <type> (after "Dv") */
static struct dm_node *vector_type(struct parser *p)
{
	struct dm_node *dim, *elem;

	if (check(p, '_')) {
		dim = expression(p);
	} else {
		int n = number(p);

		dim = n < 0 ? NULL : make_num(p, DM_NUMBER, n, NULL);
	}
	if (!dim || !check(p, '_') || !(elem = type(p)))
		return NULL;
	return make(p, DM_VECTOR, dim, elem);
}

static struct dm_node *builtin(struct parser *p, int idx)
{
	return make_num(p, DM_BUILTIN, idx, NULL);
}

static struct dm_node *type_1(struct parser *p)
{
	struct dm_node *ret = NULL;
	int can_subst = 1;
	char c;

	if (next_is_type_qual(p)) {
		struct dm_node **slot = cv_qualifiers(p, &ret);

		if (!slot)
			return NULL;
		/* before a function type they qualify its 'this': the unqualified function
		 * type is no candidate */
		*slot = peek(p) == 'F' ? function_type(p) : type(p);
		if (!*slot)
			return NULL;
		if ((*slot)->kind == DM_REF_THIS || (*slot)->kind == DM_RVALUE_REF_THIS) {
			/* the ref-qualifier prints after the cv-qualifiers */
			struct dm_node *fn = (*slot)->l;

			(*slot)->l = ret;
			ret = *slot;
			*slot = fn;
		}
		return add_sub(p, ret) ? ret : NULL;
	}

	c = peek(p);
	switch (c) {
	case 'a': case 'b': case 'c': case 'd': case 'e': case 'f': case 'g': case 'h':
	case 'i': case 'j': case 'l': case 'm': case 'n': case 'o': case 's': case 't':
	case 'v': case 'w': case 'x': case 'y': case 'z':
		advance(p, 1);
		ret = builtin(p, c - 'a');
		can_subst = 0;
		break;
	case 'u':
		advance(p, 1);
		ret = source_name(p);
		ret = ret ? make(p, DM_VENDOR_TYPE, ret, NULL) : NULL;
		break;
	case 'F':
		ret = function_type(p);
		break;
	case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
	case '8': case '9': case 'N': case 'Z':
		ret = name(p);
		break;
	case 'A':
		ret = array_type(p);
		break;
	case 'M': {
		struct dm_node *cls, *mem;

		advance(p, 1);
		if (!(cls = type(p)) || !(mem = type(p)))
			return NULL;
		ret = make(p, DM_PTRMEM, cls, mem);
		break;
	}
	case 'T':
		ret = template_param(p);
		if (ret && peek(p) == 'I') {
			if (!p->is_conversion) {
				if (!add_sub(p, ret))
					return NULL;
				ret = make(p, DM_TEMPLATE, ret, template_args(p));
			} else {
				/* A conversion operator's T_<args>: the arguments are the
				 * template template parameter's only if more follow (else
				 * they are the operator's own): try, and step back. */
				const char *s = p->s;
				int nr_nodes = p->nr_nodes, nr_subs, ok;
				struct dm_node *args;

				if (!add_sub(p, ret))
					return NULL;
				nr_subs = p->nr_subs;
				args = template_args(p);
				ok = args && peek(p) == 'I';
				if (ok) {
					ret = make(p, DM_TEMPLATE, ret, args);
				} else {
					p->s = s;
					p->nr_nodes = nr_nodes;
					p->nr_subs = nr_subs;
				}
			}
			if (ret && ret->kind == DM_TEMPLATE && !ret->r)
				return NULL;
		}
		break;
	case 'S':
		c = peek2(p);
		if (IS_DIGIT(c) || c == '_' || IS_UPPER(c)) {
			ret = substitution(p);
			if (ret && peek(p) == 'I') {
				ret = make(p, DM_TEMPLATE, ret, template_args(p));
				if (ret && !ret->r)
					return NULL;
			} else {
				can_subst = 0;
			}
		} else {
			ret = name(p);
			/* a plain abbreviation is no new candidate; with arguments it is */
			if (ret && ret->kind == DM_SUB_STD)
				can_subst = 0;
		}
		break;
	case 'O':
	case 'P':
	case 'R':
	case 'C':
	case 'G': {
		struct dm_node *t;
		int kind = c == 'O' ? DM_RVALUE_REF : c == 'P' ? DM_POINTER :
			   c == 'R' ? DM_REFERENCE : c == 'C' ? DM_COMPLEX : DM_IMAGINARY;

		advance(p, 1);
		if (!(t = type(p)))
			return NULL;
		ret = make(p, kind, t, NULL);
		break;
	}
	case 'U': {
		struct dm_node *q, *t;

		advance(p, 1);
		if (!(q = source_name(p)))
			return NULL;
		if (peek(p) == 'I') {
			if (!(q = make(p, DM_TEMPLATE, q, template_args(p))) || !q->r)
				return NULL;
		}
		if (!(t = type(p)))
			return NULL;
		ret = make(p, DM_VENDOR_QUAL, t, q);
		break;
	}
	case 'D':
		advance(p, 1);
		can_subst = 0;
		switch (next(p)) {
		case 'T':
		case 't':
			ret = expression(p);
			ret = ret && check(p, 'E') ? make(p, DM_DECLTYPE, ret, NULL) : NULL;
			can_subst = 1;
			break;
		case 'p':
			ret = type(p);
			ret = ret ? make(p, DM_PACK_EXPANSION, ret, NULL) : NULL;
			can_subst = 1;
			break;
		case 'a':
			ret = make_name(p, "auto", 4);
			break;
		case 'c':
			ret = make_name(p, "decltype(auto)", 14);
			break;
		case 'f':
			ret = builtin(p, 26);
			break;
		case 'd':
			ret = builtin(p, 27);
			break;
		case 'e':
			ret = builtin(p, 28);
			break;
		case 'h':
			ret = builtin(p, 29);
			break;
		case 'u':
			ret = builtin(p, 30);
			break;
		case 's':
			ret = builtin(p, 31);
			break;
		case 'i':
			ret = builtin(p, 32);
			break;
		case 'n':
			ret = builtin(p, DM_BUILTIN_NULLPTR);
			break;
		case 'F': {	/* DF <number> _ (_FloatN), DF <number> x, DF16b */
			int n;

			if (p->s[0] == '1' && p->s[1] == '6' && p->s[2] == 'b') {
				advance(p, 3);
				ret = make_name(p, "std::bfloat16_t", 15);
				break;
			}
			if (!IS_DIGIT(peek(p)) || (n = number(p)) < 0)
				return NULL;
			if (!(ret = make_num(p, DM_FLOATN, n, NULL)))
				return NULL;
			if (check(p, 'x'))
				ret->len = 1;
			else if (!check(p, '_'))
				return NULL;
			break;
		}
		case 'v':
			ret = vector_type(p);
			can_subst = 1;
			break;
		default:
			return NULL;
		}
		break;
	default:
		return NULL;
	}
	if (ret && can_subst && !add_sub(p, ret))
		return NULL;
	return ret;
}

static struct dm_node *type(struct parser *p)
{
	if (!enter(p))
		return leave(p, NULL);
	return leave(p, type_1(p));
}

/* ---- Template arguments and expressions ---- */

/* After I or J: <template-arg>* E (an empty list is an empty pack). */
static struct dm_node *template_args_1(struct parser *p)
{
	struct dm_node *hold = p->last_name, *list = NULL, **tail = &list;

	if (check(p, 'E'))
		return make(p, DM_TARGLIST, NULL, NULL);
	do {
		struct dm_node *a = template_arg(p);

		if (!a || !(*tail = make(p, DM_TARGLIST, a, NULL)))
			return NULL;
		tail = &(*tail)->r;
	} while (peek(p) != 'E');
	advance(p, 1);
	/* the arguments' names are not the class a constructor names */
	p->last_name = hold;
	return list;
}

static struct dm_node *template_args(struct parser *p)
{
	if (peek(p) != 'I' && peek(p) != 'J')
		return NULL;
	advance(p, 1);
	if (!enter(p))
		return leave(p, NULL);
	return leave(p, template_args_1(p));
}

/* L <type> [n] <value> E | L _Z <encoding> E | LDnE */
static struct dm_node *expr_primary(struct parser *p)
{
	struct dm_node *ret, *t;
	const char *s;
	int kind = DM_LITERAL;

	if (!check(p, 'L'))
		return NULL;
	if (peek(p) == '_' || peek(p) == 'Z') {
		check(p, '_');
		if (!check(p, 'Z'))
			return NULL;
		ret = encoding(p, 0);
	} else {
		if (!(t = type(p)))
			return NULL;
		if (t->kind == DM_BUILTIN && t->num == DM_BUILTIN_NULLPTR && check(p, 'E'))
			return t;
		if (check(p, 'n'))
			kind = DM_LITERAL_NEG;
		s = p->s;
		while (peek(p) != 'E') {
			if (!peek(p))
				return NULL;
			advance(p, 1);
		}
		if (p->s == s)
			return NULL;	/* no value: c++filt refuses it too */
		ret = make(p, kind, t, make_name(p, s, (size_t)(p->s - s)));
		if (ret && !ret->r)
			return NULL;
	}
	return ret && check(p, 'E') ? ret : NULL;
}

/* <expression>* up to @end (consumed); an empty list is one cell with no item. */
static struct dm_node *exprlist(struct parser *p, char end)
{
	struct dm_node *list = NULL, **tail = &list;

	if (check(p, end))
		return make(p, DM_ARGLIST, NULL, NULL);
	do {
		struct dm_node *e = expression_1(p);

		if (!e || !(*tail = make(p, DM_ARGLIST, e, NULL)))
			return NULL;
		tail = &(*tail)->r;
	} while (!check(p, end));
	return list;
}

static int code_is(const struct dm_node *op, const char *code)
{
	return op->kind == DM_OPERATOR && !strcmp(dm_ops[op->num].code, code);
}

static struct dm_node *operator_expression(struct parser *p)
{
	struct dm_node *op = operator_name(p), *a, *b, *c;
	int args;

	if (!op)
		return NULL;
	if (op->kind == DM_OPERATOR) {
		if (code_is(op, "st")) {
			a = type(p);
			return a ? make(p, DM_UNARY, op, a) : NULL;
		}
		args = dm_ops[op->num].args;
	} else if (op->kind == DM_EXT_OPERATOR) {
		args = op->num;
	} else if (op->kind == DM_CAST) {
		args = 1;
	} else {
		return NULL;
	}
	switch (args) {
	case 0:
		return make(p, DM_NULLARY, op, NULL);
	case 1: {
		int suffix = 0;

		if (code_is(op, "pp") || code_is(op, "mm"))
			suffix = !check(p, '_');	/* pp_ / mm_: the prefix forms */
		if (op->kind == DM_CAST && check(p, '_'))
			a = exprlist(p, 'E');
		else
			a = expression_1(p);
		if (!a)
			return NULL;
		if (suffix && !(a = make(p, DM_BINARY_ARGS, a, a)))
			return NULL;
		return make(p, DM_UNARY, op, a);
	}
	case 2:
		if (op->kind != DM_OPERATOR)
			return NULL;
		if (code_is(op, "dc") || code_is(op, "sc") || code_is(op, "cc") ||
		    code_is(op, "rc"))
			a = type(p);
		else
			a = expression_1(p);
		if (!a)
			return NULL;
		if (code_is(op, "cl")) {
			b = exprlist(p, 'E');
		} else if (code_is(op, "dt") || code_is(op, "pt")) {
			char c1 = peek(p), c2 = peek2(p);

			if ((c1 == 'g' && c2 == 's') || (c1 == 's' && c2 == 'r')) {
				b = expression_1(p);
			} else {
				b = unqualified_name(p, NULL);
				if (b && peek(p) == 'I') {
					b = make(p, DM_TEMPLATE, b, template_args(p));
					if (b && !b->r)
						return NULL;
				}
			}
		} else {
			b = expression_1(p);
		}
		if (!b || !(b = make(p, DM_BINARY_ARGS, a, b)))
			return NULL;
		return make(p, DM_BINARY, op, b);
	case 3:
		if (!code_is(op, "qu"))
			return NULL;	/* new-expressions, folds: not understood */
		if (!(a = expression_1(p)) || !(b = expression_1(p)) || !(c = expression_1(p)))
			return NULL;
		if (!(c = make(p, DM_TRINARY_ARG2, b, c)) || !(c = make(p, DM_TRINARY_ARG1, a, c)))
			return NULL;
		return make(p, DM_TRINARY, op, c);
	default:
		return NULL;
	}
}

static struct dm_node *expression_2(struct parser *p)
{
	char c = peek(p), d = peek2(p);
	struct dm_node *n;

	if (c == 'L')
		return expr_primary(p);
	if (c == 'T')
		return template_param(p);
	if (c == 's' && d == 'r') {
		/* sr <type> <name> (the old mangling of A::x: sr1A1x) or sr <qualifiers> E
		 * <name> (the new one: sr1AE1x): read as new first; dm_parse reads again the old
		 * way if that fails */
		struct dm_node *t;

		advance(p, 2);
		c = peek(p);
		if (p->unresolved &&
		    (IS_DIGIT(c) || IS_LOWER(c) || c == 'C' || c == 'U' || c == 'L')) {
			p->unresolved = -1;
			t = prefix_1(p, 0);
			check(p, 'E');
		} else {
			t = type(p);
		}
		if (!t || !(n = unqualified_name(p, t)))
			return NULL;
		if (peek(p) == 'I') {
			n = make(p, DM_TEMPLATE, n, template_args(p));
			if (!n || !n->r)
				return NULL;
		}
		return n;
	}
	if (c == 's' && d == 'p') {
		advance(p, 2);
		n = expression_1(p);
		return n ? make(p, DM_PACK_EXPANSION, n, NULL) : NULL;
	}
	if (c == 'f' && d == 'p') {
		int idx;

		advance(p, 2);
		if (check(p, 'T'))
			idx = 0;
		else if ((idx = compact_number(p)) < 0 || idx == INT_MAX)
			return NULL;
		else
			idx++;
		return make_num(p, DM_FPARAM, idx, NULL);
	}
	if (IS_DIGIT(c) || (c == 'o' && d == 'n')) {
		if (c == 'o')
			advance(p, 2);
		if (!(n = unqualified_name(p, NULL)))
			return NULL;
		if (peek(p) == 'I') {
			n = make(p, DM_TEMPLATE, n, template_args(p));
			if (n && !n->r)
				return NULL;
		}
		return n;
	}
	if ((c == 'i' || c == 't') && d == 'l')
		return NULL;		/* initializer lists: not understood */
	if (c == 'u')
		return NULL;		/* vendor expressions */
	return operator_expression(p);
}

static struct dm_node *expression_1(struct parser *p)
{
	if (!enter(p))
		return leave(p, NULL);
	return leave(p, expression_2(p));
}

static struct dm_node *expression(struct parser *p)
{
	int was = p->is_expression;
	struct dm_node *n;

	p->is_expression = 1;
	n = expression_1(p);
	p->is_expression = was;
	return n;
}

static struct dm_node *template_arg(struct parser *p)
{
	struct dm_node *n;

	switch (peek(p)) {
	case 'X':
		advance(p, 1);
		n = expression(p);
		return n && check(p, 'E') ? n : NULL;
	case 'L':
		return expr_primary(p);
	case 'I':
	case 'J':
		return template_args(p);	/* an argument pack */
	default:
		return type(p);
	}
}

/* ---- Encodings ---- */

/* h <number> _ | v <number> _ <number> _ ; the offsets are not printed. */
static int call_offset(struct parser *p, char c)
{
	if (!c)
		c = next(p);
	if (c == 'h') {
		number(p);
	} else if (c == 'v') {
		number(p);
		if (!check(p, '_'))
			return 0;
		number(p);
	} else {
		return 0;
	}
	return check(p, '_');
}

static struct dm_node *special(struct parser *p, const char *text, struct dm_node *n)
{
	struct dm_node *s;

	if (!n || !(s = make(p, DM_SPECIAL, n, NULL)))
		return NULL;
	s->s = text;
	s->len = (uint16_t)strlen(text);
	return s;
}

static struct dm_node *special_name(struct parser *p)
{
	char c = next(p), d = next(p);

	if (c == 'T') {
		switch (d) {
		case 'V':
			return special(p, "vtable for ", type(p));
		case 'T':
			return special(p, "VTT for ", type(p));
		case 'I':
			return special(p, "typeinfo for ", type(p));
		case 'S':
			return special(p, "typeinfo name for ", type(p));
		case 'F':
			return special(p, "typeinfo fn for ", type(p));
		case 'h':
			if (!call_offset(p, 'h'))
				return NULL;
			return special(p, "non-virtual thunk to ", encoding(p, 0));
		case 'v':
			if (!call_offset(p, 'v'))
				return NULL;
			return special(p, "virtual thunk to ", encoding(p, 0));
		case 'c':
			if (!call_offset(p, 0) || !call_offset(p, 0))
				return NULL;
			return special(p, "covariant return thunk to ", encoding(p, 0));
		case 'C': {
			struct dm_node *derived = type(p), *base;

			if (!derived || number(p) < 0 || !check(p, '_') || !(base = type(p)))
				return NULL;
			return make(p, DM_CTOR_VTABLE, base, derived);
		}
		case 'H':
			return special(p, "TLS init function for ", name(p));
		case 'W':
			return special(p, "TLS wrapper function for ", name(p));
		case 'A':
			return special(p, "template parameter object for ", template_arg(p));
		default:
			return NULL;
		}
	}
	if (c == 'G') {
		switch (d) {
		case 'V':
			return special(p, "guard variable for ", name(p));
		case 'R': {
			struct dm_node *n = name(p);
			int num = number(p);

			if (!n || num < 0)
				return NULL;
			return make(p, DM_REFTEMP, n, make_num(p, DM_NUMBER, num, NULL));
		}
		case 'A':
			return special(p, "hidden alias for ", encoding(p, 0));
		case 'T':
			if (check(p, 'n'))
				return special(p, "non-transaction clone for ", encoding(p, 0));
			advance(p, 1);
			return special(p, "transaction clone for ", encoding(p, 0));
		default:
			return NULL;
		}
	}
	return NULL;
}

static struct dm_node *encoding_1(struct parser *p, int top)
{
	struct dm_node *n, *ft;

	if (peek(p) == 'G' || peek(p) == 'T')
		return special_name(p);
	if (!(n = name(p)))
		return NULL;
	if (!peek(p) || peek(p) == 'E')
		return n;
	if (!(ft = bare_function_type(p, has_return_type(n))))
		return NULL;
	/* a local name's function nested in another prints no return type */
	if (!top && n->kind == DM_LOCAL)
		ft->l = NULL;
	return make(p, DM_TYPED_NAME, n, ft);
}

static struct dm_node *encoding(struct parser *p, int top)
{
	if (!enter(p))
		return leave(p, NULL);
	return leave(p, encoding_1(p, top));
}

/* GCC's clone suffixes: .<lower/digit/_...>[.<digits>]... as in .part.0, .isra.0, .cold */
static struct dm_node *clone_suffix(struct parser *p, struct dm_node *enc)
{
	const char *s = p->s, *e = s;
	struct dm_node *n;

	if (*e == '.' && (IS_LOWER(e[1]) || IS_DIGIT(e[1]) || e[1] == '_')) {
		e += 2;
		while (IS_LOWER(*e) || IS_DIGIT(*e) || *e == '_')
			e++;
	}
	while (*e == '.' && IS_DIGIT(e[1])) {
		e += 2;
		while (IS_DIGIT(*e))
			e++;
	}
	p->s = e;
	n = make_name(p, s, (size_t)(e - s));
	return n ? make(p, DM_CLONE, enc, n) : NULL;
}

static struct dm_node *parse(const char *s, struct dm_node *nodes, int unresolved, int *retry)
{
	struct parser p;
	struct dm_node *root;

	memset(&p, 0, sizeof(p));
	p.s = s;
	p.nodes = nodes;
	p.unresolved = unresolved;
	if (!check(&p, '_') || !check(&p, 'Z'))
		return NULL;
	root = encoding(&p, 1);
	while (root && peek(&p) == '.' &&
	       (IS_LOWER(peek2(&p)) || IS_DIGIT(peek2(&p)) || peek2(&p) == '_'))
		root = clone_suffix(&p, root);
	if (root && !peek(&p))
		return root;
	*retry = p.unresolved == -1;
	return NULL;
}

struct dm_node *dm_parse(const char *s, struct dm_node *nodes)
{
	int retry = 0;
	struct dm_node *root = parse(s, nodes, 1, &retry);

	if (!root && retry)
		root = parse(s, nodes, 0, &retry);
	return root;
}

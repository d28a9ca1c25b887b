// SPDX-License-Identifier: MIT
/*
 * demangle_print.c - prints the tree demangle_parse.c read, as c++filt (GNU binutils) prints
 * it: declarator order for pointers to functions and arrays ("void (*)(int)", "int (*) [4]"),
 * template parameters resolved against the template being printed, "> >", literals as
 * "4", "2u", "true", "(char)65". Also the short forms of demangle_short (demangle_int.h,
 * struct dm_short). Must not allocate or recurse past DM_MAX_PRINT_DEPTH; bounded work.
 */
#include "demangle_int.h"

#include <stddef.h>
#include <string.h>

/* A type constructor waiting for its declarator position ("printed" once it has been). */
struct mod {
	struct mod *next;
	struct dm_node *mod;
	int printed;
	struct tpl *templates;		/* template scope where it was met */
};

/* The templates whose parameters T_ refers to, innermost first. */
struct tpl {
	struct tpl *next;
	struct dm_node *decl;		/* a DM_TEMPLATE */
};

/* Where a T_ under a reference was first printed, to print it there again (c++filt's rule for
 * a T_ that a substitution brings out of the template it belongs to). */
struct scope {
	const struct dm_node *param;
	struct tpl *templates;		/* a copy, in printer.tpls */
};

#define MAX_SCOPES 64
#define MAX_SCOPE_TPLS 512

struct printer {
	char *buf;
	size_t cap;
	size_t len;			/* of the whole text, beyond cap too */
	char last;			/* its last character */
	int failed;
	long steps;
	int depth;
	struct mod *mods;
	struct tpl *templates;
	struct dm_node *current_template;
	int pack_index;
	int lambda_arg;
	const struct dm_short *sh;
	struct dm_node *elide_params;	/* short form: this function's parameters print "..." */
	int tdepth;			/* template argument lists being printed */
	struct dm_print_stats *st;
	const struct dm_node *stack[DM_MAX_PRINT_DEPTH];	/* nodes being printed */
	struct scope scopes[MAX_SCOPES];
	int nr_scopes;
	struct tpl tpls[MAX_SCOPE_TPLS];
	int nr_tpls;
};

static void print(struct printer *pr, struct dm_node *dc);

/* ---- Output ---- */

static void put(struct printer *pr, const char *s, size_t n)
{
	if (pr->failed)
		return;
	if (pr->len + n > DM_MAX_OUTPUT) {
		pr->failed = 1;
		return;
	}
	if (pr->len + 1 < pr->cap) {
		size_t room = pr->cap - 1 - pr->len;

		memcpy(pr->buf + pr->len, s, n < room ? n : room);
	}
	pr->len += n;
	if (n)
		pr->last = s[n - 1];
}

static void puts_(struct printer *pr, const char *s)
{
	put(pr, s, strlen(s));
}

static void putc_(struct printer *pr, char c)
{
	put(pr, &c, 1);
}

static void putnum(struct printer *pr, long v)
{
	char tmp[24];
	int i = (int)sizeof(tmp);
	unsigned long u = v < 0 ? 0ul - (unsigned long)v : (unsigned long)v;

	do
		tmp[--i] = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		tmp[--i] = '-';
	put(pr, tmp + i, sizeof(tmp) - (size_t)i);
}

/* ---- Helpers ---- */

static int is_fnqual(int kind)
{
	return kind == DM_CONST_THIS || kind == DM_VOLATILE_THIS || kind == DM_RESTRICT_THIS ||
	       kind == DM_REF_THIS || kind == DM_RVALUE_REF_THIS || kind == DM_TX_SAFE ||
	       kind == DM_NOEXCEPT || kind == DM_THROW_SPEC;
}

static int is_cv(int kind)
{
	return kind == DM_CONST || kind == DM_VOLATILE || kind == DM_RESTRICT;
}

static const char *op_code(const struct dm_node *op)
{
	return op && op->kind == DM_OPERATOR ? dm_ops[op->num].code : "";
}

/* Argument @i of a template argument list (i < 0: the whole list); NULL past its end. */
static struct dm_node *index_arg(struct dm_node *args, int i)
{
	struct dm_node *a;

	if (i < 0)
		return args;
	for (a = args; a; a = a->r) {
		if (a->kind != DM_TARGLIST)
			return NULL;
		if (i <= 0)
			break;
		--i;
	}
	return i == 0 && a ? a->l : NULL;
}

static struct dm_node *lookup_tparam(struct printer *pr, const struct dm_node *dc)
{
	if (!pr->templates) {
		pr->failed = 1;
		return NULL;
	}
	return index_arg(pr->templates->decl->r, dc->num);
}

/* The argument pack a pack expansion's pattern expands, or NULL. */
static struct dm_node *find_pack(struct printer *pr, struct dm_node *dc)
{
	struct dm_node *a;

	if (!dc || pr->failed)
		return NULL;
	if (++pr->steps > DM_MAX_PRINT_STEPS || pr->depth >= DM_MAX_PRINT_DEPTH) {
		pr->failed = 1;
		return NULL;
	}
	switch (dc->kind) {
	case DM_TPARAM:
		a = lookup_tparam(pr, dc);
		return a && a->kind == DM_TARGLIST ? a : NULL;
	case DM_PACK_EXPANSION:
	case DM_LAMBDA:
	case DM_NAME:
	case DM_TAGGED_NAME:
	case DM_OPERATOR:
	case DM_BUILTIN:
	case DM_FLOATN:
	case DM_SUB_STD:
	case DM_FPARAM:
	case DM_UNNAMED_TYPE:
	case DM_DEFAULT_ARG:
	case DM_NUMBER:
		return NULL;
	case DM_EXT_OPERATOR:
	case DM_CTOR:
	case DM_DTOR:
		pr->depth++;
		a = find_pack(pr, dc->l);
		pr->depth--;
		return a;
	default:
		pr->depth++;
		a = find_pack(pr, dc->l);
		if (!a)
			a = find_pack(pr, dc->r);
		pr->depth--;
		return a;
	}
}

static int pack_length(const struct dm_node *a)
{
	int n = 0;

	for (; a && a->kind == DM_TARGLIST && a->l; a = a->r)
		n++;
	return n;
}

static struct scope *find_scope(struct printer *pr, const struct dm_node *param)
{
	int i;

	for (i = 0; i < pr->nr_scopes; i++)
		if (pr->scopes[i].param == param)
			return &pr->scopes[i];
	return NULL;
}

static void save_scope(struct printer *pr, const struct dm_node *param)
{
	struct tpl *t, **tail;

	if (pr->nr_scopes >= MAX_SCOPES) {
		pr->failed = 1;
		return;
	}
	pr->scopes[pr->nr_scopes].param = param;
	tail = &pr->scopes[pr->nr_scopes++].templates;
	for (t = pr->templates; t; t = t->next) {
		if (pr->nr_tpls >= MAX_SCOPE_TPLS) {
			pr->failed = 1;
			return;
		}
		*tail = &pr->tpls[pr->nr_tpls++];
		(*tail)->decl = t->decl;
		tail = &(*tail)->next;
	}
	*tail = NULL;
}

/* Whether @param, or @ref further out than the node being printed, is being printed. */
static int on_stack(const struct printer *pr, const struct dm_node *param,
		    const struct dm_node *ref)
{
	int i;

	for (i = pr->depth - 1; i >= 0; i--)
		if (pr->stack[i] == param || (pr->stack[i] == ref && i != pr->depth - 1))
			return 1;
	return 0;
}

/* ---- Declarators: modifiers, function types, arrays ---- */

static void print_function_type(struct printer *pr, struct dm_node *dc, struct mod *mods);
static void print_array_type(struct printer *pr, struct dm_node *dc, struct mod *mods);

static void print_mod(struct printer *pr, struct dm_node *mod)
{
	switch (mod->kind) {
	case DM_RESTRICT:
	case DM_RESTRICT_THIS:
		puts_(pr, " restrict");
		return;
	case DM_VOLATILE:
	case DM_VOLATILE_THIS:
		puts_(pr, " volatile");
		return;
	case DM_CONST:
	case DM_CONST_THIS:
		puts_(pr, " const");
		return;
	case DM_TX_SAFE:
		puts_(pr, " transaction_safe");
		return;
	case DM_NOEXCEPT:
		puts_(pr, " noexcept");
		if (mod->r) {
			putc_(pr, '(');
			print(pr, mod->r);
			putc_(pr, ')');
		}
		return;
	case DM_THROW_SPEC:
		puts_(pr, " throw");
		if (mod->r) {
			putc_(pr, '(');
			print(pr, mod->r);
			putc_(pr, ')');
		}
		return;
	case DM_VENDOR_QUAL:
		putc_(pr, ' ');
		print(pr, mod->r);
		return;
	case DM_POINTER:
		putc_(pr, '*');
		return;
	case DM_REF_THIS:
		puts_(pr, " &");
		return;
	case DM_REFERENCE:
		putc_(pr, '&');
		return;
	case DM_RVALUE_REF_THIS:
		puts_(pr, " &&");
		return;
	case DM_RVALUE_REF:
		puts_(pr, "&&");
		return;
	case DM_COMPLEX:
		puts_(pr, " _Complex");
		return;
	case DM_IMAGINARY:
		puts_(pr, " _Imaginary");
		return;
	case DM_PTRMEM:
		if (pr->last != '(')
			putc_(pr, ' ');
		print(pr, mod->l);
		puts_(pr, "::*");
		return;
	case DM_TYPED_NAME:
		print(pr, mod->l);
		return;
	case DM_VECTOR:
		puts_(pr, " __vector(");
		print(pr, mod->l);
		putc_(pr, ')');
		return;
	default:
		print(pr, mod);
		return;
	}
}

/* Print the modifiers not printed yet, innermost first; function qualifiers only when
 * @suffix (after a parameter list). */
static void print_mod_list(struct printer *pr, struct mod *mods, int suffix)
{
	for (; mods && !pr->failed; mods = mods->next) {
		struct tpl *hold = pr->templates;
		struct dm_node *m = mods->mod;

		if (mods->printed || (!suffix && is_fnqual(m->kind)))
			continue;
		mods->printed = 1;
		pr->templates = mods->templates;
		if (m->kind == DM_FUNC_TYPE) {
			print_function_type(pr, m, mods->next);
			pr->templates = hold;
			return;
		}
		if (m->kind == DM_ARRAY) {
			print_array_type(pr, m, mods->next);
			pr->templates = hold;
			return;
		}
		if (m->kind == DM_LOCAL) {
			struct mod *hold_mods = pr->mods;
			struct dm_node *e;

			pr->mods = NULL;
			print(pr, m->l);
			pr->mods = hold_mods;
			puts_(pr, "::");
			e = m->r;
			if (e->kind == DM_DEFAULT_ARG) {
				puts_(pr, "{default arg#");
				putnum(pr, (long)e->num + 1);
				puts_(pr, "}::");
				e = e->l;
			}
			while (e && is_fnqual(e->kind))
				e = e->l;
			print(pr, e);
			pr->templates = hold;
			return;
		}
		print_mod(pr, m);
		pr->templates = hold;
	}
}

static void print_function_type(struct printer *pr, struct dm_node *dc, struct mod *mods)
{
	int need_paren = 0, need_space = 0;
	struct mod *p, *hold;

	for (p = mods; p; p = p->next) {
		if (p->printed)
			break;
		switch (p->mod->kind) {
		case DM_POINTER:
		case DM_REFERENCE:
		case DM_RVALUE_REF:
			need_paren = 1;
			break;
		case DM_RESTRICT:
		case DM_VOLATILE:
		case DM_CONST:
		case DM_VENDOR_QUAL:
		case DM_COMPLEX:
		case DM_IMAGINARY:
		case DM_PTRMEM:
			need_space = 1;
			need_paren = 1;
			break;
		default:
			break;
		}
		if (need_paren)
			break;
	}
	if (need_paren) {
		if (!need_space && pr->last != '(' && pr->last != '*')
			need_space = 1;
		if (need_space && pr->last != ' ')
			putc_(pr, ' ');
		putc_(pr, '(');
	}
	hold = pr->mods;
	pr->mods = NULL;
	print_mod_list(pr, mods, 0);
	if (need_paren)
		putc_(pr, ')');
	putc_(pr, '(');
	if (dc->r) {
		if (dc == pr->elide_params && (dc->r->l || dc->r->r))
			puts_(pr, "...");
		else
			print(pr, dc->r);
	}
	putc_(pr, ')');
	print_mod_list(pr, mods, 1);
	pr->mods = hold;
}

static void print_array_type(struct printer *pr, struct dm_node *dc, struct mod *mods)
{
	int need_space = 1;

	if (mods) {
		int need_paren = 0;
		struct mod *p;

		for (p = mods; p; p = p->next) {
			if (p->printed)
				continue;
			if (p->mod->kind == DM_ARRAY) {
				need_space = 0;
			} else {
				need_paren = 1;
				need_space = 1;
			}
			break;
		}
		if (need_paren)
			puts_(pr, " (");
		print_mod_list(pr, mods, 0);
		if (need_paren)
			putc_(pr, ')');
	}
	if (need_space)
		putc_(pr, ' ');
	putc_(pr, '[');
	if (dc->l)
		print(pr, dc->l);
	putc_(pr, ']');
}

/* ---- Expressions ---- */

static void print_subexpr(struct printer *pr, struct dm_node *dc)
{
	int simple = dc && (dc->kind == DM_NAME || dc->kind == DM_QUAL || dc->kind == DM_FPARAM);

	if (!simple)
		putc_(pr, '(');
	print(pr, dc);
	if (!simple)
		putc_(pr, ')');
}

static void print_expr_op(struct printer *pr, struct dm_node *op)
{
	if (op->kind == DM_OPERATOR)
		put(pr, dm_ops[op->num].name, dm_ops[op->num].len);
	else
		print(pr, op);
}

static void print_unary(struct printer *pr, struct dm_node *dc)
{
	struct dm_node *op = dc->l, *operand = dc->r;
	const char *code = op_code(op);

	if (!strcmp(code, "ad") && operand->kind == DM_TYPED_NAME && operand->l->kind == DM_QUAL &&
	    operand->r->kind == DM_FUNC_TYPE)
		operand = operand->l;	/* &f: no parameter list */
	if (op->kind == DM_OPERATOR && operand->kind == DM_BINARY_ARGS) {
		print_subexpr(pr, operand->l);	/* a suffix ++ or -- */
		print_expr_op(pr, op);
		return;
	}
	if (!strcmp(code, "sZ")) {
		putnum(pr, pack_length(find_pack(pr, operand)));
		return;
	}
	if (op->kind != DM_CAST) {
		print_expr_op(pr, op);
	} else {
		putc_(pr, '(');
		print(pr, op->l);
		putc_(pr, ')');
	}
	if (!strcmp(code, "gs")) {
		print(pr, operand);
	} else if (!strcmp(code, "st")) {
		putc_(pr, '(');
		print(pr, operand);
		putc_(pr, ')');
	} else {
		print_subexpr(pr, operand);
	}
}

static void print_binary(struct printer *pr, struct dm_node *dc)
{
	struct dm_node *op = dc->l, *args = dc->r;
	const char *code = op_code(op);
	int gt;

	if (args->kind != DM_BINARY_ARGS || op->kind != DM_OPERATOR) {
		pr->failed = 1;
		return;
	}
	if (!strcmp(code, "dc") || !strcmp(code, "sc") || !strcmp(code, "cc") ||
	    !strcmp(code, "rc")) {
		print_expr_op(pr, op);
		putc_(pr, '<');
		print(pr, args->l);
		puts_(pr, ">(");
		print(pr, args->r);
		putc_(pr, ')');
		return;
	}
	/* a '>' inside template arguments gets parentheses */
	gt = !strcmp(dm_ops[op->num].name, ">");
	if (gt)
		putc_(pr, '(');
	if (!strcmp(code, "cl") && args->l->kind == DM_TYPED_NAME) {
		if (args->l->r->kind != DM_FUNC_TYPE)
			pr->failed = 1;
		print_subexpr(pr, args->l->l);
	} else {
		print_subexpr(pr, args->l);
	}
	if (!strcmp(code, "ix")) {
		putc_(pr, '[');
		print(pr, args->r);
		putc_(pr, ']');
	} else {
		if (strcmp(code, "cl"))
			print_expr_op(pr, op);
		print_subexpr(pr, args->r);
	}
	if (gt)
		putc_(pr, ')');
}

static void print_literal(struct printer *pr, struct dm_node *dc)
{
	int style = DM_LIT_DEFAULT, neg = dc->kind == DM_LITERAL_NEG;
	struct dm_node *t = dc->l, *v = dc->r;

	if (t->kind == DM_BUILTIN) {
		style = dm_builtins[t->num].lit;
		switch (style) {
		case DM_LIT_INT:
		case DM_LIT_UNSIGNED:
		case DM_LIT_LONG:
		case DM_LIT_ULONG:
		case DM_LIT_LLONG:
		case DM_LIT_ULLONG:
			if (neg)
				putc_(pr, '-');
			print(pr, v);
			puts_(pr, style == DM_LIT_UNSIGNED ? "u" : style == DM_LIT_LONG ? "l" :
				  style == DM_LIT_ULONG ? "ul" : style == DM_LIT_LLONG ? "ll" :
				  style == DM_LIT_ULLONG ? "ull" : "");
			return;
		case DM_LIT_BOOL:
			if (!neg && v->len == 1 && (v->s[0] == '0' || v->s[0] == '1')) {
				puts_(pr, v->s[0] == '1' ? "true" : "false");
				return;
			}
			break;
		default:
			break;
		}
	}
	putc_(pr, '(');
	print(pr, t);
	putc_(pr, ')');
	if (neg)
		putc_(pr, '-');
	if (style == DM_LIT_FLOAT)
		putc_(pr, '[');
	print(pr, v);
	if (style == DM_LIT_FLOAT)
		putc_(pr, ']');
}

/* ---- Components ---- */

/*
 * A list's items joined by ", "; the commas before trailing items that print nothing (empty
 * packs) are taken back. As c++filt, the last character is then still taken to be the
 * comma's space: "A<B<int>, >" prints "A<B<int>>".
 */
static void print_list(struct printer *pr, struct dm_node *dc, int keep)
{
	size_t keep_len;
	int n = 0;

	if (dc->l)
		print(pr, dc->l);
	keep_len = pr->len;
	for (dc = dc->r; dc && !pr->failed; dc = dc->r) {
		size_t mark;

		if (++pr->steps > DM_MAX_PRINT_STEPS) {
			pr->failed = 1;
			return;
		}
		if (keep && ++n >= keep) {
			puts_(pr, ", ...");
			return;
		}
		puts_(pr, ", ");
		mark = pr->len;
		if (dc->l)
			print(pr, dc->l);
		if (pr->len > mark)
			keep_len = pr->len;
	}
	if (pr->len > keep_len)
		pr->len = keep_len;
}

static void print_template(struct printer *pr, struct dm_node *dc)
{
	struct dm_node *hold_current = pr->current_template;
	struct mod *hold_mods = pr->mods;
	const struct dm_short *sh = pr->sh;

	pr->current_template = dc;
	pr->mods = NULL;
	print(pr, dc->l);
	if (pr->last == '<')
		putc_(pr, ' ');
	putc_(pr, '<');
	pr->tdepth++;
	if (pr->st) {
		int d = pr->tdepth < DM_STATS_DEPTH ? pr->tdepth : DM_STATS_DEPTH - 1;
		int n = pack_length(dc->r);

		if (pr->tdepth > pr->st->depth)
			pr->st->depth = pr->tdepth;
		if (n > pr->st->args[d])
			pr->st->args[d] = n;
	}
	if (sh && sh->max_depth >= 0 && pr->tdepth > sh->max_depth) {
		puts_(pr, "...");
	} else if (dc->r->kind == DM_TARGLIST) {
		print_list(pr, dc->r, sh && pr->tdepth == sh->max_depth ? sh->keep_args : 0);
	} else {
		print(pr, dc->r);
	}
	pr->tdepth--;
	if (pr->last == '>')
		putc_(pr, ' ');
	putc_(pr, '>');
	pr->mods = hold_mods;
	pr->current_template = hold_current;
}

static void print_typed_name(struct printer *pr, struct dm_node *dc)
{
	struct mod adpm[4];
	struct tpl dpt;
	struct dm_node *typed = dc->l, *hold_elide = pr->elide_params;
	int i = 0, pushed = 0;

	while (typed) {
		if (i >= 4)
			goto fail;
		adpm[i].next = pr->mods;
		adpm[i].mod = typed;
		adpm[i].printed = 0;
		adpm[i].templates = pr->templates;
		pr->mods = &adpm[i++];
		if (!is_fnqual(typed->kind))
			break;
		typed = typed->l;
	}
	if (!typed)
		goto fail;
	/* a class local to a const member function: the qualifiers are the function's */
	if (typed->kind == DM_LOCAL) {
		typed = typed->r;
		if (typed->kind == DM_DEFAULT_ARG)
			typed = typed->l;
		while (typed && is_fnqual(typed->kind)) {
			if (i >= 4)
				goto fail;
			adpm[i] = adpm[i - 1];
			adpm[i].next = &adpm[i - 1];
			pr->mods = &adpm[i];
			adpm[i - 1].mod = typed;
			adpm[i - 1].printed = 0;
			adpm[i - 1].templates = pr->templates;
			i++;
			typed = typed->l;
		}
		if (!typed)
			goto fail;
	}
	/* a template function's parameters are its arguments' */
	if (typed->kind == DM_TEMPLATE) {
		dpt.next = pr->templates;
		dpt.decl = typed;
		pr->templates = &dpt;
		pushed = 1;
	}
	if (pr->sh && pr->sh->is_short)
		pr->elide_params = dc->r;
	print(pr, dc->r);
	pr->elide_params = hold_elide;
	if (pushed)
		pr->templates = dpt.next;
	while (i > 0) {
		--i;
		if (!adpm[i].printed) {
			putc_(pr, ' ');
			print_mod(pr, adpm[i].mod);
		}
	}
	pr->mods = adpm[0].next;
	return;
fail:
	pr->failed = 1;
}

/* The type of a conversion operator sees the enclosing template's parameters. */
static void print_conversion(struct printer *pr, struct dm_node *dc)
{
	struct tpl dpt;
	int pushed = 0;

	if (pr->current_template) {
		dpt.next = pr->templates;
		dpt.decl = pr->current_template;
		pr->templates = &dpt;
		pushed = 1;
	}
	if (dc->l->kind != DM_TEMPLATE) {
		print(pr, dc->l);
		if (pushed)
			pr->templates = dpt.next;
	} else {
		print(pr, dc->l->l);
		if (pushed)
			pr->templates = dpt.next;
		if (pr->last == '<')
			putc_(pr, ' ');
		putc_(pr, '<');
		print(pr, dc->l->r);
		if (pr->last == '>')
			putc_(pr, ' ');
		putc_(pr, '>');
	}
}

static void print_modifier(struct printer *pr, struct dm_node *dc, struct dm_node *inner)
{
	struct mod dpm;

	dpm.next = pr->mods;
	dpm.mod = dc;
	dpm.printed = 0;
	dpm.templates = pr->templates;
	pr->mods = &dpm;
	print(pr, inner);
	if (!dpm.printed)
		print_mod(pr, dc);
	pr->mods = dpm.next;
}

/* Whether a qualified name ending in @n needs its scope: operator(), ~A, {lambda()#1}, ... */
static int names_member(const struct dm_node *n)
{
	while (n->kind == DM_TAGGED_NAME || n->kind == DM_TEMPLATE)
		n = n->l;
	return n->kind != DM_NAME && n->kind != DM_SUB_STD;
}

/* The function a chain of local names starts in (f in f()::{lambda()#1}::operator()() const::x) */
static struct dm_node *outermost_function(struct dm_node *dc)
{
	struct dm_node *fn = dc->l, *n;
	int hops;

	for (hops = 0; hops < DM_MAX_PRINT_DEPTH; hops++) {
		if (fn->kind != DM_TYPED_NAME)
			return fn;
		for (n = fn->l; n && is_fnqual(n->kind); n = n->l)
			;
		while (n && n->kind == DM_QUAL)
			n = n->l;
		if (!n || n->kind != DM_LOCAL)
			return fn;
		fn = n->l;
	}
	return dc->l;
}

static void print_inner(struct printer *pr, struct dm_node *dc)
{
	switch (dc->kind) {
	case DM_NAME:
	case DM_SUB_STD:
		put(pr, dc->s, dc->len);
		return;
	case DM_NUMBER:
		putnum(pr, dc->num);
		return;
	case DM_BUILTIN:
		puts_(pr, dm_builtins[dc->num].name);
		return;
	case DM_FLOATN:
		puts_(pr, "_Float");
		putnum(pr, dc->num);
		if (dc->len)
			putc_(pr, 'x');
		return;
	case DM_QUAL:
	case DM_LOCAL: {
		struct dm_node *e = dc->r, *fn = dc->l;
		struct mod *hold = pr->mods;

		if (pr->tdepth && pr->sh) {
			if (dc->kind == DM_QUAL && pr->sh->strip_scopes && !names_member(e)) {
				print(pr, e);
				return;
			}
			if (dc->kind == DM_LOCAL && pr->sh->fold_locals)
				fn = outermost_function(dc);
		}
		/* the function a local entity is in takes none of the entity's modifiers */
		if (dc->kind == DM_LOCAL)
			pr->mods = NULL;
		print(pr, fn);
		pr->mods = hold;
		puts_(pr, fn == dc->l ? "::" : "::...::");
		if (e->kind == DM_DEFAULT_ARG) {
			puts_(pr, "{default arg#");
			putnum(pr, (long)e->num + 1);
			puts_(pr, "}::");
			e = e->l;
		}
		print(pr, e);
		return;
	}
	case DM_TYPED_NAME:
		print_typed_name(pr, dc);
		return;
	case DM_TEMPLATE:
		print_template(pr, dc);
		return;
	case DM_TPARAM: {
		struct dm_node *a;
		struct tpl *hold;

		if (pr->lambda_arg) {
			puts_(pr, "auto:");
			putnum(pr, (long)dc->num + 1);
			return;
		}
		a = lookup_tparam(pr, dc);
		if (a && a->kind == DM_TARGLIST)
			a = index_arg(a, pr->pack_index);
		if (!a) {
			pr->failed = 1;
			return;
		}
		/* the argument may name an outer template's parameters */
		hold = pr->templates;
		pr->templates = hold->next;
		print(pr, a);
		pr->templates = hold;
		return;
	}
	case DM_FPARAM:
		if (dc->num == 0) {
			puts_(pr, "this");
		} else {
			puts_(pr, "{parm#");
			putnum(pr, dc->num);
			putc_(pr, '}');
		}
		return;
	case DM_CTOR:
		print(pr, dc->l);
		return;
	case DM_DTOR:
		putc_(pr, '~');
		print(pr, dc->l);
		return;
	case DM_OPERATOR: {
		const struct dm_op *op = &dm_ops[dc->num];
		size_t len = op->len;

		puts_(pr, "operator");
		if (op->name[0] >= 'a' && op->name[0] <= 'z')
			putc_(pr, ' ');
		if (op->name[len - 1] == ' ')
			len--;
		put(pr, op->name, len);
		return;
	}
	case DM_EXT_OPERATOR:
		puts_(pr, "operator ");
		print(pr, dc->l);
		return;
	case DM_CONVERSION:
		puts_(pr, "operator ");
		print_conversion(pr, dc);
		return;
	case DM_VENDOR_TYPE:
		print(pr, dc->l);
		return;
	case DM_FUNC_TYPE:
		if (dc->l) {
			struct mod dpm;

			/* the return type prints around the declarator */
			dpm.next = pr->mods;
			dpm.mod = dc;
			dpm.printed = 0;
			dpm.templates = pr->templates;
			pr->mods = &dpm;
			print(pr, dc->l);
			pr->mods = dpm.next;
			if (dpm.printed)
				return;
			putc_(pr, ' ');
		}
		print_function_type(pr, dc, pr->mods);
		return;
	case DM_ARGLIST:
	case DM_TARGLIST:
		print_list(pr, dc, 0);
		return;
	case DM_ARRAY: {
		struct mod adpm[4], *hold = pr->mods, *p;
		int i = 1;

		adpm[0].next = pr->mods;
		adpm[0].mod = dc;
		adpm[0].printed = 0;
		adpm[0].templates = pr->templates;
		pr->mods = &adpm[0];
		/* a qualified array is an array of qualified elements */
		for (p = adpm[0].next; p && is_cv(p->mod->kind); p = p->next) {
			if (p->printed)
				continue;
			if (i >= 4) {
				pr->failed = 1;
				return;
			}
			adpm[i] = *p;
			adpm[i].next = pr->mods;
			pr->mods = &adpm[i];
			p->printed = 1;
			i++;
		}
		print(pr, dc->r);
		pr->mods = hold;
		if (adpm[0].printed)
			return;
		while (i > 1)
			print_mod(pr, adpm[--i].mod);
		print_array_type(pr, dc, pr->mods);
		return;
	}
	case DM_PTRMEM:
	case DM_VECTOR:
		print_modifier(pr, dc, dc->r);
		return;
	case DM_CONST:
	case DM_VOLATILE:
	case DM_RESTRICT: {
		struct mod *p;

		/* a qualifier already waiting in the run of qualifiers around this one (an
		 * array's, pushed twice; a T_ that is const under a const) prints once */
		for (p = pr->mods; p; p = p->next) {
			if (p->printed)
				continue;
			if (!is_cv(p->mod->kind))
				break;
			if (p->mod->kind == dc->kind) {
				print(pr, dc->l);
				return;
			}
		}
		print_modifier(pr, dc, dc->l);
		return;
	}
	case DM_REFERENCE:
	case DM_RVALUE_REF: {
		struct dm_node *sub = dc->l, *inner = NULL;
		struct tpl *hold = pr->templates;

		/* reference collapsing: & + && = & */
		if (!pr->lambda_arg && sub->kind == DM_TPARAM) {
			struct scope *sc = find_scope(pr, sub);
			struct dm_node *a;

			if (!sc)
				save_scope(pr, sub);
			else if (!on_stack(pr, sub, dc))
				pr->templates = sc->templates;
			a = pr->failed ? NULL : lookup_tparam(pr, sub);
			if (a && a->kind == DM_TARGLIST)
				a = index_arg(a, pr->pack_index);
			if (!a) {
				pr->failed = 1;
				return;
			}
			sub = a;
		}
		if (sub->kind == DM_REFERENCE || sub->kind == dc->kind)
			dc = sub;
		else if (sub->kind == DM_RVALUE_REF)
			inner = sub->l;
		print_modifier(pr, dc, inner ? inner : dc->l);
		pr->templates = hold;
		return;
	}
	case DM_POINTER:
	case DM_COMPLEX:
	case DM_IMAGINARY:
	case DM_VENDOR_QUAL:
	case DM_CONST_THIS:
	case DM_VOLATILE_THIS:
	case DM_RESTRICT_THIS:
	case DM_REF_THIS:
	case DM_RVALUE_REF_THIS:
	case DM_TX_SAFE:
	case DM_NOEXCEPT:
	case DM_THROW_SPEC:
		print_modifier(pr, dc, dc->l);
		return;
	case DM_PACK_EXPANSION: {
		/* a generic lambda's parameters are its own (auto:1...), not the template's */
		struct dm_node *a = pr->lambda_arg ? NULL : find_pack(pr, dc->l);
		int i, n;

		if (!a) {
			/* only function parameter packs: the pattern and "..." */
			print_subexpr(pr, dc->l);
			puts_(pr, "...");
			return;
		}
		n = pack_length(a);
		for (i = 0; i < n && !pr->failed; i++) {
			if (++pr->steps > DM_MAX_PRINT_STEPS)
				pr->failed = 1;
			pr->pack_index = i;
			print(pr, dc->l);
			if (i < n - 1)
				puts_(pr, ", ");
		}
		return;
	}
	case DM_DECLTYPE:
		puts_(pr, "decltype (");
		print(pr, dc->l);
		putc_(pr, ')');
		return;
	case DM_LITERAL:
	case DM_LITERAL_NEG:
		print_literal(pr, dc);
		return;
	case DM_TAGGED_NAME:
		print(pr, dc->l);
		puts_(pr, "[abi:");
		print(pr, dc->r);
		putc_(pr, ']');
		return;
	case DM_LAMBDA:
		puts_(pr, "{lambda(");
		pr->lambda_arg++;
		print(pr, dc->l);
		pr->lambda_arg--;
		puts_(pr, ")#");
		putnum(pr, (long)dc->num + 1);
		putc_(pr, '}');
		return;
	case DM_UNNAMED_TYPE:
		puts_(pr, "{unnamed type#");
		putnum(pr, (long)dc->num + 1);
		putc_(pr, '}');
		return;
	case DM_CLONE:
		print(pr, dc->l);
		puts_(pr, " [clone ");
		print(pr, dc->r);
		putc_(pr, ']');
		return;
	case DM_SPECIAL:
		put(pr, dc->s, dc->len);
		print(pr, dc->l);
		return;
	case DM_CTOR_VTABLE:
		puts_(pr, "construction vtable for ");
		print(pr, dc->l);
		puts_(pr, "-in-");
		print(pr, dc->r);
		return;
	case DM_REFTEMP:
		puts_(pr, "reference temporary #");
		print(pr, dc->r);
		puts_(pr, " for ");
		print(pr, dc->l);
		return;
	case DM_NULLARY:
		print_expr_op(pr, dc->l);
		return;
	case DM_UNARY:
		print_unary(pr, dc);
		return;
	case DM_BINARY:
		print_binary(pr, dc);
		return;
	case DM_TRINARY: {
		struct dm_node *a1 = dc->r, *a2 = a1 ? a1->r : NULL;

		if (!a1 || a1->kind != DM_TRINARY_ARG1 || !a2 || a2->kind != DM_TRINARY_ARG2 ||
		    strcmp(op_code(dc->l), "qu")) {
			pr->failed = 1;
			return;
		}
		print_subexpr(pr, a1->l);
		print_expr_op(pr, dc->l);
		print_subexpr(pr, a2->l);
		puts_(pr, " : ");
		print_subexpr(pr, a2->r);
		return;
	}
	default:
		pr->failed = 1;
		return;
	}
}

static void print(struct printer *pr, struct dm_node *dc)
{
	if (pr->failed)
		return;
	if (!dc || dc->printing > 1 || pr->depth >= DM_MAX_PRINT_DEPTH ||
	    ++pr->steps > DM_MAX_PRINT_STEPS) {
		pr->failed = 1;
		return;
	}
	dc->printing++;
	pr->stack[pr->depth++] = dc;
	print_inner(pr, dc);
	pr->depth--;
	dc->printing--;
}

/* The short form's root: a function's name without its return type and parameters. */
static void print_short_root(struct printer *pr, struct dm_node *dc)
{
	struct dm_node *n, *t;
	struct tpl dpt;

	if (dc->kind == DM_CLONE) {
		print_short_root(pr, dc->l);
		puts_(pr, " [clone ");
		print(pr, dc->r);
		putc_(pr, ']');
		return;
	}
	if (dc->kind != DM_TYPED_NAME) {
		print(pr, dc);
		return;
	}
	for (n = dc->l; n && is_fnqual(n->kind); n = n->l)
		;
	if (!n) {
		pr->failed = 1;
		return;
	}
	/* as print_typed_name: the function's template is in scope */
	for (t = n->kind == DM_LOCAL ? n->r : n; t && t->kind == DM_DEFAULT_ARG; t = t->l)
		;
	while (t && is_fnqual(t->kind))
		t = t->l;
	dpt.next = pr->templates;
	dpt.decl = t;
	if (t && t->kind == DM_TEMPLATE)
		pr->templates = &dpt;
	if (n->kind == DM_LOCAL) {
		struct dm_node *e = n->r;

		print(pr, n->l);
		puts_(pr, "::");
		if (e->kind == DM_DEFAULT_ARG) {
			puts_(pr, "{default arg#");
			putnum(pr, (long)e->num + 1);
			puts_(pr, "}::");
			e = e->l;
		}
		while (e && is_fnqual(e->kind))
			e = e->l;
		print(pr, e);
	} else {
		print(pr, n);
	}
	pr->templates = dpt.next;
}

long dm_print(struct dm_node *root, char *out, size_t out_len, const struct dm_short *sh,
	      struct dm_print_stats *st)
{
	struct printer pr;

	/* all but the arrays, which are read only where written */
	memset(&pr, 0, offsetof(struct printer, stack));
	pr.nr_scopes = 0;
	pr.nr_tpls = 0;
	pr.buf = out;
	pr.cap = out_len;
	pr.sh = sh;
	pr.st = st;
	if (st)
		memset(st, 0, sizeof(*st));
	if (sh && sh->is_short)
		print_short_root(&pr, root);
	else
		print(&pr, root);
	if (out_len)
		out[pr.len < out_len ? pr.len : out_len - 1] = 0;
	return pr.failed ? -1 : (long)pr.len;
}

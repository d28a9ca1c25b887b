/* SPDX-License-Identifier: MIT */
/*
 * demangle_int.h - what the demangler's parser (demangle_parse.c) hands its printer
 * (demangle_print.c): the tree of a mangled name, in a fixed arena of nodes. Internal to
 * util/demangle*.c; callers use demangle.h. No allocation, no I/O.
 */
#ifndef GPUSHIM_DEMANGLE_INT_H
#define GPUSHIM_DEMANGLE_INT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bounds on hostile input (the analyzer reads untrusted traces): nodes per name (32 bytes each,
 * on the caller's stack: 64 KiB), substitution candidates, parse nesting and print nesting
 * (C stack frames: the deepest accepted name needs 140 KiB of stack in all, -O2), and print
 * work (nodes visited, pack elements; bytes out). Measured
 * on the 142 mangled kernel names of the H200 fixtures and 339,581 C++ symbols of this
 * machine's libraries (libLLVM, libclang-cpp, grpc, ...): at most 228 nodes, parse depth 41,
 * print depth 29, 1,973 print steps, for names up to 1,042 bytes.
 */
#define DM_MAX_NODES 2048
#define DM_MAX_SUBS 1024
#define DM_MAX_PARSE_DEPTH 128
#define DM_MAX_PRINT_DEPTH 128
#define DM_MAX_PRINT_STEPS 200000
#define DM_MAX_OUTPUT (1u << 20)

/* Node kinds (uint8_t in the node, so switches need not name them all). */
enum {
	DM_NAME,		/* s/len: an identifier, a literal's digits, fixed text */
	DM_NUMBER,		/* num, in decimal */
	DM_SUB_STD,		/* s/len: a std:: abbreviation's expansion */
	DM_QUAL,		/* l::r */
	DM_LOCAL,		/* l (an encoding)::r (an entity local to it) */
	DM_TYPED_NAME,		/* l: a function's name, r: its DM_FUNC_TYPE */
	DM_TEMPLATE,		/* l<r>; r: DM_TARGLIST */
	DM_TPARAM,		/* num: template parameter index (T_ = 0) */
	DM_FPARAM,		/* num: function parameter (0 = this, fp_ = 1) */
	DM_CTOR,		/* l: the class's last name */
	DM_DTOR,		/* ~l */
	DM_OPERATOR,		/* num: index in dm_ops */
	DM_EXT_OPERATOR,	/* vendor operator v<digit><source-name>: num args, l name */
	DM_CONVERSION,		/* operator l (a type) */
	DM_CAST,		/* a cast in an expression: (l) */
	DM_BUILTIN,		/* num: index in dm_builtins */
	DM_FLOATN,		/* _Float<num>, with an x when len */
	DM_VENDOR_TYPE,		/* u<source-name>: l */
	DM_FUNC_TYPE,		/* l: return type or NULL, r: DM_ARGLIST or NULL */
	DM_ARGLIST,		/* l: item (NULL for an empty list), r: next cell */
	DM_TARGLIST,		/* template arguments: same shape as DM_ARGLIST */
	DM_POINTER,		/* l* */
	DM_REFERENCE,		/* l& */
	DM_RVALUE_REF,		/* l&& */
	DM_COMPLEX,		/* l _Complex */
	DM_IMAGINARY,		/* l _Imaginary */
	DM_CONST,		/* l const */
	DM_VOLATILE,
	DM_RESTRICT,
	DM_CONST_THIS,		/* qualifiers of a member function (and of function types) */
	DM_VOLATILE_THIS,
	DM_RESTRICT_THIS,
	DM_REF_THIS,		/* & ref-qualifier */
	DM_RVALUE_REF_THIS,	/* && ref-qualifier */
	DM_TX_SAFE,		/* transaction_safe */
	DM_NOEXCEPT,		/* noexcept, r: its expression or NULL */
	DM_THROW_SPEC,		/* throw(r) */
	DM_VENDOR_QUAL,		/* l r: type with a vendor qualifier */
	DM_ARRAY,		/* r [l] */
	DM_PTRMEM,		/* r l::* */
	DM_VECTOR,		/* r __vector(l) */
	DM_PACK_EXPANSION,	/* l... */
	DM_DECLTYPE,		/* decltype (l) */
	DM_LITERAL,		/* l: type, r: DM_NAME value */
	DM_LITERAL_NEG,
	DM_TAGGED_NAME,		/* l[abi:r] */
	DM_LAMBDA,		/* {lambda(l)#num+1} */
	DM_UNNAMED_TYPE,	/* {unnamed type#num+1} */
	DM_DEFAULT_ARG,		/* {default arg#num+1}::l */
	DM_CLONE,		/* l [clone r] */
	DM_SPECIAL,		/* s (fixed text, e.g. "vtable for ") then l */
	DM_CTOR_VTABLE,		/* construction vtable for l-in-r */
	DM_REFTEMP,		/* reference temporary #r for l */
	DM_NULLARY,		/* l: operator */
	DM_UNARY,		/* l: operator, r: operand */
	DM_BINARY,		/* l: operator, r: DM_BINARY_ARGS */
	DM_BINARY_ARGS,
	DM_TRINARY,		/* l: operator, r: DM_TRINARY_ARG1 */
	DM_TRINARY_ARG1,	/* l: first, r: DM_TRINARY_ARG2 */
	DM_TRINARY_ARG2,	/* l: second, r: third */
	DM_NR_KINDS
};

struct dm_node {
	uint8_t kind;
	uint8_t printing;	/* times on the printer's stack: a cycle guard */
	uint16_t len;		/* of s */
	int32_t num;
	const char *s;
	struct dm_node *l, *r;
};

/* Builtin types (kind DM_BUILTIN, num indexes this). How a literal of the type prints. */
enum dm_lit_style {
	DM_LIT_DEFAULT,		/* (type)value */
	DM_LIT_INT,		/* value */
	DM_LIT_UNSIGNED,	/* valueu */
	DM_LIT_LONG,		/* valuel */
	DM_LIT_ULONG,		/* valueul */
	DM_LIT_LLONG,		/* valuell */
	DM_LIT_ULLONG,		/* valueull */
	DM_LIT_BOOL,		/* true / false */
	DM_LIT_FLOAT,		/* (type)[value] */
	DM_LIT_VOID,
};

struct dm_builtin {
	const char *name;
	uint8_t len;
	uint8_t lit;		/* enum dm_lit_style */
};

struct dm_op {
	char code[3];
	uint8_t len;
	uint8_t args;		/* operands in an expression */
	const char *name;
};

extern const struct dm_builtin dm_builtins[];
extern const struct dm_op dm_ops[];
extern const size_t dm_nr_ops;

/* Index in dm_builtins of "void", "decltype(nullptr)" (a literal of it is just the type). */
#define DM_BUILTIN_VOID 21
#define DM_BUILTIN_NULLPTR 33

/*
 * dm_parse - the tree of @s (a NUL-terminated name starting "_Z"), its nodes in @nodes
 * (DM_MAX_NODES of them). Return: the root, or NULL when @s is not a whole mangled name this
 * parser understands, or needs more than the bounds above.
 */
struct dm_node *dm_parse(const char *s, struct dm_node *nodes);

/* How the printer shortens a name (demangle_short); all zero prints it whole. */
struct dm_short {
	int is_short;		/* the root function's return type and parameters dropped,
				   nested functions' parameters printed as "..." */
	int fold_locals;	/* in template arguments, a chain of local names prints its
				   outermost function and its last entity: f(...)::...::e */
	int strip_scopes;	/* in template arguments, qualified names print their last
				   component only */
	int max_depth;		/* template argument lists nested deeper print "<...>";
				   0: none kept; < 0: no limit */
	int keep_args;		/* lists at depth max_depth (or 1 when max_depth is 0) keep
				   this many arguments, then ", ..." (0: all) */
};

/* What a print found, to choose the next shortening. */
#define DM_STATS_DEPTH 16
struct dm_print_stats {
	int depth;			/* deepest template argument list printed (1 = outermost) */
	int args[DM_STATS_DEPTH];	/* most arguments in a list at each depth (args[0]
					   unused; deeper lists count at the last) */
};

/*
 * dm_print - print the tree @root into @out (@out_len bytes, NUL-terminated when @out_len >
 * 0), shortened as @sh says (NULL: whole).
 * Return: the length of the whole text (which may exceed @out_len - 1: then @out holds its
 * start), or -1 when the tree cannot be printed (a template parameter with no argument, a
 * cycle) or the print exceeds the bounds above.
 */
long dm_print(struct dm_node *root, char *out, size_t out_len, const struct dm_short *sh,
	      struct dm_print_stats *st);

#endif /* GPUSHIM_DEMANGLE_INT_H */

// SPDX-License-Identifier: MIT
/*
 * cmd_dump.c - `gpushim dump`: every record of a trace as decoded, in file order, as text or
 * as JSON lines. The reference decoder: it shows fields through trace_record_fields() and
 * interprets nothing. Names (strings, entry points) are resolved as they become known.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uthash.h"

#include "cmds.h"
#include "output/output.h"
#include "trace/trace_fields.h"
#include "trace/trace_reader.h"
#include "util/util.h"

/* A native address a PC record described: shown as symbol+offset, or module+offset. */
struct pc_name {
	UT_hash_handle hh;
	uint64_t pc;
	struct trace_rec_pc rec;
};

struct names {
	char **str;			/* STRING id -> text */
	size_t nr_str, cap_str;
	size_t nr_defs;			/* STRING records taken */
	uint32_t *api;			/* API_DEF id -> STRING id */
	size_t nr_api, cap_api;
	struct pc_name *pcs;		/* by address */
};

static const char *name_of(const struct names *n, uint32_t id)
{
	return id && id < n->nr_str && n->str[id] ? n->str[id] : NULL;
}

static void learn(struct names *n, const struct trace_record *r)
{
	if (r->type == TRACE_REC_STRING) {
		const struct trace_rec_string *s = r->rec;

		if (!trace_id_plausible(s->id, n->nr_defs))
			return;
		n->nr_defs++;
		if (s->id >= n->nr_str) {
			XGROW(n->str, n->cap_str, (size_t)s->id + 1);
			memset(n->str + n->nr_str, 0, (s->id + 1 - n->nr_str) * sizeof(char *));
			n->nr_str = (size_t)s->id + 1;
		}
		if (!n->str[s->id])
			n->str[s->id] = xstrndup((const char *)(s + 1), s->len);
	} else if (r->type == TRACE_REC_API_DEF) {
		const struct trace_rec_api_def *d = r->rec;

		if (d->api >= n->nr_api) {
			XGROW(n->api, n->cap_api, (size_t)d->api + 1);
			memset(n->api + n->nr_api, 0, (d->api + 1 - n->nr_api) * sizeof(uint32_t));
			n->nr_api = (size_t)d->api + 1;
		}
		n->api[d->api] = d->name;
	} else if (r->type == TRACE_REC_PC) {
		const struct trace_rec_pc *p = r->rec;
		struct pc_name *e;

		HASH_FIND(hh, n->pcs, &p->pc, sizeof(p->pc), e);
		if (e)
			return;
		e = xcalloc(1, sizeof(*e));
		e->pc = p->pc;
		e->rec = *p;
		HASH_ADD(hh, n->pcs, pc, sizeof(e->pc), e);
	}
}

/* How a native frame reads: symbol+0xN, module+0xN (the file's name), or the address. */
static void frame_text(const struct names *n, uint64_t pc, char *buf, size_t cap)
{
	struct pc_name *e;
	const char *s, *slash;

	HASH_FIND(hh, n->pcs, &pc, sizeof(pc), e);
	if (e && (s = name_of(n, e->rec.symbol))) {
		snprintf(buf, cap, "%s+0x%x", s, e->rec.sym_offset);
	} else if (e && (s = name_of(n, e->rec.module))) {
		slash = strrchr(s, '/');
		snprintf(buf, cap, "%s+0x%" PRIx64, slash ? slash + 1 : s, e->rec.offset);
	} else {
		snprintf(buf, cap, "0x%" PRIx64, pc);
	}
}

/* A STACK's frames on the text line: native ones, then Python's, innermost first. */
static void frames_text(const struct names *n, const struct trace_rec_stack *s)
{
	const struct trace_stack_py *py = trace_stack_py(s);
	const uint64_t *pc = trace_stack_pcs(s);
	char buf[64];
	uint16_t i;

	printf(" native=[");
	for (i = 0; i < s->nr_native; i++) {
		frame_text(n, pc[i], buf, sizeof(buf));
		printf("%s", i ? " " : "");
		print_clean(stdout, buf, 200);
	}
	printf("] python=[");
	for (i = 0; i < s->nr_python; i++) {
		const char *file = name_of(n, py[i].file), *func = name_of(n, py[i].func);

		printf("%s", i ? " " : "");
		print_clean(stdout, file ? file : "?", 400);
		printf(":%d:", py[i].line);
		print_clean(stdout, func ? func : "?", 200);
	}
	printf("]");
}

static void frames_json(const struct names *n, struct json *j, const struct trace_rec_stack *s)
{
	const struct trace_stack_py *py = trace_stack_py(s);
	const uint64_t *pc = trace_stack_pcs(s);
	char buf[64];
	uint16_t i;

	json_array_begin(j, "native");
	for (i = 0; i < s->nr_native; i++) {
		struct pc_name *e;

		HASH_FIND(hh, n->pcs, &pc[i], sizeof(pc[i]), e);
		json_object_begin(j, NULL);
		snprintf(buf, sizeof(buf), "0x%" PRIx64, pc[i]);
		json_str(j, "pc", buf);
		json_str(j, "symbol", e ? name_of(n, e->rec.symbol) : NULL);
		json_str(j, "module", e ? name_of(n, e->rec.module) : NULL);
		if (e) {
			snprintf(buf, sizeof(buf), "0x%" PRIx64, e->rec.offset);
			json_str(j, "offset", buf);
		}
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "python");
	for (i = 0; i < s->nr_python; i++) {
		json_object_begin(j, NULL);
		json_str(j, "file", name_of(n, py[i].file));
		json_str(j, "func", name_of(n, py[i].func));
		json_i64(j, "line", py[i].line);
		json_object_end(j);
	}
	json_array_end(j);
}

static double get_f32(const uint8_t *p)
{
	float v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_uint(const uint8_t *p, int size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

static void dump_text(const struct names *n, const struct trace_record *r, uint64_t t0)
{
	const uint8_t *p = r->rec;
	const struct trace_field *f;
	size_t nf, i;

	printf("%-12s", trace_record_type_name(r->type));
	if (r->is_thread)
		printf(" t=%.6fms tid=%u", (double)(int64_t)(r->ts_ns - t0) / 1e6, r->tid);
	f = trace_record_fields(r->type, &nf);
	if (!f)
		printf(" size=%u (unknown type, skipped)", r->size);
	for (i = 0; i < nf; i++) {
		const uint8_t *q = p + f[i].offset;
		uint64_t v;
		const char *s;

		if ((size_t)f[i].offset + f[i].size > r->size)
			continue;	/* an older, shorter record (grown at the tail since) */
		v = f[i].size ? get_uint(q, f[i].size > 8 ? 8 : f[i].size) : 0;
		switch (f[i].kind) {
		case TRACE_FIELD_X:
			printf(" %s=0x%" PRIx64, f[i].name, v);
			break;
		case TRACE_FIELD_I:
			printf(" %s=%d", f[i].name, (int32_t)v);
			break;
		case TRACE_FIELD_STR:
			s = name_of(n, (uint32_t)v);
			printf(" %s=%" PRIu64, f[i].name, v);
			if (s) {
				printf("(");
				print_clean(stdout, s, 120);
				printf(")");
			}
			break;
		case TRACE_FIELD_API:
			s = v < n->nr_api ? name_of(n, n->api[v]) : NULL;
			printf(" %s=", f[i].name);
			print_clean(stdout, s ? s : "?", 120);
			break;
		case TRACE_FIELD_U32X3:
			printf(" %s=%u,%u,%u", f[i].name, (uint32_t)get_uint(q, 4),
			       (uint32_t)get_uint(q + 4, 4), (uint32_t)get_uint(q + 8, 4));
			break;
		case TRACE_FIELD_U16X3:
			printf(" %s=%u,%u,%u", f[i].name, (uint32_t)get_uint(q, 2),
			       (uint32_t)get_uint(q + 2, 2), (uint32_t)get_uint(q + 4, 2));
			break;
		case TRACE_FIELD_F32:
			printf(" %s=%.2f", f[i].name, get_f32(q));
			break;
		case TRACE_FIELD_FRAMES:
			frames_text(n, r->rec);
			break;
		case TRACE_FIELD_TEXT: {
			char *t = xstrndup((const char *)p + sizeof(struct trace_rec_string),
					   (size_t)v);

			printf(" text=\"");
			print_clean(stdout, t, 4096);
			printf("\"");
			free(t);
			break;
		}
		default:
			printf(" %s=%" PRIu64, f[i].name, v);
			break;
		}
	}
	printf("\n");
}

static void dump_json(const struct names *n, const struct trace_record *r)
{
	const uint8_t *p = r->rec;
	const struct trace_field *f;
	struct json j;
	size_t nf, i;
	char key[64];

	json_init(&j, stdout, 0);
	json_object_begin(&j, NULL);
	json_str(&j, "type", trace_record_type_name(r->type));
	json_u64(&j, "size", r->size);
	if (r->is_thread) {
		json_u64(&j, "ts_ns", r->ts_ns);
		json_u64(&j, "tid", r->tid);
		json_u64(&j, "thread", r->thread_index);
	}
	f = trace_record_fields(r->type, &nf);
	for (i = 0; i < nf; i++) {
		const uint8_t *q = p + f[i].offset;
		uint64_t v;
		const char *s;
		int k;

		if ((size_t)f[i].offset + f[i].size > r->size)
			continue;	/* an older, shorter record (grown at the tail since) */
		v = f[i].size ? get_uint(q, f[i].size > 8 ? 8 : f[i].size) : 0;
		switch (f[i].kind) {
		case TRACE_FIELD_X:
			snprintf(key, sizeof(key), "0x%" PRIx64, v);
			json_str(&j, f[i].name, key);
			break;
		case TRACE_FIELD_I:
			json_i64(&j, f[i].name, (int32_t)v);
			break;
		case TRACE_FIELD_STR:
			json_u64(&j, f[i].name, v);
			snprintf(key, sizeof(key), "%s_str", f[i].name);
			json_str(&j, key, name_of(n, (uint32_t)v));
			break;
		case TRACE_FIELD_API:
			s = v < n->nr_api ? name_of(n, n->api[v]) : NULL;
			json_str(&j, f[i].name, s);
			break;
		case TRACE_FIELD_U32X3:
		case TRACE_FIELD_U16X3:
			json_array_begin(&j, f[i].name);
			for (k = 0; k < 3; k++)
				json_u64(&j, NULL,
					 f[i].kind == TRACE_FIELD_U32X3 ? get_uint(q + 4 * k, 4) :
								 get_uint(q + 2 * k, 2));
			json_array_end(&j);
			break;
		case TRACE_FIELD_F32:
			json_double(&j, f[i].name, get_f32(q), 3);
			break;
		case TRACE_FIELD_FRAMES:
			frames_json(n, &j, r->rec);
			break;
		case TRACE_FIELD_TEXT:
			json_u64(&j, f[i].name, v);
			json_strn(&j, "text", (const char *)p + sizeof(struct trace_rec_string),
				  (size_t)v);
			break;
		default:
			json_u64(&j, f[i].name, v);
			break;
		}
	}
	json_object_end(&j);
	json_done(&j);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gpushim dump [--format text|jsonl] TRACE\n"
		   "\nPrints every record of TRACE in file order, decoded, names resolved as they\n"
		   "become known (the reference reader: nothing interpreted).\n"
		   "\n  -f, --format text|jsonl  a record a line: text (default), or a JSON\n"
		   "                           object (jsonl; json is the same)\n"
		   "  -h, --help               this text\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pc_name *pe, *ptmp;
	struct names names;
	struct trace_reader rd;
	struct trace_record r;
	int c, is_json = 0, ret;
	size_t i;

	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (cmd_parse_format("dump", optarg, "jsonl", &is_json) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (trace_reader_open(&rd, argv[optind]) < 0) {
		cmd_error(rd.err);
		return 1;
	}
	memset(&names, 0, sizeof(names));
	if (!is_json) {
		printf("# ");
		print_clean(stdout, argv[optind], 4096);
		printf(": format %u.%u, shim ", rd.hdr.version_major, rd.hdr.version_minor);
		print_clean(stdout, rd.shim_version, 200);
		printf(", pid %u, host ", rd.hdr.pid);
		print_clean(stdout, rd.host, 200);
		printf("\n# command: ");
		print_clean(stdout, rd.cmdline, 4096);
		printf("\n");
	}
	while ((ret = trace_reader_next(&rd, &r)) > 0) {
		learn(&names, &r);
		if (is_json)
			dump_json(&names, &r);
		else
			dump_text(&names, &r, rd.hdr.start_mono_ns);
	}
	if (ret < 0) {
		cmd_error(rd.err);
	} else if (rd.is_truncated || !rd.has_end) {
		fprintf(stderr, "gpushim: warning: ");
		print_clean(stderr, argv[optind], 4096);
		fprintf(stderr, " is truncated after %llu chunks (no END record)\n",
			(unsigned long long)rd.nr_chunks);
	}
	HASH_ITER(hh, names.pcs, pe, ptmp) {
		HASH_DEL(names.pcs, pe);
		free(pe);
	}
	for (i = 0; i < names.nr_str; i++)
		free(names.str[i]);
	free(names.str);
	free(names.api);
	trace_reader_close(&rd);
	return ret < 0 ? 1 : 0;
}

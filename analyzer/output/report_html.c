// SPDX-License-Identifier: MIT
/*
 * report_html.c - see report_html.h: the report as one HTML page, its pictures inline SVG
 * (report_figures.c), its tables sortable by a script of its own. Every string from a trace
 * goes through html_escape; the page names no URL (a Content-Security-Policy forbids fetching
 * anything), so it opens the same with no network. Lays out; computes nothing.
 */
#include "report_html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "analysis/job.h"
#include "output.h"
#include "report_figures.h"
#include "util/util.h"

/* ---- Figures, cells and lines ---- */

/* The text report's rows of a cause's sites, and of each table by default (report_output.c). */
#define SITES_SHOWN 3
/*
 * A page is read by scrolling and sorting, not on one screen: its tables show more rows than
 * the text's by default (--top N, --all choose).
 */
#define HTML_TOP_DEFAULT 100

static void put(struct report_html *h, const char *s)
{
	fputs(s, h->f);
}

static void esc(struct report_html *h, const char *s)
{
	html_str(h->f, s);
}

/*
 * A figure of the JSON report: where it is there (@key, under the section's data-json-base)
 * and its value as the JSON writes it (@value), and how the page shows it (@unit: pct, ns,
 * count, bytes, rate, str), so that a test can hold the page against the JSON.
 */
static void data_json(struct report_html *h, const char *key, const char *value, const char *unit)
{
	fprintf(h->f, " data-json=\"%s\" data-unit=\"%s\" data-value=\"", key, unit);
	esc(h, value);
	put(h, "\"");
}

/* json_double's text of @v at @decimals, "null" when it writes null (negative: unknown). */
static char *json_num(char *buf, size_t n, double v, int decimals)
{
	if (!isfinite(v) || v < 0)
		snprintf(buf, n, "null");
	else
		snprintf(buf, n, "%.*f", decimals, v);
	return buf;
}

static char *json_uint(char *buf, size_t n, uint64_t v)
{
	snprintf(buf, n, "%llu", (unsigned long long)v);
	return buf;
}

/* <td> of a number: sorted by @v (raw), shown as @text. */
static void td_num(struct report_html *h, double v, const char *text)
{
	if (isfinite(v))
		fprintf(h->f, "<td class=\"n\" data-v=\"%.17g\">", v);
	else
		put(h, "<td class=\"n\" data-v=\"\">");
	esc(h, text);
	put(h, "</td>");
}

static void td_text(struct report_html *h, const char *text)
{
	put(h, "<td>");
	esc(h, text);
	put(h, "</td>");
}

/*
 * Lines a text printer wrote (report_output.c: the text report's wording, kept one), as list
 * items: each trimmed, the label a line starts with ("steps    ...") set apart.
 */
static void text_lines(struct report_html *h, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *gap;

		while (p < e && *p == ' ')
			p++;
		if (p < e) {
			put(h, "<li>");
			for (gap = p; gap + 1 < e && !(gap[0] == ' ' && gap[1] == ' '); gap++)
				;
			if (gap + 1 < e && !memchr(p, ' ', (size_t)(gap - p))) {
				put(h, "<b>");
				html_escape(h->f, p, (size_t)(gap - p));
				put(h, "</b> ");
				for (p = gap; p < e && *p == ' '; p++)
					;
			}
			html_escape(h->f, p, (size_t)(e - p));
			put(h, "</li>\n");
		}
		p = e + 1;
	}
}

/* A memory stream for the text printers; OOM is fatal in the analyzer. */
struct capture {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *capture_begin(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->buf, &c->len);
	if (!c->f)
		die("out of memory");
	return c->f;
}

static void capture_end(struct report_html *h, struct capture *c, const char *ul_class)
{
	if (fclose(c->f))
		die("out of memory");
	if (c->len) {
		fprintf(h->f, "<ul class=\"%s\">\n", ul_class);
		text_lines(h, c->buf, c->len);
		put(h, "</ul>\n");
	}
	free(c->buf);
}

/* ---- The page ---- */

static const char page_style[] =
	":root{--fg:#212529;--mute:#6c757d;--bg:#fff;--panel:#f8f9fa;--line:#dee2e6}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0 auto;max-width:1200px;padding:16px 24px 48px;color:var(--fg);"
	"background:var(--bg);"
	"font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\n"
	"h1{font-size:22px;margin:8px 0}h2{font-size:19px;margin:28px 0 8px;padding-top:12px;"
	"border-top:2px solid var(--line)}h3{font-size:16px;margin:22px 0 6px}\n"
	".meta{color:var(--mute);margin:2px 0}.meta b{color:var(--fg);font-weight:600}\n"
	".verdict{font-size:16px;padding:10px 14px;background:var(--panel);"
	"border-left:4px solid #e63946;margin:10px 0}\n"
	".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:10px;"
	"margin:10px 0}\n"
	".card{background:var(--panel);border:1px solid var(--line);border-radius:6px;"
	"padding:8px 12px}\n"
	".card .k{color:var(--mute);font-size:12px;text-transform:uppercase;letter-spacing:.04em}\n"
	".card .v{font-size:26px;font-weight:600;font-variant-numeric:tabular-nums}\n"
	".card .s{color:var(--mute);font-size:12px}\n"
	".badge{background:#e63946;color:#fff;border-radius:3px;padding:0 5px;font-size:12px;"
	"margin-left:6px;vertical-align:middle}\n"
	"ul.lines{list-style:none;padding:0;margin:6px 0}ul.lines li{margin:2px 0}"
	"ul.lines b{display:inline-block;min-width:5.5em;font-weight:600}\n"
	"figure{margin:8px 0}figcaption{color:var(--mute);font-size:12px}\n"
	"svg.chart{display:block;width:100%;height:auto;max-width:1000px;"
	"font:11px system-ui,sans-serif}\n"
	"svg .hit{fill:#000;fill-opacity:0}svg .hit:hover{fill-opacity:.08}\n"
	"svg .axis{stroke:#adb5bd;stroke-width:1}svg .grid{stroke:#e9ecef;stroke-width:1}\n"
	"svg text{fill:var(--fg)}svg text.m{fill:var(--mute)}\n"
	".legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:4px 0}"
	".sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:4px;"
	"vertical-align:-1px}\n"
	".tw{overflow-x:auto}\n"
	"table{border-collapse:collapse;margin:6px 0;font-size:13px}"
	"th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;"
	"vertical-align:top}\n"
	"th{background:var(--panel);position:sticky;top:0;white-space:nowrap}\n"
	"table.sortable th{cursor:pointer;user-select:none}\n"
	"table.sortable th:hover{background:#e9ecef}\n"
	"th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after"
	"{content:' \\25BC'}\n"
	"td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"td.name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;"
	"word-break:break-all}\n"
	"tfoot td{color:var(--mute);border:0}\n"
	".advice{color:var(--mute);font-size:12px;margin-top:3px}\n"
	"td.cause{white-space:nowrap}\n"
	".sites{margin:3px 0 0;padding-left:16px;font-size:12px}"
	".sites code{word-break:break-all}"
	".where{color:#555;margin-left:8px}.where code.src{color:#333;background:#f4f4f4}\n"
	".note{color:var(--mute)}\n"
	"nav a{margin-right:12px}\n";

/*
 * The script: sort a table by a header clicked (again: the other way), numbers by their
 * data-v, text by its letters, ties in the page's order; a link's #sort=TABLE:COLUMN:asc|desc
 * opens the page so sorted. It also notes each picture's size as laid out (data-drawn), which
 * a test reads back from a browser's DOM. Plain ES5: any browser of the last decade.
 */
static const char page_script[] =
	"(function () {\n"
	"'use strict';\n"
	"function key(td) {\n"
	"  var v = td.getAttribute('data-v');\n"
	"  if (v === null) return td.textContent.trim().toLowerCase();\n"
	"  return v === '' ? -Infinity : parseFloat(v);\n"
	"}\n"
	"function sortTable(table, col, desc) {\n"
	"  var body = table.tBodies[0], heads = table.tHead.rows[0].cells, i;\n"
	"  var rows = Array.prototype.map.call(body.rows, function (r, n) {\n"
	"    return { r: r, k: key(r.cells[col]), n: n };\n"
	"  });\n"
	"  rows.sort(function (a, b) {\n"
	"    var c;\n"
	"    if (typeof a.k === 'number' && typeof b.k === 'number')\n"
	"      c = a.k === b.k ? 0 : a.k < b.k ? -1 : 1;\n"
	"    else\n"
	"      c = String(a.k) < String(b.k) ? -1 : String(a.k) > String(b.k) ? 1 : 0;\n"
	"    return (desc ? -c : c) || a.n - b.n;\n"
	"  });\n"
	"  for (i = 0; i < rows.length; i++) body.appendChild(rows[i].r);\n"
	"  for (i = 0; i < heads.length; i++) heads[i].removeAttribute('aria-sort');\n"
	"  heads[col].setAttribute('aria-sort', desc ? 'descending' : 'ascending');\n"
	"}\n"
	"function wire(table) {\n"
	"  var heads = table.tHead.rows[0].cells, i;\n"
	"  for (i = 0; i < heads.length; i++) (function (th, col) {\n"
	"    function go() {\n"
	"      var now = th.getAttribute('aria-sort'), cell = table.tBodies[0].rows[0];\n"
	"      var isNum = cell && cell.cells[col] && cell.cells[col].hasAttribute('data-v');\n"
	"      sortTable(table, col, now ? now === 'ascending' : isNum);\n"
	"    }\n"
	"    th.tabIndex = 0;\n"
	"    th.addEventListener('click', go);\n"
	"    th.addEventListener('keydown', function (e) {\n"
	"      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); }\n"
	"    });\n"
	"  })(heads[i], i);\n"
	"}\n"
	"function fromHash() {\n"
	"  var m = /^#sort=([A-Za-z0-9_-]+):([0-9]+):(asc|desc)$/.exec(location.hash), t;\n"
	"  if (!m) return;\n"
	"  t = document.getElementById(m[1]);\n"
	"  if (t && t.tHead && t.tBodies.length && +m[2] < t.tHead.rows[0].cells.length)\n"
	"    sortTable(t, +m[2], m[3] === 'desc');\n"
	"}\n"
	"var tables = document.querySelectorAll('table.sortable'), svgs, i, b;\n"
	"for (i = 0; i < tables.length; i++)\n"
	"  if (tables[i].tHead && tables[i].tBodies.length) wire(tables[i]);\n"
	"fromHash();\n"
	"window.addEventListener('hashchange', fromHash);\n"
	"svgs = document.querySelectorAll('svg.chart');\n"
	"for (i = 0; i < svgs.length; i++) {\n"
	"  b = svgs[i].getBoundingClientRect();\n"
	"  svgs[i].setAttribute('data-drawn', Math.round(b.width) + 'x' + Math.round(b.height));\n"
	"}\n"
	"document.documentElement.setAttribute('data-script', 'ok');\n"
	"})();\n";

static void page_begin(struct report_html *h, const struct model *m)
{
	put(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	       /* Nothing from elsewhere, whatever a page holds: no fetch, no frame, no form. */
	       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	       "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
	       "form-action 'none'\">\n");
	fprintf(h->f, "<meta name=\"generator\" content=\"gpushim %s\">\n<title>gpushim report: ",
		GPUSHIM_VERSION);
	if (h->is_many)
		put(h, "several processes");
	else
		esc(h, m->path);
	fprintf(h->f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>gpushim report</h1>\n",
		page_style);
	if (h->is_many)
		put(h, "<nav class=\"meta\">one section per process, then "
		       "<a href=\"#combined\">the combined view</a></nav>\n");
	h->is_begun = 1;
}

static void provenance(struct report_html *h, const struct model *m)
{
	char v[64];

	put(h, "<p class=\"meta\"><b>trace</b> ");
	esc(h, m->path);
	put(h, "</p>\n<p class=\"meta\"><b>command</b> ");
	esc(h, m->cmdline);
	fprintf(h->f, "</p>\n<p class=\"meta\"><b>pid</b> %u on ", m->pid);
	esc(h, m->host);
	put(h, ", shim ");
	esc(h, m->shim_version);
	snprintf(v, sizeof(v), "%u.%u", m->version_major, m->version_minor);
	fprintf(h->f, ", trace format %s, %s", v,
		m->is_complete ? "complete" : "<b>TRUNCATED</b> (partial results)");
	if (m->end_reason == TRACE_END_SIGNAL || m->end_reason == TRACE_END_EXEC) {
		const char *detail = model_end_detail(m);

		fprintf(h->f, " (ended by %s%s", model_end_reason(m), detail ? ": " : "");
		esc(h, detail);
		put(h, ")");
	}
	if (m->lost_records)
		fprintf(h->f, ", <b>%llu records LOST</b>", (unsigned long long)m->lost_records);
	put(h, "</p>\n");
}

/* ---- The first screen: the verdict and the seed's four signals ---- */

static void card_begin(struct report_html *h, const char *label)
{
	put(h, "<div class=\"card\"><div class=\"k\">");
	esc(h, label);
	put(h, "</div><div class=\"v\"");
}

static void signals(struct report_html *h, const struct model *m, const struct stats *s,
		    const struct findings *fd)
{
	const struct loop *l = &s->loop;
	char a[32], b[32], c[32], v[64], line[256];
	struct capture cap;

	put(h, "<p class=\"verdict\"><b>verdict</b> <span");
	data_json(h, "verdict.summary", fd->summary, "str");
	put(h, ">");
	esc(h, fd->summary);
	put(h, "</span> <span class=\"note\">(primary cause: <span");
	snprintf(v, sizeof(v), "%s", fd->primary >= 0 ? cause_name(fd->primary) :
				     fd->has_gpu	 ? "none" :
							   "unknown");
	data_json(h, "verdict.primary", v, "str");
	fprintf(h->f, ">%s</span>)</span></p>\n<div class=\"cards\">\n", v);

	/* memory: how full the device got */
	card_begin(h, "device memory at the peak");
	if (s->mem.device_total_bytes && s->mem.peak_pct >= 0) {
		data_json(h, "memory.peak_pct", json_num(v, sizeof(v), s->mem.peak_pct, 2), "pct");
		fprintf(h->f, ">%.1f%%%s</div><div class=\"s\">of %s (%s on device %d, ",
			s->mem.peak_pct,
			fd->is_memory_full > 0 ? "<span class=\"badge\">FULL</span>" : "",
			fmt_bytes(a, sizeof(a), s->mem.device_total_bytes),
			fmt_bytes(b, sizeof(b), s->mem.peak_bytes), s->mem.peak_device);
		esc(h, report_device_name(m, s->mem.peak_device));
		put(h, ")</div></div>\n");
	} else if (!s->mem.nr_allocs) {
		put(h, ">none</div><div class=\"s\">no device allocation recorded (memory "
		       "allocated before the shim was loaded is not seen)</div></div>\n");
	} else {
		data_json(h, "memory.peak_bytes", json_uint(v, sizeof(v), s->mem.peak_bytes),
			  "bytes");
		fprintf(h->f, ">%s</div><div class=\"s\">device size unknown</div></div>\n",
			fmt_bytes(a, sizeof(a), s->mem.peak_bytes));
	}

	/* compute: busy, and how full the SMs were while busy */
	card_begin(h, "GPU busy");
	if (fd->has_gpu) {
		data_json(h, "verdict.signals.gpu_busy_pct",
			  json_num(v, sizeof(v), fd->busy_pct, 2), "pct");
		fprintf(h->f, ">%.1f%%</div><div class=\"s\">of the <span", fd->busy_pct);
		data_json(h, "span_ns", json_uint(v, sizeof(v), fd->window_ns), "ns");
		fprintf(h->f, ">%s</span> window (what nvidia-smi shows as utilization)"
			      "</div></div>\n",
			fmt_ns(a, sizeof(a), fd->window_ns));
	} else {
		put(h, ">unknown</div><div class=\"s\">no GPU timestamps (CUPTI absent or off)"
		       "</div></div>\n");
	}
	card_begin(h, "SMs filled");
	if (fd->has_gpu) {
		data_json(h, "verdict.signals.sm_fill_pct", json_num(v, sizeof(v), fd->fill_pct, 2),
			  "pct");
		fprintf(h->f, ">%.1f%%</div><div class=\"s\">of the time (busy time weighted by SM "
			      "fill)",
			fd->fill_pct);
		if (fd->ctr.has) {
			put(h, "; SM active <span");
			json_num(v, sizeof(v), fd->ctr.mean[TRACE_PM_SM_ACTIVE], 2);
			data_json(h, "verdict.signals.sm_active_pct", v, "pct");
			fprintf(h->f, ">%.1f%%</span>, DRAM <span",
				fd->ctr.mean[TRACE_PM_SM_ACTIVE]);
			data_json(h, "verdict.signals.dram_bandwidth_pct",
				  json_num(v, sizeof(v), fd->ctr.mean[TRACE_PM_DRAM], 2), "pct");
			fprintf(h->f, ">%.1f%%</span> of peak", fd->ctr.mean[TRACE_PM_DRAM]);
		}
		put(h, "</div></div>\n");
	} else {
		put(h, ">unknown</div><div class=\"s\">no GPU timestamps</div></div>\n");
	}

	/* throughput: steps a second in the steady state, else kernels a second */
	if (l->steady) {
		card_begin(h, "steady steps per second");
		data_json(h, "verdict.signals.steps_per_s", json_num(v, sizeof(v), l->per_s, 3),
			  "rate");
		fprintf(h->f, ">%.2f</div><div class=\"s\">step <span", l->per_s);
		data_json(h, "steps.p50_ns", json_uint(v, sizeof(v), l->p50_ns), "ns");
		fprintf(h->f, ">%s</span> median, %s p99, over <span",
			fmt_ns(a, sizeof(a), l->p50_ns), fmt_ns(b, sizeof(b), l->p99_ns));
		data_json(h, "steps.steady_steps", json_uint(v, sizeof(v), l->steady), "count");
		fprintf(h->f, ">%s</span> steady steps</div></div>\n",
			fmt_count(c, sizeof(c), l->steady));
	} else if (fd->has_gpu) {
		card_begin(h, "kernels per second");
		data_json(h, "verdict.signals.kernels_per_s",
			  json_num(v, sizeof(v), fd->kernels_per_s, 1), "rate");
		fprintf(h->f, ">%.0f</div><div class=\"s\">no steps: %s/s copied</div></div>\n",
			fd->kernels_per_s, fmt_bytes(a, sizeof(a), sat_u64(fd->copy_bytes_per_s)));
	} else {
		card_begin(h, "throughput");
		put(h, ">unknown</div><div class=\"s\">no steps, no GPU timestamps</div></div>\n");
	}
	put(h, "</div>\n<ul class=\"lines\">\n");
	if (fd->has_gpu) {
		fprintf(h->f, "<li><b>rate</b> %.0f kernels/s, %s/s copied; %s before the %s"
			      "</li>\n",
			fd->kernels_per_s, fmt_bytes(b, sizeof(b), sat_u64(fd->copy_bytes_per_s)),
			fmt_ns(c, sizeof(c), fd->startup_ns),
			l->found.source != STEPS_NONE ? "window (start-up, warm-up)" :
							"first kernel");
		if (report_left_out(line, sizeof(line), s, fd)) {
			put(h, "<li><b>covered</b> <span");
			data_json(h, "verdict.excluded", line, "str");
			put(h, ">");
			esc(h, line);
			put(h, "</span>");
			if (fd->sampling.is_sampled) {
				put(h, " (<span");
				json_num(v, sizeof(v), fd->sampling.covered_pct, 2);
				data_json(h, "sampling.covered_pct", v, "pct");
				fprintf(h->f, ">%.1f%%</span> covered)", fd->sampling.covered_pct);
			}
			put(h, "</li>\n");
		}
	}
	put(h, "</ul>\n");
	report_print_counters(capture_begin(&cap), fd);
	capture_end(h, &cap, "lines");
}

/* ---- Causes ---- */

/* A share "22.3" with its interval "+-0.8" in the next cell when the run was sampled. */
static void td_pct(struct report_html *h, const char *key, double v, int has_ci, double ci,
		   const char *ci_key)
{
	char buf[32], text[32];

	if (v < 0) {
		put(h, "<td class=\"n\" data-v=\"\">-</td>");
	} else {
		snprintf(text, sizeof(text), "%.1f%%", v);
		fprintf(h->f, "<td class=\"n\" data-v=\"%.17g\"", v);
		data_json(h, key, json_num(buf, sizeof(buf), v, 2), "pct");
		fprintf(h->f, ">%s</td>", text);
	}
	if (!has_ci)
		return;
	if (ci >= 0) {
		fprintf(h->f, "<td class=\"n\" data-v=\"%.17g\"", ci);
		data_json(h, ci_key, json_num(buf, sizeof(buf), ci, 2), "pct");
		fprintf(h->f, ">&plusmn;%.1f</td>", ci);
	} else {
		put(h, "<td class=\"n\" data-v=\"\"></td>");
	}
}

/* A place and, when read, its source line. */
static void html_place(struct report_html *h, const char *at, const char *src)
{
	put(h, "<code>");
	esc(h, at);
	put(h, "</code>");
	if (src[0]) {
		put(h, " <code class=\"src\">");
		esc(h, src);
		put(h, "</code>");
	}
}

/* Where in the program a site's calls were made (report_where), under it. */
static void site_where(struct report_html *h, const struct model *m, const struct f_site *st,
		       int k)
{
	char at[512], src[160], from[512], from_src[160];

	report_where(m, st->stack, at, sizeof(at), src, sizeof(src));
	if (!at[0])
		return;
	put(h, "<div class=\"where\">");
	from[0] = 0;
	if (k == CAUSE_CPU_BOUND && st->from_stack && st->from_stack != st->stack)
		report_where(m, st->from_stack, from, sizeof(from), from_src, sizeof(from_src));
	if (from[0]) {
		put(h, "between ");
		html_place(h, from, from_src);
		put(h, "<br>and ");
	}
	html_place(h, at, src);
	put(h, "</div>");
}

static void cause_evidence(struct report_html *h, const struct model *m,
			   const struct findings *fd, int k, const struct report_names *tn)
{
	const struct f_cause *c = &fd->causes[k];
	char a[32], b[32];
	struct capture cap;
	int i, has_sites = 0;

	put(h, "<td>");
	if (k == CAUSE_LOW_PARALLELISM) {
		fprintf(h->f, "kernels fill %.1f%% of the SMs on average", c->value);
	} else if (k == CAUSE_MEMCPY) {
		fprintf(h->f, "%s copied, %s of it pageable", fmt_bytes(a, sizeof(a), c->bytes),
			fmt_bytes(b, sizeof(b), c->pageable_bytes));
	} else if (k == CAUSE_MEMORY_BANDWIDTH || k == CAUSE_COMPUTE_BOUND ||
		   k == CAUSE_LATENCY_BOUND) {
		report_print_busy_evidence(capture_begin(&cap), fd, k);
		if (fclose(cap.f))
			die("out of memory");
		for (i = 0; (size_t)i < cap.len && cap.buf[i] == ' '; i++)
			;
		html_escape(h->f, cap.buf + i, cap.len - (size_t)i);
		free(cap.buf);
	} else {
		fprintf(h->f, "in %llu gaps", (unsigned long long)c->count);
	}
	if (k == CAUSE_LAUNCH_OVERHEAD && c->aux)
		fprintf(h->f, ", %llu kernels shorter than their launch",
			(unsigned long long)c->aux);
	for (i = 0; i < c->nr_sites && i < SITES_SHOWN; i++) {
		const struct f_site *st = &c->sites[i];

		if (!st->time_ns && k != CAUSE_MEMCPY)
			continue;
		if (!has_sites++)
			put(h, "<ul class=\"sites\">");
		fprintf(h->f, "<li>%s %s <code>", fmt_ns(a, sizeof(a), st->time_ns),
			k == CAUSE_LOW_PARALLELISM ? "kernel" : "at");
		esc(h, report_name(tn, st->what ? st->what : "?"));
		put(h, "</code>");
		if (st->after) {
			put(h, k == CAUSE_MEMCPY ? " (<code>" : " after <code>");
			esc(h, report_name(tn, st->after));
			put(h, k == CAUSE_MEMCPY ? "</code>)" : "</code>");
		}
		if (k == CAUSE_LOW_PARALLELISM && st->count)
			fprintf(h->f, " (fill %.1f%%)", 100 * st->value / (double)st->count);
		fprintf(h->f, " &times;%llu", (unsigned long long)st->count);
		site_where(h, m, st, k);
		put(h, "</li>");
	}
	if (has_sites)
		put(h, "</ul>");
	put(h, "<div class=\"advice\"><b>fix:</b> ");
	esc(h, findings_advice(fd, k));
	put(h, "</div></td>");
}

static void causes(struct report_html *h, const struct model *m, const struct findings *fd,
		   const struct report_names *tn, int sec)
{
	const int is_sampled = fd->sampling.is_sampled;
	struct figure_cause bars[NR_CAUSES] = { { 0 } };
	char a[32], b[32], key[64], key2[64];
	int r;

	put(h, "<h3>Causes</h3>\n");
	if (!fd->has_gpu) {
		put(h, "<p class=\"note\">unknown without GPU timestamps</p>\n");
		return;
	}
	fprintf(h->f, "<p>time lost%s, share of the %s window%s%s</p>\n",
		is_sampled ? " in the sampled windows" : "", fmt_ns(a, sizeof(a), fd->window_ns),
		is_sampled ? " (measured in the windows, taken as the whole window's, &plusmn; its "
			     "95% interval across windows)" : "",
		fd->replay.done ? "; saving if fixed alone, ranked by it" : "");
	put(h, "<ul class=\"lines\">");
	if (fd->replay.done && fd->replay.windows)
		fprintf(h->f, "<li><b>replayed</b> %llu windows, each on its own (%s), replay "
			      "error %+.2f%%</li>\n",
			(unsigned long long)fd->replay.windows,
			fmt_ns(b, sizeof(b), fd->replay.recorded_ns), fd->replay.error_pct);
	else if (fd->replay.done && fd->replay.steps)
		fprintf(h->f, "<li><b>replayed</b> %llu%s steps (%s), replay error %+.2f%%</li>\n",
			(unsigned long long)fd->replay.steps,
			fd->replay.is_part ? " of the steady" : " steady",
			fmt_ns(b, sizeof(b), fd->replay.recorded_ns), fd->replay.error_pct);
	else if (fd->replay.done)
		fprintf(h->f, "<li><b>replayed</b> %s%s, replay error %+.2f%%</li>\n",
			fmt_ns(b, sizeof(b), fd->replay.recorded_ns),
			fd->replay.is_part ? " of the window" : "", fd->replay.error_pct);
	else if (fd->replay.why)
		fprintf(h->f, "<li><b>not replayed</b> %s</li>\n", fd->replay.why);
	put(h, "</ul>\n");
	for (r = 0; r < fd->nr_ranked; r++) {
		const struct f_cause *c = &fd->causes[fd->ranked[r]];

		bars[r] = (struct figure_cause){ fd->ranked[r], c->share_pct,
					      is_sampled ? c->share_ci_pct : -1,
					      c->has_saving ? c->saving_pct : -1,
					      c->has_saving && is_sampled ? c->saving_ci_pct : -1 };
	}
	figure_causes(h->f, bars, fd->nr_ranked);
	if (!fd->nr_ranked) {
		put(h, "<p>none: the GPU was kept busy</p>\n");
	} else {
		fprintf(h->f, "<div class=\"tw\"><table class=\"sortable\" id=\"causes-%d\"><thead>"
			      "<tr><th>#</th><th>cause</th><th>time lost</th><th>share</th>%s"
			      "<th>saving</th>%s<th>evidence</th></tr></thead><tbody>\n",
			sec, is_sampled ? "<th>&plusmn;</th>" : "",
			is_sampled ? "<th>&plusmn;</th>" : "");
	}
	for (r = 0; r < fd->nr_ranked; r++) {
		int k = fd->ranked[r];
		const struct f_cause *c = &fd->causes[k];

		fprintf(h->f, "<tr><td class=\"n\" data-v=\"%d\">%d</td><td class=\"cause\">"
			      "<span class=\"sw\" "
			      "style=\"background:%s\"></span><span",
			r + 1, r + 1, figure_colour(k));
		snprintf(key, sizeof(key), "attribution.%d.cause", r);
		data_json(h, key, cause_name(k), "str");
		fprintf(h->f, ">%s</span></td><td class=\"n\" data-v=\"%llu\"", cause_name(k),
			(unsigned long long)c->time_ns);
		snprintf(key, sizeof(key), "attribution.%d.time_ns", r);
		data_json(h, key, json_uint(b, sizeof(b), c->time_ns), "ns");
		fprintf(h->f, ">%s</td>", fmt_ns(a, sizeof(a), c->time_ns));
		snprintf(key, sizeof(key), "attribution.%d.share_pct", r);
		snprintf(key2, sizeof(key2), "attribution.%d.share_ci_pct", r);
		td_pct(h, key, c->share_pct, is_sampled,
		       is_sampled && c->status == CS_MEASURED ? c->share_ci_pct : -1, key2);
		snprintf(key, sizeof(key), "attribution.%d.saving_pct", r);
		snprintf(key2, sizeof(key2), "attribution.%d.saving_ci_pct", r);
		td_pct(h, key, c->has_saving ? c->saving_pct : -1, is_sampled,
		       c->has_saving ? c->saving_ci_pct : -1, key2);
		cause_evidence(h, m, fd, k, tn);
		put(h, "</tr>\n");
	}
	if (fd->nr_ranked)
		put(h, "</tbody></table></div>\n");
	put(h, "<ul class=\"lines note\">\n");
	if (fd->causes[CAUSE_MEMORY_CAPACITY].status == CS_SIGNAL)
		fprintf(h->f, "<li>memory_capacity: peak %.1f%% of device memory (a signal, not "
			      "lost time)</li>\n",
			fd->causes[CAUSE_MEMORY_CAPACITY].value);
	if (!fd->ctr.has)
		put(h, "<li>memory_bandwidth (of kernels), compute_bound, latency_bound: unknown "
		       "without hardware counters</li>\n");
	else if (!fd->ctr.has_pipes)
		put(h, "<li>latency_bound and compute_bound's pipe: unknown, the trace has no pipe "
		       "counters (format before 1.7)</li>\n");
	{
		char d[32], e[32], g[32], i[32];

		fprintf(h->f, "<li>idle %s, of which %s one-time module loading, %s calls "
			      "stalled by the counters' set-up, %s GPU-side dependency waits, %s "
			      "scheduling noise under 5 us</li>\n",
			fmt_ns(d, sizeof(d), fd->idle_ns), fmt_ns(e, sizeof(e), fd->module_load_ns),
			fmt_ns(g, sizeof(g), fd->profiler_setup_ns),
			fmt_ns(i, sizeof(i), fd->dependency_ns),
			fmt_ns(a, sizeof(a), fd->noise_ns));
	}
	put(h, "</ul>\n");
}

/* ---- Steps ---- */

static void steps(struct report_html *h, const struct model *m, const struct stats *s,
		  const struct report_names *tn)
{
	struct capture cap;

	put(h, "<h3>Steps and phases</h3>\n");
	report_print_loop(capture_begin(&cap), m, s, tn);
	capture_end(h, &cap, "lines");
	if (!s->loop.nr_series)
		return;
	put(h, "<figure>\n");
	figure_steps(h->f, &s->loop);
	put(h, "</figure>\n");
}

/* ---- Tables ---- */

static void table_more(struct report_html *h, size_t nr, size_t shown, int cols)
{
	if (nr > shown)
		fprintf(h->f, "<tfoot><tr><td colspan=\"%d\">... %zu more (--all shows every row)"
			      "</td></tr></tfoot>",
			cols, nr - shown);
}

static void kernels(struct report_html *h, const struct stats *s, const struct findings *fd,
		    const struct report_names *tn, int sec)
{
	size_t i, n = report_table_rows(s->nr_kernels, h->top, HTML_TOP_DEFAULT);
	const int has_pm = fd->ctr.has;
	char a[32], b[32], key[64];

	if (!s->nr_kernels)
		return;
	fprintf(h->f, "<h3>Kernels</h3>\n<div class=\"tw\"><table class=\"sortable\" "
		      "id=\"kernels-%d\"><thead><tr><th>#</th><th>launches</th><th>GPU time</th>"
		      "<th>mean</th><th>p99</th><th>fill</th><th>grid/block</th>%s<th>name</th>"
		      "</tr></thead><tbody>\n",
		sec, has_pm ? "<th>DRAM</th><th>SM tp</th><th>bound</th>" : "");
	for (i = 0; i < n; i++) {
		const struct s_kernel *k = &s->kernels[i];
		char shape[64], fill[16];
		char *whole;

		fprintf(h->f, "<tr><td class=\"n\" data-v=\"%zu\">%zu</td><td class=\"n\" "
			      "data-v=\"%llu\"",
			i + 1, i + 1, (unsigned long long)k->launches);
		snprintf(key, sizeof(key), "kernels.%zu.launches", i);
		data_json(h, key, json_uint(b, sizeof(b), k->launches), "count");
		fprintf(h->f, ">%s</td>", fmt_count(a, sizeof(a), k->launches));
		if (k->gpu_count) {
			fprintf(h->f, "<td class=\"n\" data-v=\"%llu\"",
				(unsigned long long)k->gpu_total_ns);
			snprintf(key, sizeof(key), "kernels.%zu.total_ns", i);
			data_json(h, key, json_uint(b, sizeof(b), k->gpu_total_ns), "ns");
			fprintf(h->f, ">%s</td>", fmt_ns(a, sizeof(a), k->gpu_total_ns));
			td_num(h, (double)(k->gpu_total_ns / k->gpu_count),
			       fmt_ns(a, sizeof(a), k->gpu_total_ns / k->gpu_count));
			td_num(h, (double)k->gpu_p99_ns, fmt_ns(a, sizeof(a), k->gpu_p99_ns));
		} else {
			put(h, "<td class=\"n\" data-v=\"\">-</td>"
			       "<td class=\"n\" data-v=\"\">-</td>"
			       "<td class=\"n\" data-v=\"\">-</td>");
		}
		if (k->fill >= 0)
			snprintf(fill, sizeof(fill), "%.0f%%%s", 100 * k->fill,
				 k->fill_is_estimate ? "~" : "");
		else
			snprintf(fill, sizeof(fill), "-");
		td_num(h, k->fill >= 0 ? 100 * k->fill : NAN, fill);
		snprintf(shape, sizeof(shape), "%u,%u,%u/%u,%u,%u", k->grid_first[0],
			 k->grid_first[1], k->grid_first[2], k->block_first[0], k->block_first[1],
			 k->block_first[2]);
		td_text(h, k->launches ? shape : "(graph)");
		if (has_pm && !isnan(k->pm[TRACE_PM_DRAM])) {
			char bound[32];

			report_kernel_bound(bound, sizeof(bound), k);
			snprintf(a, sizeof(a), "%.0f%%", k->pm[TRACE_PM_DRAM]);
			td_num(h, k->pm[TRACE_PM_DRAM], a);
			snprintf(a, sizeof(a), "%.0f%%", k->pm[TRACE_PM_SM_THROUGHPUT]);
			td_num(h, k->pm[TRACE_PM_SM_THROUGHPUT], a);
			td_text(h, bound);
		} else if (has_pm) {
			put(h, "<td class=\"n\" data-v=\"\">-</td>"
			       "<td class=\"n\" data-v=\"\">-</td><td>-</td>");
		}
		/* The name as the text report prints it, whole on hover (--wide: whole). */
		whole = name_readable(k->name, 0);
		put(h, "<td class=\"name\" title=\"");
		esc(h, whole);
		put(h, "\">");
		esc(h, report_name(tn, k->name));
		put(h, "</td></tr>\n");
		free(whole);
	}
	put(h, "</tbody>");
	table_more(h, s->nr_kernels, n, has_pm ? 11 : 8);
	put(h, "</table></div>\n");
}

static void apis(struct report_html *h, const struct stats *s, int sec)
{
	size_t i, n = report_table_rows(s->nr_apis, h->top, HTML_TOP_DEFAULT);
	char a[32], b[32], key[64];

	if (!s->nr_apis)
		return;
	fprintf(h->f, "<h3>API calls</h3>\n<div class=\"tw\"><table class=\"sortable\" "
		      "id=\"api-%d\"><thead><tr><th>#</th><th>calls</th><th>total</th><th>mean</th>"
		      "<th>max</th><th>errors</th><th>family</th><th>entry point</th></tr></thead>"
		      "<tbody>\n",
		sec);
	for (i = 0; i < n; i++) {
		const struct s_api *p = &s->apis[i];

		fprintf(h->f, "<tr><td class=\"n\" data-v=\"%zu\">%zu</td><td class=\"n\" "
			      "data-v=\"%llu\"",
			i + 1, i + 1, (unsigned long long)p->calls);
		snprintf(key, sizeof(key), "api.%zu.calls", i);
		data_json(h, key, json_uint(b, sizeof(b), p->calls), "count");
		fprintf(h->f, ">%s</td><td class=\"n\" data-v=\"%llu\"",
			fmt_count(a, sizeof(a), p->calls), (unsigned long long)p->total_ns);
		snprintf(key, sizeof(key), "api.%zu.total_ns", i);
		data_json(h, key, json_uint(b, sizeof(b), p->total_ns), "ns");
		fprintf(h->f, ">%s</td>", fmt_ns(a, sizeof(a), p->total_ns));
		td_num(h, p->calls ? (double)(p->total_ns / p->calls) : NAN,
		       p->calls ? fmt_ns(a, sizeof(a), p->total_ns / p->calls) : "-");
		td_num(h, (double)p->max_ns, fmt_ns(a, sizeof(a), p->max_ns));
		td_num(h, (double)p->errors, fmt_count(a, sizeof(a), p->errors));
		td_text(h, report_api_family(p->family));
		put(h, "<td class=\"name\">");
		esc(h, p->name);
		put(h, "</td></tr>\n");
	}
	put(h, "</tbody>");
	table_more(h, s->nr_apis, n, 8);
	put(h, "</table></div>\n");
}

static void memory(struct report_html *h, const struct model *m, const struct stats *s, int sec)
{
	const struct s_mem_formation *fm = &s->mem.formation;
	size_t i, n = report_table_rows(s->mem.nr_live_at_peak, h->top, HTML_TOP_DEFAULT);
	struct capture cap;
	char a[32], b[32];
	FILE *f;

	if (!s->mem.nr_allocs)
		return;
	fprintf(h->f, "<h3>Memory</h3>\n<p>%zu device allocations, %s allocated in total, %s live "
		      "at the end</p>\n",
		s->mem.nr_allocs, fmt_bytes(a, sizeof(a), s->mem.alloc_bytes_total),
		fmt_bytes(b, sizeof(b), s->mem.final_bytes));
	f = capture_begin(&cap);
	report_print_pressure(f, s);
	report_print_formation(f, s, 0);
	capture_end(h, &cap, "lines");
	if (!s->mem.nr_live_at_peak)
		return;
	fprintf(h->f, "<p>live at the peak (+%s), largest first:</p>\n<div class=\"tw\"><table "
		      "class=\"sortable\" id=\"memory-%d\"><thead><tr><th>#</th><th>bytes</th>"
		      "<th>kind</th><th>device</th><th>made at</th>%s<th>by</th></tr></thead>"
		      "<tbody>\n",
		fmt_ns(a, sizeof(a), s->mem.peak_ts - s->span_start), sec,
		fm->has_phases ? "<th>phase</th>" : "");
	for (i = 0; i < n; i++) {
		const struct s_alloc *al = &s->mem.allocs[s->mem.live_at_peak[i]];
		uint64_t at = al->t_alloc > s->span_start ? al->t_alloc - s->span_start : 0;

		fprintf(h->f, "<tr><td class=\"n\" data-v=\"%zu\">%zu</td>", i + 1, i + 1);
		td_num(h, (double)al->bytes, fmt_bytes(a, sizeof(a), al->bytes));
		td_text(h, report_mem_kind(al->kind));
		td_num(h, al->device, (snprintf(b, sizeof(b), "%d", al->device), b));
		snprintf(b, sizeof(b), "+%s", fmt_ns(a, sizeof(a), at));
		td_num(h, (double)at, b);
		if (fm->has_phases)
			td_text(h, loop_phase_name(loop_phase_at(&s->loop, al->t_alloc)));
		put(h, "<td class=\"name\">");
		esc(h, model_api_name(m, al->api));
		put(h, "</td></tr>\n");
	}
	put(h, "</tbody>");
	table_more(h, s->mem.nr_live_at_peak, n, fm->has_phases ? 7 : 6);
	put(h, "</table></div>\n");
}

/* The NVTX range table (ranges.h), as report --by-range prints it. */
static void ranges(struct report_html *h, const struct stats *s, int sec)
{
	const struct range_table *t = &s->ranges;
	size_t i, n = report_table_rows(t->nr_rows, h->top, HTML_TOP_DEFAULT);
	char a[32];

	if (!t->has_nvtx || !t->nr_rows)
		return;
	fprintf(h->f, "<h3>NVTX ranges</h3>\n<p>ranges that began in the %s: host time inside, "
		      "kernel and graph launches made inside and the GPU time of the work issued "
		      "inside, device idle time inside and the cause of most of it</p>\n"
		      "<div class=\"tw\"><table class=\"sortable\" id=\"ranges-%d\"><thead><tr>"
		      "<th>count</th><th>host time</th><th>launches</th><th>GPU time</th>"
		      "<th>idle</th><th>most idle to</th><th>range</th></tr></thead><tbody>\n",
		s->loop.found.source == STEPS_NONE ? "whole run" :
		s->loop.found.source == STEPS_WINDOW ? "window" :
						       "steady state",
		sec);
	for (i = 0; i < n; i++) {
		const struct range_row *r = &t->rows[i];
		int k = range_top_cause(r);

		put(h, "<tr>");
		td_num(h, (double)r->count, fmt_count(a, sizeof(a), r->count));
		td_num(h, (double)r->host_ns, fmt_ns(a, sizeof(a), r->host_ns));
		td_num(h, (double)r->launches, fmt_count(a, sizeof(a), r->launches));
		td_num(h, (double)r->gpu_ns, fmt_ns(a, sizeof(a), r->gpu_ns));
		td_num(h, (double)r->idle_ns, fmt_ns(a, sizeof(a), r->idle_ns));
		td_text(h, k >= 0 ? cause_name(k) : "-");
		put(h, "<td class=\"name\">");
		if (r->domain) {
			esc(h, r->domain);
			put(h, ": ");
		}
		esc(h, r->name);
		put(h, r->is_start_end ? " (start/end)</td></tr>\n" : "</td></tr>\n");
	}
	put(h, "</tbody>");
	table_more(h, t->nr_rows, n, 7);
	put(h, "</table></div>\n");
}

/* ---- Sections ---- */

void report_html_init(struct report_html *h, FILE *f, int is_many, int has_header, int is_wide,
		      size_t top)
{
	memset(h, 0, sizeof(*h));
	h->f = f;
	h->is_many = is_many;
	h->has_header = has_header;
	h->is_wide = is_wide;
	h->top = top;
}

void report_html_process(struct report_html *h, const struct model *m, const struct stats *s,
			 const struct findings *fd, const struct timeline *tl)
{
	int sec = (int)h->nr_rows;
	struct report_names tn;
	struct capture cap;

	if (!h->is_begun)
		page_begin(h, m);
	if (h->is_many)
		fprintf(h->f, "<section class=\"process\" id=\"p%d\" "
			      "data-json-base=\"reports.%d\">\n"
			      "<h2>process %u <span class=\"meta\">",
			sec, sec, m->pid);
	else
		put(h, "<section class=\"process\" id=\"p0\" data-json-base=\"\">\n");
	if (h->is_many) {
		esc(h, m->path);
		put(h, "</span></h2>\n");
	}
	if (h->has_header)
		provenance(h, m);
	/* The names as the text report's (a kernel alike wherever it shows), --wide whole. */
	report_names_build(&tn, s, fd, h->is_wide ? 0 : NAME_WIDTH,
			   h->top == REPORT_TOP_DEFAULT ? HTML_TOP_DEFAULT : h->top);
	signals(h, m, s, fd);
	put(h, "<h3>Timeline</h3>\n");
	figure_timeline(h->f, s, fd, tl, sec);
	causes(h, m, fd, &tn, sec);
	steps(h, m, s, &tn);
	put(h, "<h3>Run</h3>\n");
	report_print_summary(capture_begin(&cap), s);
	capture_end(h, &cap, "lines");
	kernels(h, s, fd, &tn, sec);
	apis(h, s, sec);
	memory(h, m, s, sec);
	ranges(h, s, sec);
	put(h, "</section>\n");
	report_names_free(&tn);

	XGROW(h->rows, h->rows_cap, h->nr_rows + 1);
	h->rows[h->nr_rows++] = (struct report_html_row){ m->pid, xstrdup(m->path), fd->primary,
							  fd->has_gpu, fd->busy_pct,
							  fd->window_ns };
}

void report_html_job(struct report_html *h, const struct job *j)
{
	char a[32], b[32], c[32], v[64];
	size_t i;

	if (!h->is_begun || !j->is_computed || j->nr_ranks < 2)
		return;
	put(h, "<section class=\"job\" id=\"job\" data-json-base=\"job\">\n<h2>job</h2>\n<p>");
	fprintf(h->f, "%zu ranks%s", j->nr_ranks,
		j->is_one_host ? " on one host" : ", clocks aligned by the collectives' ends");
	if (j->why_not) {
		put(h, "; collectives not matched: ");
		esc(h, j->why_not);
		put(h, "</p>\n</section>\n");
		return;
	}
	put(h, ": <span");
	data_json(h, "collectives_matched", json_uint(v, sizeof(v), j->nr_matched), "count");
	fprintf(h->f, ">%llu</span> collectives matched across ranks, skew (first to last "
		      "arrival) mean <span",
		(unsigned long long)j->nr_matched);
	data_json(h, "skew_mean_ns", json_uint(v, sizeof(v), j->skew_sum_ns / j->nr_matched),
		  "ns");
	fprintf(h->f, ">%s</span>, max %s.</p>\n",
		fmt_ns(a, sizeof(a), j->skew_sum_ns / j->nr_matched),
		fmt_ns(b, sizeof(b), j->skew_max_ns));
	if (j->straggler >= 0) {
		const struct job_rank *s = &j->ranks[j->straggler];

		if (s->rank >= 0)
			fprintf(h->f, "<p class=\"verdict\"><b>straggler</b> rank %d (pid %u)",
				(int)s->rank, s->pid);
		else
			fprintf(h->f, "<p class=\"verdict\"><b>straggler</b> pid %u", s->pid);
		fprintf(h->f, " arrived last at %llu of %llu collectives; waiting for it cost the "
			      "job <span",
			(unsigned long long)s->nr_last, (unsigned long long)j->nr_matched);
		data_json(h, "straggler.cost_ns", json_uint(v, sizeof(v), s->cost_ns), "ns");
		fprintf(h->f, ">%s</span>", fmt_ns(a, sizeof(a), s->cost_ns));
		if (j->straggler_cause >= 0) {
			put(h, "; what made it late: <span");
			data_json(h, "straggler.cause", cause_name(j->straggler_cause), "str");
			fprintf(h->f, ">%s</span>, %s more than the other ranks' median",
				cause_name(j->straggler_cause),
				fmt_ns(a, sizeof(a), j->straggler_excess_ns));
		}
		put(h, "</p>\n");
		if (s->worst_ns) {
			char *name = name_readable(j->names[s->worst_name], NAME_WIDTH);

			put(h, "<p>");
			if (s->nr_steps) {
				put(h, "Late in <span");
				data_json(h, "straggler.steps_late",
					  json_uint(v, sizeof(v), s->steps_late), "count");
				fprintf(h->f, ">%llu</span> of its %zu steps; the", (unsigned long long)
					s->steps_late, s->nr_steps);
			} else {
				put(h, "The");
			}
			put(h, " latest: <span");
			data_json(h, "straggler.latest.late_ns", json_uint(v, sizeof(v), s->worst_ns),
				  "ns");
			fprintf(h->f, ">%s</span>", fmt_ns(a, sizeof(a), s->worst_ns));
			if (s->worst_step)
				fprintf(h->f, " in step %u", s->worst_step);
			put(h, " (");
			esc(h, name);
			fprintf(h->f, " #%llu)", (unsigned long long)s->worst_instance);
			if (job_latest_part(s) >= 0)
				fprintf(h->f, "; that step's idle time mostly %s",
					gap_part_name(job_latest_part(s)));
			put(h, ".</p>\n");
			free(name);
		}
	}
	put(h, "<div class=\"tw\"><table class=\"sortable\" id=\"job-ranks\"><thead><tr>"
	       "<th>rank</th><th>pid</th><th>host</th><th>communication</th><th>overlapped</th>"
	       "<th>waited in collectives</th><th>arrived last</th><th>cost to the job</th>"
	       "</tr></thead><tbody>\n");
	for (i = 0; i < j->nr_ranks; i++) {
		const struct job_rank *r = &j->ranks[i];

		fprintf(h->f, "<tr><td class=\"n\" data-v=\"%d\">%d</td><td class=\"n\" "
			      "data-v=\"%u\">%u</td><td>",
			(int)r->rank, (int)r->rank, r->pid, r->pid);
		esc(h, r->host);
		put(h, "</td>");
		td_num(h, (double)r->comm_ns, fmt_ns(a, sizeof(a), r->comm_ns));
		fprintf(h->f, "<td class=\"n\">%.1f%%</td>",
			r->comm_ns ? 100.0 * (double)r->comm_overlap_ns / (double)r->comm_ns : 0.0);
		td_num(h, (double)r->wait_ns, fmt_ns(b, sizeof(b), r->wait_ns));
		fprintf(h->f, "<td class=\"n\" data-v=\"%llu\">%llu</td>",
			(unsigned long long)r->nr_last, (unsigned long long)r->nr_last);
		td_num(h, (double)r->cost_ns, fmt_ns(c, sizeof(c), r->cost_ns));
		put(h, "</tr>\n");
	}
	put(h, "</tbody></table></div>\n</section>\n");
}

void report_html_combined(struct report_html *h, const struct combined *c)
{
	int ranked[NR_CAUSES], n = combined_ranked(c, ranked), i, primary = combined_primary(c);
	struct figure_cause bars[NR_CAUSES] = { { 0 } };
	char a[32], v[64], key[64];
	size_t r;

	if (!h->is_begun)
		return;
	put(h, "<section class=\"combined\" id=\"combined\" data-json-base=\"combined\">\n"
	       "<h2>combined</h2>\n<div class=\"cards\">\n");
	card_begin(h, "processes");
	data_json(h, "processes", json_uint(v, sizeof(v), (uint64_t)c->nr), "count");
	fprintf(h->f, ">%d</div><div class=\"s\">%s of GPU windows</div></div>\n", c->nr,
		fmt_ns(a, sizeof(a), c->window_ns));
	card_begin(h, "mean GPU busy");
	if (c->nr_busy) {
		data_json(h, "mean_busy_pct", json_num(v, sizeof(v), c->busy_sum / c->nr_busy, 2),
			  "pct");
		fprintf(h->f, ">%.1f%%</div>", c->busy_sum / c->nr_busy);
	} else {
		put(h, ">unknown</div>");
	}
	put(h, "<div class=\"s\">over the processes with GPU timestamps</div></div>\n");
	card_begin(h, "memory full");
	json_uint(v, sizeof(v), (uint64_t)c->nr_memory_full);
	data_json(h, "processes_with_memory_full", v, "count");
	fprintf(h->f, ">%d</div><div class=\"s\">processes with device memory &ge; 90%% at the "
		      "peak</div></div>\n</div>\n",
		c->nr_memory_full);
	put(h, "<p class=\"verdict\"><b>verdict</b> <span");
	data_json(h, "verdict.primary", primary >= 0 ? cause_name(primary) : "none", "str");
	fprintf(h->f, ">%s</span> <span class=\"note\">%s</span></p>\n",
		primary >= 0 ? cause_name(primary) : "none",
		combined_by_saving(c) ? "(ranked by what fixing each saves, replayed)" :
					"(ranked by time lost: not every process was replayed)");
	for (i = 0; i < n; i++)
		bars[i] = (struct figure_cause){ ranked[i],
						 combined_pct(c, c->cause_ns[ranked[i]]), -1,
						 combined_by_saving(c) && c->has_saving[ranked[i]] ?
							 combined_pct(c, c->saving_ns[ranked[i]]) :
							 -1,
						 -1 };
	figure_causes(h->f, bars, n);
	if (n)
		put(h, "<div class=\"tw\"><table class=\"sortable\" id=\"causes-combined\"><thead>"
		       "<tr><th>#</th><th>cause</th><th>time lost</th><th>share</th><th>saving</th>"
		       "</tr></thead><tbody>\n");
	for (i = 0; i < n; i++) {
		int k = ranked[i];

		fprintf(h->f, "<tr><td class=\"n\" data-v=\"%d\">%d</td><td class=\"cause\">"
			      "<span class=\"sw\" "
			      "style=\"background:%s\"></span><span",
			i + 1, i + 1, figure_colour(k));
		snprintf(key, sizeof(key), "attribution.%d.cause", i);
		data_json(h, key, cause_name(k), "str");
		fprintf(h->f, ">%s</span></td>", cause_name(k));
		td_num(h, (double)c->cause_ns[k], fmt_ns(a, sizeof(a), c->cause_ns[k]));
		snprintf(key, sizeof(key), "attribution.%d.share_pct", i);
		td_pct(h, key, combined_pct(c, c->cause_ns[k]), 0, -1, NULL);
		snprintf(key, sizeof(key), "attribution.%d.saving_pct", i);
		td_pct(h, key, bars[i].saving, 0, -1, NULL);
		put(h, "</tr>\n");
	}
	if (n)
		put(h, "</tbody></table></div>\n");
	put(h, "<h3>Processes</h3>\n<div class=\"tw\"><table class=\"sortable\" "
	       "id=\"processes\"><thead><tr><th>#</th><th>pid</th><th>GPU window</th>"
	       "<th>GPU busy</th><th>primary cause</th><th>trace</th></tr></thead><tbody>\n");
	for (r = 0; r < h->nr_rows; r++) {
		const struct report_html_row *p = &h->rows[r];

		fprintf(h->f, "<tr><td class=\"n\" data-v=\"%zu\"><a href=\"#p%zu\">%zu</a></td>",
			r + 1, r, r + 1);
		td_num(h, p->pid, (snprintf(v, sizeof(v), "%u", p->pid), v));
		td_num(h, (double)p->window_ns, fmt_ns(a, sizeof(a), p->window_ns));
		if (p->has_gpu)
			td_num(h, p->busy_pct, (snprintf(v, sizeof(v), "%.1f%%", p->busy_pct), v));
		else
			put(h, "<td class=\"n\" data-v=\"\">unknown</td>");
		td_text(h, p->primary >= 0 ? cause_name(p->primary) :
			   p->has_gpu	    ? "none" :
					      "unknown");
		put(h, "<td class=\"name\">");
		esc(h, p->path);
		put(h, "</td></tr>\n");
	}
	put(h, "</tbody></table></div>\n</section>\n");
}

void report_html_end(struct report_html *h)
{
	size_t i;

	if (h->is_begun)
		fprintf(h->f, "<footer class=\"meta\"><p>gpushim %s; this page fetches nothing and "
			      "runs only its own script: click a column's header to sort</p>"
			      "</footer>\n"
			      "<script>\n%s</script>\n</body>\n</html>\n",
			GPUSHIM_VERSION, page_script);
	for (i = 0; i < h->nr_rows; i++)
		free(h->rows[i].path);
	free(h->rows);
	h->rows = NULL;
	h->nr_rows = h->rows_cap = 0;
}

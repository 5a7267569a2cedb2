/*
 * flame.c - an allocation recording as a flame graph: one self-contained SVG
 * (no script, no fonts or files to fetch), laid out as Brendan Gregg's
 * flamegraph.pl does ("The Flame Graph", CACM 59(6), 2016): one box per
 * frame of alc_fold's tree, as wide as its bytes, callers below callees,
 * siblings in name order, the allocated classes on top in their own colour.
 */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/u64map.h"

#define WIDTH 1200
#define PAD 10			/* left and right of the frames */
#define FRAME_H 16
#define HEAD 56			/* title and legend above the frames */
#define FOOT 8
#define CHAR_W 7.0		/* at most this wide a character of the frames' 11 px font */
#define MIN_W 0.1		/* narrower frames (and all above them) are left out */
#define DRAW_W (WIDTH - 2 * PAD)

/* utf8_len: the length of the valid UTF-8 character XML allows at s (n bytes left), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;	/* the second byte's range (RFC 3629 section 4) */
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;	/* no surrogates */
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	if (c == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0;	/* U+FFFE, U+FFFF: not XML characters */
	return len;
}

/*
 * put: the first n bytes of s (fewer at a NUL) as XML character data, fit
 * for attributes too; what is not an XML character (control characters,
 * invalid UTF-8, Java's modified UTF-8 NUL) as '?'.
 */
static void put(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n && p[i];) {
		unsigned char c = p[i];
		size_t len = 1;
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if (c < 0x80 && c >= 0x20 && c != 0x7f)
				fputc(c, f);
			else if (c >= 0x80 && (len = utf8_len(p + i, n - i)) > 0)
				fwrite(p + i, 1, len, f);
			else {
				fputc('?', f);
				len = 1;
			}
		}
		i += len;
	}
}

/* chars: the byte length of the first k characters of s (UTF-8 lead bytes counted). */
static size_t chars(const char *s, size_t k)
{
	size_t i = 0;
	for (; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && k-- == 0)
			break;
	return i;
}

/* group: x rounded, with thousands separators ("1,234,567"), into buf (48 bytes). */
static const char *group(char *buf, double x)
{
	char d[32];
	int n = snprintf(d, sizeof d, "%.0f", x), o = 0, i = 0;
	if (n < 0 || n >= (int)sizeof d)
		return strcpy(buf, "?");
	if (d[0] == '-')
		buf[o++] = d[i++];
	for (; i < n; i++) {
		buf[o++] = d[i];
		if (i + 1 < n && (n - i - 1) % 3 == 0)
			buf[o++] = ',';
	}
	buf[o] = '\0';
	return buf;
}

/* hue: three numbers in [0, 1) from the name (FNV-1a), so a frame keeps its colour across graphs. */
static void hue(const char *name, double v[3])
{
	uint64_t h = u64_fnv1a(name, U64_FNV_BASIS);
	for (int i = 0; i < 3; i++)
		v[i] = (double)((h >> (20 * i)) & 0xfffff) / 0x100000;
}

/* colour: warm for frames (flamegraph.pl's "hot"), blue for classes, grey for no frame. */
static void colour(const struct alc_fold_frame *x, int rgb[3])
{
	double v[3];
	hue(x->name, v);
	if (x->is_class) {
		rgb[0] = 80 + (int)(60 * v[0]);
		rgb[1] = 150 + (int)(50 * v[1]);
		rgb[2] = 215 + (int)(40 * v[2]);
	} else if (x->depth == 0 && !strcmp(x->name, "(no Java frame)")) {
		rgb[0] = rgb[1] = rgb[2] = 190;
	} else {
		rgb[0] = 205 + (int)(50 * v[2]);
		rgb[1] = (int)(230 * v[0]);
		rgb[2] = (int)(55 * v[1]);
	}
}

static void head(FILE *f, const char *title, int height)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"11\">\n",
		WIDTH, height, WIDTH, height);
	fputs("<title>", f);
	put(f, title, SIZE_MAX);
	fputs("</title>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
		WIDTH, height);
	fprintf(f, "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"17\" "
		"font-family=\"DejaVu Sans, Verdana, sans-serif\">", WIDTH / 2);
	put(f, title, SIZE_MAX);
	fputs("</text>\n", f);
}

static void frame(FILE *f, const struct alc_fold_frame *x, double total, double px, double y, double w)
{
	char b[48], o[48];
	int rgb[3];
	colour(x, rgb);
	fputs("<g><title>", f);
	put(f, x->name, SIZE_MAX);
	fprintf(f, " \xe2\x80\x94 %s bytes (%.2f%%), ", group(b, x->bytes), 100 * x->bytes / total);
	fprintf(f, "%s objects</title>", group(o, x->objs));
	fprintf(f, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"rgb(%d,%d,%d)\"/>", px, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	double room = (w - 6) / CHAR_W;
	if (room >= 3) {
		size_t k = (size_t)room, len = chars(x->name, SIZE_MAX);
		fprintf(f, "<text x=\"%.2f\" y=\"%.0f\">", px + 3, y + FRAME_H - 4);
		if (len <= k) {
			put(f, x->name, SIZE_MAX);
		} else {
			put(f, x->name, chars(x->name, k - 2));
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

int alc_flamegraph(const struct alc_rec *r, FILE *f, const char *title)
{
	struct alc_fold *fd = alc_fold(r);
	const struct alc_fold_frame *fr = fd->frames;
	double total = 0, objs = 0;
	for (uint32_t i = 0; i < fd->n; i = fr[i].end) {
		total += fr[i].bytes;
		objs += fr[i].objs;
	}
	if (!title)
		title = "Allocations";
	if (!(total > 0)) {
		head(f, title, 120);
		fprintf(f, "<text x=\"%d\" y=\"80\" text-anchor=\"middle\" font-size=\"14\">"
			"no allocations recorded</text>\n</svg>\n", WIDTH / 2);
		alc_fold_free(fd);
		return fflush(f) == 0 && !ferror(f) ? 0 : -1;
	}

	/* Each frame's x from its siblings' widths before it (cur per depth); -1: left out. */
	double *px = xmallocarray((size_t)fd->n + 1, sizeof *px);
	double *cur = xcalloc((size_t)fd->max_depth + 2, sizeof *cur);
	uint32_t top = 0;
	cur[0] = PAD;
	for (uint32_t i = 0; i < fd->n; i++)
		px[i] = -1;
	for (uint32_t i = 0; i < fd->n;) {
		uint32_t d = fr[i].depth;
		double w = fr[i].bytes / total * DRAW_W, x = cur[d];
		cur[d] += w;
		if (!(w >= MIN_W)) {
			i = fr[i].end;
			continue;
		}
		px[i] = x;
		cur[d + 1] = x;
		if (d > top)
			top = d;
		i++;
	}
	free(cur);

	int height = HEAD + (int)(top + 1) * FRAME_H + FOOT;
	char b[48], o[48];
	head(f, title, height);
	fprintf(f, "<text x=\"%d\" y=\"44\" text-anchor=\"middle\" fill=\"#555555\">"
		"%s bytes allocated in %s objects; width: bytes allocated in a frame and the "
		"frames it called; blue: the classes allocated</text>\n",
		WIDTH / 2, group(b, total), group(o, objs));
	for (uint32_t i = 0; i < fd->n; i++)
		if (px[i] >= 0)
			frame(f, &fr[i], total, px[i], HEAD + (double)(top - fr[i].depth) * FRAME_H,
				fr[i].bytes / total * DRAW_W);
	fputs("</svg>\n", f);
	free(px);
	alc_fold_free(fd);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* ---- the interactive page (alc_flamegraph_html) ---- */

/* json_str: s as a JSON string safe inside a <script> element (no "<", ">", "&"). */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t len = 1;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&')
			fprintf(f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, f);
		else if ((len = utf8_len(p + i, n - i)) > 0)
			fwrite(p + i, 1, len, f);
		else {
			fputc('?', f);
			len = 1;
		}
		i += len;
	}
	fputc('"', f);
}

/*
 * The page's script: it lays the frames out from the data (alc_fold's
 * preorder, each frame [name, depth, end, objects, bytes, live objects,
 * live bytes, class?]) for the chosen value, flamegraph.pl's way (callers
 * below, width by value), and handles zoom, search and the value switch.
 */
static const char FLAME_JS[] =
	"(function () {\n"
	"'use strict';\n"
	"const D = JSON.parse(document.getElementById('data').textContent);\n"
	"const F = D.frames, N = D.names, ROW = 18, PAD = 10;\n"
	"const TYPES = {bytes: [4, 'bytes allocated'], objects: [3, 'objects allocated'],\n"
	"  live_bytes: [6, 'live bytes'], live_objects: [5, 'live objects']};\n"
	"const svg = document.getElementById('flame'), NS = 'http://www.w3.org/2000/svg';\n"
	"const ctx = document.createElement('canvas').getContext('2d');\n"
	"ctx.font = '12px \"DejaVu Sans Mono\", monospace';\n"
	"const P = new Int32Array(F.length).fill(-1);\n"
	"{ const st = []; for (let i = 0; i < F.length; i++) { st.length = F[i][1];\n"
	"    P[i] = st.length ? st[st.length - 1] : -1; st.push(i); } }\n"
	"let type = 'bytes', zoom = -1, query = null;\n"
	"const val = i => F[i][TYPES[type][0]];\n"
	"function total() { let t = 0; for (let i = 0; i < F.length; i = F[i][2]) t += val(i); return t; }\n"
	"const fmt = v => Math.round(v).toLocaleString('en-US');\n"
	"const pct = (v, t) => t > 0 ? (100 * v / t).toFixed(2) + '%' : '0%';\n"
	"/* a frame's name shortened: its package to initials, then class and method alone */\n"
	"function cut(name) {\n"
	"  const parts = name.split('.'); let k = 0;\n"
	"  while (k < parts.length - 1 && /^[a-z_$]/.test(parts[k])) k++;\n"
	"  if (!k) return [name];\n"
	"  const rest = parts.slice(k).join('.');\n"
	"  return [name, parts.slice(0, k).map(p => p[0]).join('.') + '.' + rest, rest];\n"
	"}\n"
	"function label(name, w) {\n"
	"  const room = w - 6, c = cut(name);\n"
	"  for (const s of c) if (ctx.measureText(s).width <= room) return s;\n"
	"  let s = c[c.length - 1];\n"
	"  while (s.length > 1 && ctx.measureText(s + '\\u2026').width > room) s = s.slice(0, -1);\n"
	"  return s.length > 1 ? s + '\\u2026' : '';\n"
	"}\n"
	"function colour(i) {\n"
	"  let h = 2166136261; const s = N[F[i][0]];\n"
	"  for (let k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 16777619) >>> 0;\n"
	"  const a = (h & 255) / 255, b = ((h >> 8) & 255) / 255, c = ((h >> 16) & 255) / 255;\n"
	"  if (F[i][7]) return `rgb(${80 + 60 * a | 0},${150 + 50 * b | 0},${215 + 40 * c | 0})`;\n"
	"  if (s === '(no Java frame)') return 'rgb(190,190,190)';\n"
	"  return `rgb(${205 + 50 * c | 0},${230 * a | 0},${55 * b | 0})`;\n"
	"}\n"
	"function matches(i) {\n"
	"  if (!query) return false;\n"
	"  return query.test(N[F[i][0]]);\n"
	"}\n"
	"function render() {\n"
	"  const W = Math.max(300, document.documentElement.clientWidth - 2 * PAD - 4);\n"
	"  const T = total(), span = zoom >= 0 ? val(zoom) : T;\n"
	"  svg.textContent = '';\n"
	"  const rects = [];\n"
	"  if (zoom >= 0) for (let a = P[zoom]; a >= 0; a = P[a]) rects.push({i: a, x: 0, w: W, dim: true});\n"
	"  const from = zoom >= 0 ? zoom : 0, to = zoom >= 0 ? F[zoom][2] : F.length;\n"
	"  const cur = []; cur[F[from] ? F[from][1] : 0] = 0;\n"
	"  for (let i = from; i < to;) {\n"
	"    const d = F[i][1], w = span > 0 ? val(i) / span * W : 0, x = cur[d] || 0;\n"
	"    cur[d] = x + w;\n"
	"    if (!(w >= 0.3)) { i = F[i][2]; continue; }\n"
	"    cur[d + 1] = x; rects.push({i: i, x: x, w: w}); i++;\n"
	"  }\n"
	"  let top = 0; for (const r of rects) top = Math.max(top, F[r.i][1]);\n"
	"  svg.setAttribute('width', W + 2 * PAD);\n"
	"  svg.setAttribute('height', (top + 1) * ROW + PAD);\n"
	"  for (const r of rects) {\n"
	"    const i = r.i, g = document.createElementNS(NS, 'g'), name = N[F[i][0]];\n"
	"    g.setAttribute('data-i', i); g.setAttribute('data-name', name);\n"
	"    const m = matches(i); if (m) g.setAttribute('class', 'match');\n"
	"    if (r.dim) g.setAttribute('opacity', '0.55');\n"
	"    const t = document.createElementNS(NS, 'title');\n"
	"    t.textContent = `${name}\\n${fmt(val(i))} ${TYPES[type][1]} (${pct(val(i), T)})` +\n"
	"      `\\nallocated: ${fmt(F[i][4])} bytes, ${fmt(F[i][3])} objects; live: ${fmt(F[i][6])} bytes, ${fmt(F[i][5])} objects`;\n"
	"    g.appendChild(t);\n"
	"    const rc = document.createElementNS(NS, 'rect'), y = (top - F[i][1]) * ROW;\n"
	"    rc.setAttribute('x', (PAD + r.x).toFixed(2)); rc.setAttribute('y', y);\n"
	"    rc.setAttribute('width', r.w.toFixed(2)); rc.setAttribute('height', ROW - 1);\n"
	"    rc.setAttribute('rx', 2); rc.setAttribute('fill', m ? 'rgb(230,0,230)' : colour(i));\n"
	"    g.appendChild(rc);\n"
	"    const s = label(name, r.w);\n"
	"    if (s) { const tx = document.createElementNS(NS, 'text'); tx.textContent = s;\n"
	"      tx.setAttribute('x', (PAD + r.x + 3).toFixed(2)); tx.setAttribute('y', y + ROW - 5);\n"
	"      g.appendChild(tx); }\n"
	"    g.addEventListener('click', () => { zoom = i === zoom ? P[i] : i; render(); });\n"
	"    svg.appendChild(g);\n"
	"  }\n"
	"  document.getElementById('total').textContent = `${fmt(T)} ${TYPES[type][1]}` +\n"
	"    (zoom >= 0 ? `; zoomed to ${N[F[zoom][0]]}: ${fmt(span)} (${pct(span, T)})` : '');\n"
	"  let hit = 0, n = 0;\n"
	"  if (query) for (let i = 0; i < F.length;) {\n"
	"    if (matches(i)) { hit += val(i); n++; i = F[i][2]; } else i++;\n"
	"  }\n"
	"  document.getElementById('status').textContent = query ?\n"
	"    `${n} frame${n === 1 ? '' : 's'} match: ${fmt(hit)} ${TYPES[type][1]}, ${pct(hit, T)} of all` : '';\n"
	"}\n"
	"document.getElementById('search').addEventListener('input', e => {\n"
	"  const q = e.target.value; query = null;\n"
	"  if (q) { try { query = new RegExp(q, 'i'); } catch (x) {\n"
	"    query = new RegExp(q.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&'), 'i'); } }\n"
	"  render();\n"
	"});\n"
	"document.getElementById('reset').addEventListener('click', () => { zoom = -1; render(); });\n"
	"document.getElementById('type').addEventListener('change', e => {\n"
	"  type = e.target.value; if (zoom >= 0 && !(val(zoom) > 0)) zoom = -1; render();\n"
	"});\n"
	"window.addEventListener('resize', render);\n"
	"render();\n"
	"})();\n";

static const char FLAME_CSS[] =
	"body{font:13px \"DejaVu Sans\",Verdana,sans-serif;margin:10px;color:#222}"
	"h1{font-size:18px;margin:0 0 6px}#bar{margin:6px 0;display:flex;gap:10px;align-items:center;"
	"flex-wrap:wrap}#search{width:18em}#status{color:#a0a}#total{color:#555}"
	"#flame text{font:12px \"DejaVu Sans Mono\",monospace;pointer-events:none}"
	"#flame g{cursor:pointer}#flame rect:hover{stroke:#000;stroke-width:1}"
	"p.sub{color:#555;margin:2px 0}";

int alc_flamegraph_html(const struct alc_rec *r, FILE *f, const char *title)
{
	struct alc_fold *fd = alc_fold(r);
	const struct alc_fold_frame *fr = fd->frames;
	if (!title)
		title = "Allocations";
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
	put(f, title, SIZE_MAX);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", FLAME_CSS);
	put(f, title, SIZE_MAX);
	fputs("</h1>\n<p class=\"sub\">Width: the chosen value in a frame and the frames it "
	      "called; callers below; blue: the classes allocated. Click a frame to zoom to it, "
	      "again (or below it) to zoom out.</p>\n<div id=\"bar\"><label>Show <select id=\"type\">"
	      "<option value=\"bytes\">allocated bytes</option><option value=\"objects\">allocated "
	      "objects</option><option value=\"live_bytes\">live bytes</option><option "
	      "value=\"live_objects\">live objects</option></select></label><input id=\"search\" "
	      "placeholder=\"Search (regular expression)\" autocomplete=\"off\"><button "
	      "id=\"reset\">Reset zoom</button><span id=\"total\"></span><span id=\"status\">"
	      "</span></div>\n<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\"></svg>\n", f);
	/* the data: each frame's name in names, by the frame's first field */
	fputs("<script id=\"data\" type=\"application/json\">{\"names\":[", f);
	for (uint32_t i = 0; i < fd->n; i++) {
		if (i)
			fputc(',', f);
		json_str(f, fr[i].name);
	}
	fputs("],\"frames\":[", f);
	for (uint32_t i = 0; i < fd->n; i++)
		fprintf(f, "%s[%u,%u,%u,%.0f,%.0f,%.0f,%.0f,%d]", i ? "," : "", i, fr[i].depth,
			fr[i].end, fr[i].objs, fr[i].bytes, fr[i].live_objs, fr[i].live_bytes,
			fr[i].is_class ? 1 : 0);
	fprintf(f, "],\"exact\":%s}</script>\n<script>\n%s</script>\n</body>\n</html>\n",
		r->st.exact ? "true" : "false", FLAME_JS);
	alc_fold_free(fd);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

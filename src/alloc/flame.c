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
	uint64_t h = 14695981039346656037ULL;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
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

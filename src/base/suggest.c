/* suggest.c - "did you mean"; see suggest.h. */
#include "suggest.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

size_t hs_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			d[i][j] = c;
		}
	return d[la][lb];
}

void hs_suggest(char *buf, size_t cap, const char *name, const char *const *cands, int n,
		const char *prefix)
{
	buf[0] = 0;
	size_t best = 3;
	for (int k = 0; k < n; k++) {
		size_t dist = hs_edit_distance(name, cands[k]);
		if (dist < best)
			best = dist;
	}
	if (best >= 3 || cap < 64)
		return;
	size_t len = 0;
	if (!prefix)
		prefix = "";
	for (int k = 0; k < n && len + strlen(cands[k]) + 24 < cap; k++) {
		if (hs_edit_distance(name, cands[k]) != best)
			continue;
		bool seen = false;
		for (int j = 0; j < k && !seen; j++)
			seen = !strcmp(cands[j], cands[k]) && hs_edit_distance(name, cands[j]) == best;
		if (!seen)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s%s",
						len ? ", " : "; did you mean ", prefix, cands[k]);
	}
	if (len)
		snprintf(buf + len, cap - len, "?");
}

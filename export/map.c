/* A hash map from up to three 64-bit keys to a pointer: open addressing, linear
 * probing, grown at half full. The model's tables (threads, binaries, symbols,
 * call paths) are looked up once or twice per branch sample. */
#include "export_int.h"

#include <stdlib.h>

static uint64_t mix(uint64_t k1, uint64_t k2, uint64_t k3)
{
	uint64_t h = k1 * 0x9e3779b97f4a7c15ull ^ (k2 + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull ^
		     (k3 + 0x85ebca6b) * 0x94d049bb133111ebull;

	return h ^ (h >> 31);
}

void *exp_map_get(const struct exp_map *m, uint64_t k1, uint64_t k2, uint64_t k3)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix(k1, k2, k3) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct exp_map_slot *s = &m->s[i];

		if (!s->v)
			return NULL;
		if (s->k1 == k1 && s->k2 == k2 && s->k3 == k3)
			return s->v;
	}
}

static void place(struct exp_map_slot *s, size_t cap, const struct exp_map_slot *from)
{
	size_t i = mix(from->k1, from->k2, from->k3) & (cap - 1);

	while (s[i].v)
		i = (i + 1) & (cap - 1);
	s[i] = *from;
}

int exp_map_put(struct exp_map *m, uint64_t k1, uint64_t k2, uint64_t k3, void *v)
{
	struct exp_map_slot add = {k1, k2, k3, v};

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct exp_map_slot *s = calloc(cap, sizeof(*s));

		if (!s)
			return -cste_nomem;
		for (size_t i = 0; i < m->cap; i++)
			if (m->s[i].v)
				place(s, cap, &m->s[i]);
		free(m->s);
		m->s = s;
		m->cap = cap;
	}
	place(m->s, m->cap, &add);
	m->n++;
	return 0;
}

void exp_map_del(struct exp_map *m, uint64_t k1, uint64_t k2, uint64_t k3)
{
	size_t i, j, mask = m->cap - 1;

	if (!m->cap)
		return;
	for (i = mix(k1, k2, k3) & mask;; i = (i + 1) & mask) {
		if (!m->s[i].v)
			return;
		if (m->s[i].k1 == k1 && m->s[i].k2 == k2 && m->s[i].k3 == k3)
			break;
	}
	/* close the gap: move back each later entry of the run that may not stay */
	for (j = (i + 1) & mask; m->s[j].v; j = (j + 1) & mask) {
		size_t home = mix(m->s[j].k1, m->s[j].k2, m->s[j].k3) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->s[i] = m->s[j];
			i = j;
		}
	}
	m->s[i].v = NULL;
	m->n--;
}

void exp_map_free(struct exp_map *m)
{
	free(m->s);
	m->s = NULL;
	m->cap = m->n = 0;
}

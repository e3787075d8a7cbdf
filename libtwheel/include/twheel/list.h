/* SPDX-License-Identifier: MIT */
/*
 * twheel/list.h - intrusive circular doubly-linked lists, Linux list.h style.
 *
 * Every name carries the tw_list_ prefix so that code which already has its
 * own list_head, list_add and friends can include this header unchanged.
 * All operations are O(1) unless stated otherwise, allocate nothing and may
 * be called from any thread that owns the list.
 */
#ifndef TWHEEL_LIST_H
#define TWHEEL_LIST_H

#include <stdbool.h>
#include <stddef.h>

/* A list head, and the link embedded in every element. */
struct tw_list {
	struct tw_list *next, *prev;
};

#define TW_LIST_INIT(name) { &(name), &(name) }

/* Make @h an empty list. */
static inline void tw_list_init(struct tw_list *h)
{
	h->next = h;
	h->prev = h;
}

/* Returns true if the list headed by @h has no elements. */
static inline bool tw_list_empty(const struct tw_list *h)
{
	return h->next == h;
}

static inline void tw__list_insert(struct tw_list *n, struct tw_list *prev,
				   struct tw_list *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Insert @n right after the head @h (stack order). */
static inline void tw_list_add(struct tw_list *n, struct tw_list *h)
{
	tw__list_insert(n, h, h->next);
}

/* Insert @n right before the head @h (queue order). */
static inline void tw_list_add_tail(struct tw_list *n, struct tw_list *h)
{
	tw__list_insert(n, h->prev, h);
}

/*
 * Unlink @n from whatever list holds it. The links of @n are left as they
 * were; re-initialise or re-insert it before using them again.
 */
static inline void tw_list_del(struct tw_list *n)
{
	n->next->prev = n->prev;
	n->prev->next = n->next;
}

/* Unlink @n and make it an empty list of its own. */
static inline void tw_list_del_init(struct tw_list *n)
{
	tw_list_del(n);
	tw_list_init(n);
}

/*
 * Move every element of @from to the end of @to and leave @from empty.
 * O(1) whatever the lengths.
 */
static inline void tw_list_splice_tail_init(struct tw_list *from, struct tw_list *to)
{
	struct tw_list *first = from->next, *last = from->prev;

	if (tw_list_empty(from))
		return;
	first->prev = to->prev;
	to->prev->next = first;
	last->next = to;
	to->prev = last;
	tw_list_init(from);
}

/* Get the struct that embeds the member @ptr points at. */
#ifdef __cplusplus /* no C-style cast: C++ code built with -Wold-style-cast */
#define tw_list_entry(ptr, type, member) \
	(reinterpret_cast<type *>(const_cast<char *>(reinterpret_cast<const char *>(ptr)) - offsetof(type, member)))
#else
#define tw_list_entry(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

/* Iterate over a list; the loop body must not unlink @pos. */
#define tw_list_for_each(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

/* Iterate over a list; the body may unlink @pos (but not @n). */
#define tw_list_for_each_safe(pos, n, head) \
	for ((pos) = (head)->next, (n) = (pos)->next; (pos) != (head); \
	     (pos) = (n), (n) = (pos)->next)

#endif /* TWHEEL_LIST_H */

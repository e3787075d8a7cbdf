/*
 * test_legacy_names - legacy code that has its own list_head, list_add,
 * container_of and timer_* (as many kernel-derived C code bases do) includes
 * <twheel/twheel.h> and links against libtwheel without a clash.
 */
#include <stddef.h>
#include <stdio.h>

struct list_head {
	struct list_head *next, *prev;
};
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#define LIST_HEAD_INIT(name) { &(name), &(name) }

static void list_add(struct list_head *n, struct list_head *h)
{
	n->next = h->next;
	n->prev = h;
	h->next->prev = n;
	h->next = n;
}

struct timer_list {
	struct list_head entry;
	unsigned long expires;
	void (*function)(struct timer_list *);
};

/* the legacy code's own timer API, with the kernel's names */
int timer_pending(const struct timer_list *t);
int mod_timer(struct timer_list *t, unsigned long expires);
int del_timer(struct timer_list *t);
void add_timer(struct timer_list *t);
void init_timer(struct timer_list *t);
int timer_init;

int timer_pending(const struct timer_list *t) { return t->entry.next != NULL; }
int mod_timer(struct timer_list *t, unsigned long expires) { t->expires = expires; return 0; }
int del_timer(struct timer_list *t) { t->entry.next = NULL; return 0; }
void add_timer(struct timer_list *t) { (void)t; }
void init_timer(struct timer_list *t) { t->entry.next = NULL; }

#include <twheel/twheel.h>

struct both {
	struct timer_list legacy;
	struct tw_timer tw;
	int fired;
};

static void on_tw(struct tw_timer *t)
{
	tw_container_of(t, struct both, tw)->fired++;
}

int main(void)
{
	struct list_head head = LIST_HEAD_INIT(head);
	struct both b = { 0 };
	init_timer(&b.legacy);
	list_add(&b.legacy.entry, &head);
	mod_timer(&b.legacy, 5);
	tw_timer_init(&b.tw, on_tw);
	struct twheel *w = twheel_create(0);
	twheel_add(w, &b.tw, 5);
	twheel_advance(w, 5);
	twheel_destroy(w);
	struct both *back = container_of(head.next, struct both, legacy.entry);
	int ok = back == &b && b.fired == 1 && timer_pending(&b.legacy) && timer_init == 0;
	puts(ok ? "legacy names and libtwheel coexist" : "FAIL");
	return ok ? 0 : 1;
}

/** @file list.h
 * Circular doubly-linked intrusive lists (HelenOS style). Not synchronized: the
 * owner of a list says which lock protects it.
 */
#ifndef KERN_LIST_H_
#define KERN_LIST_H_

#include <typedefs.h>

typedef struct link {
	struct link *prev;
	struct link *next;
} link_t;

typedef struct {
	link_t head;
} list_t;

#define LIST_INITIALIZER(name) { .head = { &(name).head, &(name).head } }

static inline void link_initialize(link_t *l)
{
	l->prev = NULL;
	l->next = NULL;
}

static inline void list_initialize(list_t *list)
{
	list->head.prev = &list->head;
	list->head.next = &list->head;
}

static inline bool link_in_use(const link_t *l)
{
	return l->prev != NULL && l->next != NULL;
}

static inline bool list_empty(const list_t *list)
{
	return list->head.next == &list->head;
}

static inline void list_insert_after(link_t *l, link_t *pos)
{
	l->prev = pos;
	l->next = pos->next;
	pos->next->prev = l;
	pos->next = l;
}

static inline void list_append(link_t *l, list_t *list)
{
	list_insert_after(l, list->head.prev);
}

static inline void list_prepend(link_t *l, list_t *list)
{
	list_insert_after(l, &list->head);
}

static inline void list_remove(link_t *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	link_initialize(l);
}

static inline link_t *list_first(const list_t *list)
{
	return list_empty(list) ? NULL : list->head.next;
}

static inline link_t *list_last(const list_t *list)
{
	return list_empty(list) ? NULL : list->head.prev;
}

/** Next link after @a l, or NULL at the end. */
static inline link_t *list_next(const link_t *l, const list_t *list)
{
	return l->next == &list->head ? NULL : l->next;
}

static inline size_t list_count(const list_t *list)
{
	size_t n = 0;
	for (link_t *l = list->head.next; l != &list->head; l = l->next)
		n++;
	return n;
}

#define list_get_instance(link, type, member) container_of(link, type, member)

/**
 * Iterates over the list @a list (a list_t *): declares `link_t *@a link` and
 * runs the body with it set to each element's link, first to last. The body
 * must not remove @a link from the list (HelenOS's list_foreach gives the
 * element; here list_get_instance() does that in the body).
 */
#define list_foreach(list, link) \
	for (link_t *link = list_first(list); link; link = list_next(link, list))

#endif

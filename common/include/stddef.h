/** @file stddef.h
 * Freestanding size_t, ptrdiff_t, NULL and offsetof.
 */
#ifndef KERN_STDDEF_H_
#define KERN_STDDEF_H_

typedef unsigned long size_t;
typedef long ssize_t;
typedef long ptrdiff_t;

#define NULL ((void *) 0)
#define offsetof(type, member) __builtin_offsetof(type, member)

#endif

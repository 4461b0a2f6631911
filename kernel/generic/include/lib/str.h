/** @file str.h
 * String and memory helpers (freestanding; no libc in the kernel).
 */
#ifndef KERN_STR_H_
#define KERN_STR_H_

#include <typedefs.h>

void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
/** Copies at most size-1 chars and always terminates (if size > 0). */
size_t str_cpy(char *dst, size_t size, const char *src);

/**
 * Parses an unsigned integer (decimal, or hex with 0x prefix).
 * @return EOK, EINVAL for a non-number or trailing garbage, EOVERFLOW when the value
 *         does not fit 64 bits.
 */
int str_to_uint64(const char *s, uint64_t *out);
/** Signed variant of str_to_uint64 (optional leading '-'). */
int str_to_int64(const char *s, int64_t *out);

#endif

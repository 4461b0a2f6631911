/** @file str.c
 * String and memory helpers (freestanding; no libc in the kernel).
 *
 * memset(), memcpy(), memmove() and memcmp() have the standard C semantics;
 * GCC may emit calls to them on its own (structure copies, zeroing), so they
 * are built with loop pattern distribution disabled to make sure GCC never
 * turns their loops back into calls to themselves.
 */

#include <debug/kasan.h>
#include <lib/str.h>
#include <errno.h>
#include <typedefs.h>
#include <debug/kcsan.h>

/** Do not let GCC replace the loops below by calls to memset()/memcpy(). */
#define NO_LOOP_PATTERNS \
	__attribute__((optimize("no-tree-loop-distribute-patterns")))

/** Machine word that may alias any other type (for the word-wise loops). */
typedef uint64_t __attribute__((may_alias)) str_word_t;

#define WORD_SIZE  sizeof(str_word_t)

/**
 * Fills memory with a byte.
 *
 * @param dst Destination.
 * @param c   Byte value (converted to unsigned char).
 * @param n   Number of bytes.
 * @return @a dst.
 */
NO_LOOP_PATTERNS
void *memset(void *dst, int c, size_t n)
{
#ifdef CONFIG_KASAN
	kasan_check_range(dst, n, true, (uintptr_t) __builtin_return_address(0));
#endif
	kcsan_check_write(dst, n);
	uint8_t *d = dst;
	uint8_t b = (uint8_t) c;

	/* Byte-wise until aligned, then word-wise, then the tail. */
	while (n > 0 && ((uintptr_t) d % WORD_SIZE) != 0) {
		*d++ = b;
		n--;
	}

	if (n >= WORD_SIZE) {
		str_word_t w = (str_word_t) b * 0x0101010101010101UL;
		str_word_t *dw = (str_word_t *) d;
		while (n >= WORD_SIZE) {
			*dw++ = w;
			n -= WORD_SIZE;
		}
		d = (uint8_t *) dw;
	}

	while (n > 0) {
		*d++ = b;
		n--;
	}

	return dst;
}

/**
 * Copies memory; the areas must not overlap (use memmove() if they may).
 *
 * @param dst Destination.
 * @param src Source.
 * @param n   Number of bytes.
 * @return @a dst.
 */
NO_LOOP_PATTERNS
void *memcpy(void *dst, const void *src, size_t n)
{
#ifdef CONFIG_KASAN
	kasan_check_range(src, n, false, (uintptr_t) __builtin_return_address(0));
	kasan_check_range(dst, n, true, (uintptr_t) __builtin_return_address(0));
#endif
	kcsan_check_read(src, n);
	kcsan_check_write(dst, n);
	uint8_t *d = dst;
	const uint8_t *s = src;

	if ((((uintptr_t) d ^ (uintptr_t) s) % WORD_SIZE) == 0) {
		/* Same alignment: copy bytes until aligned, then words. */
		while (n > 0 && ((uintptr_t) d % WORD_SIZE) != 0) {
			*d++ = *s++;
			n--;
		}

		str_word_t *dw = (str_word_t *) d;
		const str_word_t *sw = (const str_word_t *) s;
		while (n >= WORD_SIZE) {
			*dw++ = *sw++;
			n -= WORD_SIZE;
		}
		d = (uint8_t *) dw;
		s = (const uint8_t *) sw;
	}

	while (n > 0) {
		*d++ = *s++;
		n--;
	}

	return dst;
}

/**
 * Copies memory; the areas may overlap.
 *
 * @param dst Destination.
 * @param src Source.
 * @param n   Number of bytes.
 * @return @a dst.
 */
NO_LOOP_PATTERNS
void *memmove(void *dst, const void *src, size_t n)
{
#ifdef CONFIG_KASAN
	kasan_check_range(src, n, false, (uintptr_t) __builtin_return_address(0));
	kasan_check_range(dst, n, true, (uintptr_t) __builtin_return_address(0));
#endif
	kcsan_check_read(src, n);
	kcsan_check_write(dst, n);
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (d == s || n == 0)
		return dst;

	/* Forward copy is safe unless the destination starts inside the source. */
	if ((uintptr_t) d < (uintptr_t) s ||
	    (uintptr_t) d - (uintptr_t) s >= n) {
		while (n > 0) {
			*d++ = *s++;
			n--;
		}
	} else {
		d += n;
		s += n;
		while (n > 0) {
			*--d = *--s;
			n--;
		}
	}

	return dst;
}

/**
 * Compares memory byte-wise (as unsigned char).
 *
 * @param a First area.
 * @param b Second area.
 * @param n Number of bytes.
 * @return < 0, 0 or > 0 when @a a is less than, equal to or greater than @a b.
 */
NO_LOOP_PATTERNS
int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *pa = a;
	const uint8_t *pb = b;

	for (size_t i = 0; i < n; i++) {
		if (pa[i] != pb[i])
			return (int) pa[i] - (int) pb[i];
	}

	return 0;
}

/**
 * Returns the length of a NUL-terminated string.
 *
 * @param s String.
 * @return Number of characters before the terminating NUL.
 */
NO_LOOP_PATTERNS
size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n] != '\0')
		n++;

	return n;
}

/**
 * Compares two strings (characters as unsigned char).
 *
 * @param a First string.
 * @param b Second string.
 * @return < 0, 0 or > 0 when @a a is less than, equal to or greater than @a b.
 */
int strcmp(const char *a, const char *b)
{
	const unsigned char *pa = (const unsigned char *) a;
	const unsigned char *pb = (const unsigned char *) b;

	while (*pa != '\0' && *pa == *pb) {
		pa++;
		pb++;
	}

	return (int) *pa - (int) *pb;
}

/**
 * Compares at most @a n characters of two strings.
 *
 * @param a First string.
 * @param b Second string.
 * @param n Maximum number of characters to compare.
 * @return < 0, 0 or > 0 when @a a is less than, equal to or greater than @a b.
 */
int strncmp(const char *a, const char *b, size_t n)
{
	const unsigned char *pa = (const unsigned char *) a;
	const unsigned char *pb = (const unsigned char *) b;

	for (size_t i = 0; i < n; i++) {
		if (pa[i] != pb[i])
			return (int) pa[i] - (int) pb[i];
		if (pa[i] == '\0')
			return 0;
	}

	return 0;
}

/**
 * Finds the first occurrence of a character in a string.
 *
 * @param s String.
 * @param c Character (converted to char); '\0' finds the terminator.
 * @return Pointer to the character in @a s, or NULL if it does not occur.
 */
char *strchr(const char *s, int c)
{
	char ch = (char) c;

	for (;; s++) {
		if (*s == ch)
			return (char *) s;
		if (*s == '\0')
			return NULL;
	}
}

/**
 * Copies a string into a bounded buffer.
 *
 * Copies at most @a size - 1 characters of @a src and always NUL-terminates
 * @a dst when @a size > 0 (when @a size is 0, nothing is written).
 *
 * @param dst  Destination buffer.
 * @param size Size of @a dst in bytes.
 * @param src  Source string.
 * @return Number of characters copied (excluding the NUL); it is less than
 *         strlen(@a src) when the string was truncated. Being at most
 *         @a size - 1, it can safely be used to advance an append position.
 */
size_t str_cpy(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	if (size == 0)
		return 0;

	while (i < size - 1 && src[i] != '\0') {
		dst[i] = src[i];
		i++;
	}
	dst[i] = '\0';

	return i;
}

/** Returns the value of the digit @a c in @a base, or -1 if it is not one. */
static int digit_value(char c, unsigned int base)
{
	int v;

	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'f')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		v = c - 'A' + 10;
	else
		return -1;

	return (v < (int) base) ? v : -1;
}

/**
 * Parses an unsigned magnitude without sign: decimal, or hex with 0x/0X.
 *
 * @return EOK, EINVAL (no digits or trailing garbage; takes precedence over
 *         overflow) or EOVERFLOW.
 */
static int parse_magnitude(const char *s, uint64_t *out)
{
	unsigned int base = 10;
	uint64_t v = 0;
	bool overflow = false;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}

	if (*s == '\0')
		return EINVAL;

	for (; *s != '\0'; s++) {
		int d = digit_value(*s, base);
		if (d < 0)
			return EINVAL;

		if (v > (UINT64_MAX - (uint64_t) d) / base)
			overflow = true;
		else
			v = v * base + (uint64_t) d;
	}

	if (overflow)
		return EOVERFLOW;

	*out = v;
	return EOK;
}

/**
 * Parses an unsigned 64-bit integer.
 *
 * Accepted syntax: an optional '+', then either decimal digits or "0x"/"0X"
 * followed by hex digits (either case). Leading zeros do not mean octal
 * ("010" is 10). No whitespace is skipped anywhere; a '-' is rejected.
 *
 * @param s   String to parse (NULL gives EINVAL).
 * @param out Where to store the value; untouched on error.
 * @return EOK, EINVAL for an empty string, a non-number or trailing garbage,
 *         EOVERFLOW when the value does not fit 64 bits (a string that is
 *         both too large and malformed gives EINVAL).
 */
int str_to_uint64(const char *s, uint64_t *out)
{
	uint64_t v;

	if (s == NULL || out == NULL)
		return EINVAL;

	if (*s == '+')
		s++;

	int rc = parse_magnitude(s, &v);
	if (rc != EOK)
		return rc;

	*out = v;
	return EOK;
}

/**
 * Parses a signed 64-bit integer.
 *
 * Same syntax as str_to_uint64() with an optional leading '-' or '+' before
 * the digits or the "0x" prefix (e.g. "-0x10" is -16). The whole range
 * INT64_MIN..INT64_MAX is accepted.
 *
 * @param s   String to parse (NULL gives EINVAL).
 * @param out Where to store the value; untouched on error.
 * @return EOK, EINVAL for a non-number, EOVERFLOW when out of range.
 */
int str_to_int64(const char *s, int64_t *out)
{
	bool negative = false;
	uint64_t mag;

	if (s == NULL || out == NULL)
		return EINVAL;

	if (*s == '-') {
		negative = true;
		s++;
	} else if (*s == '+') {
		s++;
	}

	int rc = parse_magnitude(s, &mag);
	if (rc != EOK)
		return rc;

	if (negative) {
		if (mag > (uint64_t) INT64_MAX + 1)
			return EOVERFLOW;
		/* Two's complement negation; gives INT64_MIN for 2^63. */
		*out = (int64_t) ((uint64_t) 0 - mag);
	} else {
		if (mag > (uint64_t) INT64_MAX)
			return EOVERFLOW;
		*out = (int64_t) mag;
	}

	return EOK;
}

/** @file printf_core.c
 * Kernel formatted output core: printf_core(), vsnprintf() and snprintf().
 *
 * printf_core() parses the format and hands every produced character to a
 * callback, so the same formatter serves the console (printf()) and memory
 * buffers (snprintf()).
 *
 * Supported conversion specification:
 *
 *     %[flags][width][.precision][length]conversion
 *
 * - flags: '-' left-justify, '0' pad numbers with zeros, '+' always print the
 *   sign of a signed conversion, ' ' print a space instead of '+', '#' the
 *   alternate form ("0x"/"0X" for non-zero %x/%X, a leading zero for %o).
 * - width: decimal number or '*' (an int argument; a negative value means the
 *   '-' flag plus its absolute value).
 * - precision: '.' followed by a decimal number or '*' (an int argument; a
 *   negative value means the precision was omitted; '.' alone means 0). For
 *   integers it is the minimum number of digits (0 with precision 0 prints no
 *   digits) and it disables the '0' flag, as in C. For %s it is the maximum
 *   number of characters printed.
 * - length: hh h l ll z t j (as in C; z/t/j/l/ll are all 64 bits here).
 * - conversions: %d %i (signed decimal), %u (unsigned decimal), %x %X
 *   (unsigned hexadecimal), %o (unsigned octal), %c, %s, %p, %%.
 *
 * Kernel-specific behaviour (deliberately differing from some libcs):
 * - %p always prints "0x" followed by exactly 16 lowercase hex digits (zero
 *   padded, e.g. "0x00000000000abcde"); only width and '-' apply to it,
 *   precision and the other flags are ignored.
 * - %s with a NULL pointer prints "(null)" (precision still limits it, so
 *   "%.3s" prints "(nu").
 * - %c and %s ignore the '0' flag (they are padded with spaces).
 * - %% prints a single '%' whatever flags, width or precision it carries.
 * - An unknown conversion (e.g. "%q", "%n", "%f", or a format that ends in
 *   the middle of a specification) is copied to the output literally,
 *   including its flags, width, precision and length characters; it consumes
 *   no argument (but a '*' before it has consumed its int already).
 * - A NULL format prints "(null)".
 * - Widths and precisions written as digits saturate at INT32_MAX.
 */

#include <printf_core.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Flag bits of one conversion specification. */
#define FL_LEFT   0x01  /**< '-' */
#define FL_ZERO   0x02  /**< '0' */
#define FL_PLUS   0x04  /**< '+' */
#define FL_SPACE  0x08  /**< ' ' */
#define FL_ALT    0x10  /**< '#' */

/** Length modifiers. */
typedef enum {
	LEN_DEFAULT,
	LEN_HH,
	LEN_H,
	LEN_L,
	LEN_LL,
	LEN_Z,
	LEN_T,
	LEN_J
} printf_len_t;

/** Output state of one printf_core() run. */
typedef struct {
	void (*out)(char, void *);
	void *data;
	/** Characters produced so far. */
	size_t count;
} printf_state_t;

/** Emits a single character. */
static void emit(printf_state_t *st, char c)
{
	if (st->out != NULL)
		st->out(c, st->data);
	st->count++;
}

/** Emits @a n copies of @a c (nothing when @a n <= 0). */
static void emit_repeat(printf_state_t *st, char c, int64_t n)
{
	while (n-- > 0)
		emit(st, c);
}

/** Emits the first @a n characters of @a s. */
static void emit_chars(printf_state_t *st, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		emit(st, s[i]);
}

/** Emits @a n characters of @a s padded with spaces to @a width. */
static void emit_padded(printf_state_t *st, const char *s, size_t n,
    int flags, int width)
{
	int64_t pad = (int64_t) width - (int64_t) n;

	if (!(flags & FL_LEFT))
		emit_repeat(st, ' ', pad);
	emit_chars(st, s, n);
	if (flags & FL_LEFT)
		emit_repeat(st, ' ', pad);
}

/**
 * Formats an integer.
 *
 * @param st        Output state.
 * @param mag       Absolute value of the number.
 * @param negative  True if the number is negative (signed conversions only).
 * @param is_signed True for %d/%i ('+' and ' ' flags apply).
 * @param base      8, 10 or 16.
 * @param upper     Use uppercase hex digits and "0X".
 * @param flags     FL_* flags.
 * @param width     Minimum field width.
 * @param precision Minimum number of digits, or -1 if not given.
 */
static void print_number(printf_state_t *st, uint64_t mag, bool negative,
    bool is_signed, unsigned int base, bool upper, int flags, int width,
    int precision)
{
	const char *digit_chars = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	/* 64 bits in octal need 22 digits. */
	char digits[24];
	int ndigits = 0;
	char prefix[2];
	int nprefix = 0;

	/* Digits, least significant first. Value 0 with precision 0 has none. */
	if (mag != 0 || precision != 0) {
		uint64_t v = mag;
		do {
			digits[ndigits++] = digit_chars[v % base];
			v /= base;
		} while (v != 0);
	}

	if (is_signed) {
		if (negative)
			prefix[nprefix++] = '-';
		else if (flags & FL_PLUS)
			prefix[nprefix++] = '+';
		else if (flags & FL_SPACE)
			prefix[nprefix++] = ' ';
	}

	if ((flags & FL_ALT) && base == 16 && mag != 0) {
		prefix[nprefix++] = '0';
		prefix[nprefix++] = upper ? 'X' : 'x';
	}

	/* Leading zeros required by the precision. */
	int64_t zeros = 0;
	if (precision > ndigits)
		zeros = (int64_t) precision - ndigits;

	/* '#' with %o: the first digit must be a zero. */
	if ((flags & FL_ALT) && base == 8 && zeros == 0 &&
	    (ndigits == 0 || digits[ndigits - 1] != '0'))
		zeros = 1;

	/* '0' flag: pad with zeros between the prefix and the digits. */
	if ((flags & FL_ZERO) && !(flags & FL_LEFT) && precision < 0) {
		int64_t len = nprefix + zeros + ndigits;
		if (width > len)
			zeros += width - len;
	}

	int64_t pad = (int64_t) width - (nprefix + zeros + ndigits);

	if (!(flags & FL_LEFT))
		emit_repeat(st, ' ', pad);
	emit_chars(st, prefix, nprefix);
	emit_repeat(st, '0', zeros);
	while (ndigits > 0)
		emit(st, digits[--ndigits]);
	if (flags & FL_LEFT)
		emit_repeat(st, ' ', pad);
}

/** Fetches a signed integer argument of the given length. */
static int64_t fetch_signed(va_list *ap, printf_len_t len)
{
	switch (len) {
	case LEN_HH:
		return (signed char) va_arg(*ap, int);
	case LEN_H:
		return (short) va_arg(*ap, int);
	case LEN_DEFAULT:
		return va_arg(*ap, int);
	case LEN_Z:
		return va_arg(*ap, ssize_t);
	case LEN_T:
		return va_arg(*ap, ptrdiff_t);
	case LEN_J:
		return va_arg(*ap, intmax_t);
	case LEN_L:
		return va_arg(*ap, long);
	case LEN_LL:
	default:
		return va_arg(*ap, long long);
	}
}

/** Fetches an unsigned integer argument of the given length. */
static uint64_t fetch_unsigned(va_list *ap, printf_len_t len)
{
	switch (len) {
	case LEN_HH:
		return (unsigned char) va_arg(*ap, unsigned int);
	case LEN_H:
		return (unsigned short) va_arg(*ap, unsigned int);
	case LEN_DEFAULT:
		return va_arg(*ap, unsigned int);
	case LEN_Z:
		return va_arg(*ap, size_t);
	case LEN_T:
		return (uint64_t) va_arg(*ap, ptrdiff_t);
	case LEN_J:
		return va_arg(*ap, uintmax_t);
	case LEN_L:
		return va_arg(*ap, unsigned long);
	case LEN_LL:
	default:
		return va_arg(*ap, unsigned long long);
	}
}

/** Parses a decimal number in the format, saturating at INT32_MAX. */
static int parse_decimal(const char **pfmt)
{
	const char *p = *pfmt;
	int v = 0;

	while (*p >= '0' && *p <= '9') {
		int d = *p - '0';
		if (v > (INT32_MAX - d) / 10)
			v = INT32_MAX;
		else
			v = v * 10 + d;
		p++;
	}

	*pfmt = p;
	return v;
}

/** One parsed conversion specification (everything before the conversion). */
typedef struct {
	int flags;          /**< FL_* flags. */
	int width;          /**< Minimum field width (0: none). */
	int precision;      /**< Precision, -1 if not given. */
	printf_len_t len;   /**< Length modifier. */
} printf_spec_t;

/** Parses the flags of a specification; advances @a *pfmt past them. */
static int parse_flags(const char **pfmt)
{
	const char *fmt = *pfmt;
	int flags = 0;

	for (;;) {
		if (*fmt == '-')
			flags |= FL_LEFT;
		else if (*fmt == '0')
			flags |= FL_ZERO;
		else if (*fmt == '+')
			flags |= FL_PLUS;
		else if (*fmt == ' ')
			flags |= FL_SPACE;
		else if (*fmt == '#')
			flags |= FL_ALT;
		else
			break;
		fmt++;
	}

	*pfmt = fmt;
	return flags;
}

/** Parses a length modifier (hh h l ll z t j, or none); advances @a *pfmt. */
static printf_len_t parse_length(const char **pfmt)
{
	const char *fmt = *pfmt;
	printf_len_t len = LEN_DEFAULT;

	switch (*fmt) {
	case 'h':
		fmt++;
		if (*fmt == 'h') {
			fmt++;
			len = LEN_HH;
		} else {
			len = LEN_H;
		}
		break;
	case 'l':
		fmt++;
		if (*fmt == 'l') {
			fmt++;
			len = LEN_LL;
		} else {
			len = LEN_L;
		}
		break;
	case 'z':
		fmt++;
		len = LEN_Z;
		break;
	case 't':
		fmt++;
		len = LEN_T;
		break;
	case 'j':
		fmt++;
		len = LEN_J;
		break;
	default:
		break;
	}

	*pfmt = fmt;
	return len;
}

/**
 * Parses flags, width, precision and length of a specification.
 *
 * @param pfmt In: the character after '%'; out: the conversion character.
 * @param args Arguments ('*' width and precision consume an int each).
 * @param sp   Filled in.
 */
static void parse_spec(const char **pfmt, va_list *args, printf_spec_t *sp)
{
	const char *fmt = *pfmt;

	sp->flags = parse_flags(&fmt);
	sp->precision = -1;

	/* Width. */
	if (*fmt == '*') {
		int w = va_arg(*args, int);
		fmt++;
		if (w < 0) {
			sp->flags |= FL_LEFT;
			sp->width = (w == INT32_MIN) ? INT32_MAX : -w;
		} else {
			sp->width = w;
		}
	} else {
		sp->width = parse_decimal(&fmt);
	}

	/* Precision. */
	if (*fmt == '.') {
		fmt++;
		if (*fmt == '*') {
			int p = va_arg(*args, int);
			fmt++;
			sp->precision = (p < 0) ? -1 : p;
		} else {
			sp->precision = parse_decimal(&fmt);
		}
	}

	sp->len = parse_length(&fmt);
	*pfmt = fmt;
}

/** Prints %p: "0x" and 16 lowercase hex digits, padded to the width. */
static void print_pointer(printf_state_t *st, uintptr_t v,
    const printf_spec_t *sp)
{
	char buf[18];

	buf[0] = '0';
	buf[1] = 'x';
	for (int i = 17; i >= 2; i--) {
		buf[i] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	}
	emit_padded(st, buf, sizeof(buf), sp->flags, sp->width);
}

/** Prints %s: "(null)" for NULL, at most the precision's characters. */
static void print_string(printf_state_t *st, const char *s,
    const printf_spec_t *sp)
{
	size_t n = 0;

	if (s == NULL)
		s = "(null)";
	if (sp->precision >= 0) {
		while (n < (size_t) sp->precision && s[n] != '\0')
			n++;
	} else {
		while (s[n] != '\0')
			n++;
	}
	emit_padded(st, s, n, sp->flags, sp->width);
}

/**
 * Prints one conversion whose specification has been parsed.
 *
 * @param st   Output state.
 * @param conv The conversion character (not '\0').
 * @param sp   The parsed specification.
 * @param args Arguments (the conversion's one is consumed).
 * @return False if @a conv is no known conversion (nothing printed, no
 *         argument consumed).
 */
static bool print_conversion(printf_state_t *st, char conv,
    const printf_spec_t *sp, va_list *args)
{
	switch (conv) {
	case 'd':
	case 'i': {
		int64_t v = fetch_signed(args, sp->len);
		bool neg = v < 0;
		uint64_t mag = neg ? (uint64_t) 0 - (uint64_t) v :
		    (uint64_t) v;
		print_number(st, mag, neg, true, 10, false, sp->flags,
		    sp->width, sp->precision);
		return true;
	}
	case 'u':
		print_number(st, fetch_unsigned(args, sp->len), false,
		    false, 10, false, sp->flags, sp->width, sp->precision);
		return true;
	case 'x':
	case 'X':
		print_number(st, fetch_unsigned(args, sp->len), false,
		    false, 16, conv == 'X', sp->flags, sp->width,
		    sp->precision);
		return true;
	case 'o':
		print_number(st, fetch_unsigned(args, sp->len), false,
		    false, 8, false, sp->flags, sp->width, sp->precision);
		return true;
	case 'p':
		print_pointer(st, (uintptr_t) va_arg(*args, void *), sp);
		return true;
	case 'c': {
		char c = (char) va_arg(*args, int);
		emit_padded(st, &c, 1, sp->flags, sp->width);
		return true;
	}
	case 's':
		print_string(st, va_arg(*args, const char *), sp);
		return true;
	case '%':
		emit(st, '%');
		return true;
	default:
		return false;
	}
}

/**
 * Core formatter.
 *
 * Formats @a fmt with the arguments @a ap (see the file comment for the
 * supported syntax) and calls @a out(ch, @a data) for every output character,
 * in order. Never fails: malformed or unknown specifications are copied to the
 * output literally.
 *
 * @param out  Per-character callback (may be NULL to only count).
 * @param data Opaque argument passed to @a out.
 * @param fmt  Format string.
 * @param ap   Arguments.
 * @return Number of characters produced (saturated at INT32_MAX).
 */
int printf_core(void (*out)(char, void *), void *data, const char *fmt,
    va_list ap)
{
	printf_state_t st = {
		.out = out,
		.data = data,
		.count = 0
	};
	va_list args;

	if (fmt == NULL)
		fmt = "(null)";

	va_copy(args, ap);

	while (*fmt != '\0') {
		if (*fmt != '%') {
			emit(&st, *fmt++);
			continue;
		}

		/* Start of a conversion specification. */
		const char *spec = fmt++;
		printf_spec_t sp;

		parse_spec(&fmt, &args, &sp);
		if (*fmt == '\0') {
			/* Format ends inside a specification: print it as is. */
			emit_chars(&st, spec, (size_t) (fmt - spec));
			break;
		}
		if (!print_conversion(&st, *fmt, &sp, &args)) {
			/* Unknown conversion: print it literally. */
			emit_chars(&st, spec, (size_t) (fmt - spec) + 1);
		}
		fmt++;
	}

	va_end(args);

	return (st.count > (size_t) INT32_MAX) ? INT32_MAX : (int) st.count;
}

/** Destination buffer of vsnprintf(). */
typedef struct {
	char *buf;
	size_t size;
	size_t pos;
} snprintf_buf_t;

/** printf_core() callback storing characters into a bounded buffer. */
static void snprintf_out(char c, void *data)
{
	snprintf_buf_t *b = data;

	/* Keep the last byte for the terminating NUL. */
	if (b->pos + 1 < b->size)
		b->buf[b->pos] = c;
	b->pos++;
}

/**
 * Formats into a bounded buffer.
 *
 * Writes at most @a size - 1 characters followed by a NUL; when @a size is 0,
 * nothing is written and @a buf may be NULL (a NULL @a buf is always treated
 * as size 0).
 *
 * @param buf  Destination buffer.
 * @param size Size of @a buf in bytes.
 * @param fmt  Format string (see printf_core()).
 * @param ap   Arguments.
 * @return Length the complete output would have (excluding the NUL), so a
 *         return value >= @a size means the output was truncated.
 */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	snprintf_buf_t b = {
		.buf = buf,
		.size = (buf != NULL) ? size : 0,
		.pos = 0
	};

	int ret = printf_core(snprintf_out, &b, fmt, ap);

	if (b.size > 0)
		b.buf[(b.pos < b.size) ? b.pos : b.size - 1] = '\0';

	return ret;
}

/**
 * Formats into a bounded buffer, see vsnprintf().
 *
 * @param buf  Destination buffer.
 * @param size Size of @a buf in bytes.
 * @param fmt  Format string (see printf_core()).
 * @return Length the complete output would have (excluding the NUL).
 */
int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int ret = vsnprintf(buf, size, fmt, ap);
	va_end(ap);

	return ret;
}

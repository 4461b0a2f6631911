/** @file print1.c
 * Test of the formatter (snprintf(), vsnprintf(), printf_core()) and of the
 * string-to-integer conversions str_to_uint64() and str_to_int64().
 *
 * Every formatting case is checked three times: into a large buffer (exact
 * output and return value), with a NULL buffer of size 0 (return value only)
 * and into a 4-byte buffer (truncation and termination).
 */

#include <print.h>
#include <lib/str.h>
#include <errno.h>
#include <typedefs.h>
#include <stdarg.h>
#include <test.h>
#include <testlib.h>

/** Size of the output buffer of one case. */
#define CASE_BUF_SIZE  256
/** Size of the buffer used to check truncation. */
#define SMALL_BUF_SIZE  4
/** Filler used to detect writes past the terminating NUL. */
#define FILL_CHAR  '~'

/** Failure reason returned by the test. */
static char reason[512];
/** Index of the current case (1-based, counts formatting and parsing cases). */
static int case_idx;

/** Checks one case; on mismatch fills @a reason and returns false. */
static bool check_v(int line, const char *expected, const char *fmt,
    va_list ap)
{
	char buf[CASE_BUF_SIZE];
	char small[SMALL_BUF_SIZE + 4];
	size_t exp_len = strlen(expected);
	va_list ap2;
	int rc;

	case_idx++;

	/* Full output. */
	memset(buf, FILL_CHAR, sizeof(buf));
	va_copy(ap2, ap);
	rc = vsnprintf(buf, sizeof(buf), fmt, ap2);
	va_end(ap2);

	if (strcmp(buf, expected) != 0) {
		snprintf(reason, sizeof(reason),
		    "case %d (line %d, fmt \"%s\"): got '%s' expected '%s'",
		    case_idx, line, fmt, buf, expected);
		return false;
	}

	if (rc < 0 || (size_t) rc != exp_len) {
		snprintf(reason, sizeof(reason),
		    "case %d (line %d, fmt \"%s\"): returned %d expected %zu",
		    case_idx, line, fmt, rc, exp_len);
		return false;
	}

	if (exp_len + 1 < sizeof(buf) && buf[exp_len + 1] != FILL_CHAR) {
		snprintf(reason, sizeof(reason),
		    "case %d (line %d, fmt \"%s\"): wrote past the NUL",
		    case_idx, line, fmt);
		return false;
	}

	/* Only count. */
	va_copy(ap2, ap);
	rc = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);

	if (rc < 0 || (size_t) rc != exp_len) {
		snprintf(reason, sizeof(reason),
		    "case %d (line %d, fmt \"%s\"): size 0 returned %d "
		    "expected %zu", case_idx, line, fmt, rc, exp_len);
		return false;
	}

	/* Truncated output. */
	memset(small, FILL_CHAR, sizeof(small));
	va_copy(ap2, ap);
	rc = vsnprintf(small, SMALL_BUF_SIZE, fmt, ap2);
	va_end(ap2);

	size_t trunc_len = MIN(exp_len, (size_t) SMALL_BUF_SIZE - 1);
	if (rc < 0 || (size_t) rc != exp_len ||
	    strncmp(small, expected, trunc_len) != 0 ||
	    small[trunc_len] != '\0' || small[SMALL_BUF_SIZE] != FILL_CHAR) {
		snprintf(reason, sizeof(reason),
		    "case %d (line %d, fmt \"%s\"): truncated to %d bytes "
		    "wrong (returned %d, expected '%.*s')", case_idx, line,
		    fmt, SMALL_BUF_SIZE, rc, (int) trunc_len, expected);
		return false;
	}

	return true;
}

/** Checks that formatting @a fmt with the arguments gives @a expected. */
static bool check(int line, const char *expected, const char *fmt, ...)
    PRINTF_ATTR(3, 4);

static bool check(int line, const char *expected, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bool ok = check_v(line, expected, fmt, ap);
	va_end(ap);

	return ok;
}

#define EXPECT_PRINT(expected, ...) \
	do { \
		if (!check(__LINE__, (expected), __VA_ARGS__)) \
			return reason; \
	} while (0)

/** Fails the test with a message naming the current case. */
#define FAIL_CASE(...) \
	do { \
		int n_ = snprintf(reason, sizeof(reason), "case %d (line %d): ", \
		    case_idx, __LINE__); \
		if (n_ >= 0 && (size_t) n_ < sizeof(reason)) \
			snprintf(reason + n_, sizeof(reason) - n_, __VA_ARGS__); \
		return reason; \
	} while (0)

/** Standard formats; the expected strings match ISO C printf(). */
/** Plain text, the basic conversions and the integer limits. */
static const char *std_conversions(void)
{
	/* Plain text and the basic conversions. */
	EXPECT_PRINT("hello", "hello");
	EXPECT_PRINT("0", "%d", 0);
	EXPECT_PRINT("42", "%d", 42);
	EXPECT_PRINT("-42", "%d", -42);
	EXPECT_PRINT("123", "%i", 123);
	EXPECT_PRINT("-7", "%i", -7);
	EXPECT_PRINT("4294967295", "%u", 4294967295U);
	EXPECT_PRINT("deadbeef", "%x", 0xdeadbeefU);
	EXPECT_PRINT("DEADBEEF", "%X", 0xdeadbeefU);
	EXPECT_PRINT("10", "%o", 8U);
	EXPECT_PRINT("0", "%o", 0U);
	EXPECT_PRINT("777", "%o", 0777U);
	EXPECT_PRINT("A", "%c", 'A');
	EXPECT_PRINT("abc", "%s", "abc");
	EXPECT_PRINT("", "%s", "");
	EXPECT_PRINT("%", "%%");
	EXPECT_PRINT("a%b%", "a%%b%%");
	EXPECT_PRINT("x=5 s=str c=z", "x=%d s=%s c=%c", 5, "str", 'z');
	EXPECT_PRINT("[1][2][3]", "[%d][%u][%x]", 1, 2U, 3U);

	/* INT/UINT limits. */
	EXPECT_PRINT("-2147483648", "%d", INT32_MIN);
	EXPECT_PRINT("2147483647", "%d", INT32_MAX);
	EXPECT_PRINT("4294967295", "%u", UINT32_MAX);
	EXPECT_PRINT("ffffffff", "%x", UINT32_MAX);
	EXPECT_PRINT("37777777777", "%o", UINT32_MAX);
	EXPECT_PRINT("-9223372036854775808", "%ld", INT64_MIN);
	EXPECT_PRINT("9223372036854775807", "%ld", INT64_MAX);
	EXPECT_PRINT("-9223372036854775808", "%lld", (long long) INT64_MIN);
	EXPECT_PRINT("9223372036854775807", "%lli", (long long) INT64_MAX);
	EXPECT_PRINT("18446744073709551615", "%lu", UINT64_MAX);
	EXPECT_PRINT("18446744073709551615", "%llu", (unsigned long long) UINT64_MAX);
	EXPECT_PRINT("ffffffffffffffff", "%lx", UINT64_MAX);
	EXPECT_PRINT("FFFFFFFFFFFFFFFF", "%llX", (unsigned long long) UINT64_MAX);
	EXPECT_PRINT("1777777777777777777777", "%lo", UINT64_MAX);
	EXPECT_PRINT("8000000000000000", "%lx", (uint64_t) INT64_MIN);
	return NULL;
}

/** Width, the sign flags and the alternate form. */
static const char *std_width_flags(void)
{
	/* Width. */
	EXPECT_PRINT("   42", "%5d", 42);
	EXPECT_PRINT("42   |", "%-5d|", 42);
	EXPECT_PRINT("00042", "%05d", 42);
	EXPECT_PRINT("-0042", "%05d", -42);
	EXPECT_PRINT("-0000001", "%08d", -1);
	EXPECT_PRINT("-1      |", "%-8d|", -1);
	EXPECT_PRINT("00000abc", "%08x", 0xabcU);
	EXPECT_PRINT("12345", "%2d", 12345);
	EXPECT_PRINT("-123", "%3d", -123);
	EXPECT_PRINT("     ", "%5s", "");
	EXPECT_PRINT("  abc", "%5s", "abc");
	EXPECT_PRINT("abc  |", "%-5s|", "abc");
	EXPECT_PRINT("    x", "%5c", 'x');
	EXPECT_PRINT("x  |", "%-3c|", 'x');
	EXPECT_PRINT("-000009223372036854775808", "%025ld", INT64_MIN);
	EXPECT_PRINT("-9223372036854775808     |", "%-25ld|", INT64_MIN);
	EXPECT_PRINT("     18446744073709551615", "%25lu", UINT64_MAX);
	EXPECT_PRINT("00000000000000000000000000000000000000000042", "%044d", 42);

	/* Sign flags. */
	EXPECT_PRINT("+42", "%+d", 42);
	EXPECT_PRINT("-42", "%+d", -42);
	EXPECT_PRINT("+0", "%+d", 0);
	EXPECT_PRINT(" 42", "% d", 42);
	EXPECT_PRINT("-42", "% d", -42);
	EXPECT_PRINT(" 0", "% d", 0);
	EXPECT_PRINT("  +42", "%+5d", 42);
	EXPECT_PRINT("+0042", "%+05d", 42);
	EXPECT_PRINT(" 0042", "% 05d", 42);
	EXPECT_PRINT("+42  |", "%-+5d|", 42);
	EXPECT_PRINT("+9223372036854775807", "%+ld", INT64_MAX);
	EXPECT_PRINT("-9223372036854775808", "%+ld", INT64_MIN);

	/* Alternate form. */
	EXPECT_PRINT("0xff", "%#x", 255U);
	EXPECT_PRINT("0XFF", "%#X", 255U);
	EXPECT_PRINT("0", "%#x", 0U);
	EXPECT_PRINT("010", "%#o", 8U);
	EXPECT_PRINT("0", "%#o", 0U);
	EXPECT_PRINT("      0xff", "%#10x", 255U);
	EXPECT_PRINT("0x000000ff", "%#010x", 255U);
	EXPECT_PRINT("0xff      |", "%-#10x|", 255U);
	EXPECT_PRINT("00010", "%#.5o", 8U);
	EXPECT_PRINT("0", "%#.0o", 0U);
	EXPECT_PRINT("0x001", "%#.3x", 1U);
	EXPECT_PRINT("0xffffffffffffffff", "%#lx", UINT64_MAX);
	EXPECT_PRINT("01777777777777777777777", "%#lo", UINT64_MAX);
	return NULL;
}

/** Precision on integers and strings, width and precision from arguments. */
static const char *std_precision(void)
{
	/* Precision on integers. */
	EXPECT_PRINT("00042", "%.5d", 42);
	EXPECT_PRINT("-00042", "%.5d", -42);
	EXPECT_PRINT("  -00042", "%8.5d", -42);
	EXPECT_PRINT("00042   |", "%-8.5d|", 42);
	EXPECT_PRINT("+00042", "%+.5d", 42);
	EXPECT_PRINT("", "%.0d", 0);
	EXPECT_PRINT("", "%.d", 0);
	EXPECT_PRINT("     ", "%5.0d", 0);
	EXPECT_PRINT("", "%.0x", 0U);
	EXPECT_PRINT("", "%.0u", 0U);
	EXPECT_PRINT("+", "%+.0d", 0);
	EXPECT_PRINT(" ", "% .0d", 0);
	EXPECT_PRINT("1", "%.0d", 1);
	EXPECT_PRINT("00a", "%.3x", 0xaU);
	EXPECT_PRINT("0000000123", "%.10u", 123U);
	EXPECT_PRINT("00000018446744073709551615", "%.26lu", UINT64_MAX);
	EXPECT_PRINT("-0009223372036854775808", "%.22ld", INT64_MIN);
	EXPECT_PRINT("-9223372036854775808", "%.5ld", INT64_MIN);

	/* Precision on strings. */
	EXPECT_PRINT("abc", "%.3s", "abcdef");
	EXPECT_PRINT("abc", "%.10s", "abc");
	EXPECT_PRINT("", "%.0s", "abc");
	EXPECT_PRINT("   ab|", "%5.2s|", "abc");
	EXPECT_PRINT("ab   |", "%-5.2s|", "abc");

	/* Width and precision from arguments. */
	EXPECT_PRINT("   42", "%*d", 5, 42);
	EXPECT_PRINT("42   |", "%*d|", -5, 42);
	EXPECT_PRINT("42   |", "%-*d|", 5, 42);
	EXPECT_PRINT("42   |", "%-*d|", -5, 42);
	EXPECT_PRINT("42", "%*d", 0, 42);
	EXPECT_PRINT("0007", "%.*d", 4, 7);
	EXPECT_PRINT("7", "%.*d", -1, 7);
	EXPECT_PRINT("", "%.*d", 0, 0);
	EXPECT_PRINT("   007", "%*.*d", 6, 3, 7);
	EXPECT_PRINT("ab    |", "%*.*s|", -6, 2, "abc");
	EXPECT_PRINT("abc", "%.*s", 3, "abcdef");
	EXPECT_PRINT("abcdef", "%.*s", -3, "abcdef");
	EXPECT_PRINT("-0003", "%0*d", 5, -3);
	EXPECT_PRINT("    z", "%*c", 5, 'z');
	return NULL;
}

/** Length modifiers and combinations. */
static const char *std_length(void)
{
	/* Length modifiers. */
	EXPECT_PRINT("-1", "%hhd", 255);
	EXPECT_PRINT("-128", "%hhd", -128);
	EXPECT_PRINT("-128", "%hhd", 128);
	EXPECT_PRINT("127", "%hhi", 127);
	EXPECT_PRINT("5", "%hhu", 261);
	EXPECT_PRINT("255", "%hhu", -1);
	EXPECT_PRINT("ff", "%hhx", 0x1ff);
	EXPECT_PRINT("377", "%hho", 0xff);
	EXPECT_PRINT("-32768", "%hd", 32768);
	EXPECT_PRINT("-32768", "%hd", -32768);
	EXPECT_PRINT("32767", "%hi", 32767);
	EXPECT_PRINT("7", "%hu", 65536 + 7);
	EXPECT_PRINT("65535", "%hu", -1);
	EXPECT_PRINT("2345", "%hx", 0x12345);
	EXPECT_PRINT("FFFF", "%hX", 0xffff);
	EXPECT_PRINT("12345", "%zu", (size_t) 12345);
	EXPECT_PRINT("-5", "%zd", (ssize_t) -5);
	EXPECT_PRINT("ffffffffffffffff", "%zx", SIZE_MAX);
	EXPECT_PRINT("-100", "%td", (ptrdiff_t) -100);
	EXPECT_PRINT("ff", "%tx", (ptrdiff_t) 255);
	EXPECT_PRINT("-9223372036854775808", "%jd", (intmax_t) INT64_MIN);
	EXPECT_PRINT("18446744073709551615", "%ju", (uintmax_t) UINT64_MAX);
	EXPECT_PRINT("1234567890123", "%li", 1234567890123L);
	EXPECT_PRINT("   -1", "%5ld", -1L);
	EXPECT_PRINT("00ff", "%04hhx", 255);

	/* Combinations. */
	EXPECT_PRINT("[  abc] [abc  ] [00042] [+42] [0x2a]",
	    "[%5s] [%-5s] [%05d] [%+d] [%#x]", "abc", "abc", 42, 42, 42U);
	EXPECT_PRINT("a-1b18446744073709551615c-9223372036854775808d",
	    "a%db%luc%ldd", -1, UINT64_MAX, INT64_MIN);
	return NULL;
}

static const char *test_standard(void)
{
	const char *r;
	if ((r = std_conversions()) || (r = std_width_flags()) ||
	    (r = std_precision()) || (r = std_length()))
		return r;
	return NULL;
}

/* The following formats are valid but GCC warns about them (flags with no
 * effect, an empty format); some are kernel-specific. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
#pragma GCC diagnostic ignored "-Wformat-zero-length"
#pragma GCC diagnostic ignored "-Wformat-overflow"

/** Formats whose flags have no effect (same result as ISO C printf()). */
static const char *test_ignored_flags(void)
{
	EXPECT_PRINT("", "");
	EXPECT_PRINT("-42  |", "%-05d|", -42);
	EXPECT_PRINT("42   |", "%-05d|", 42);
	EXPECT_PRINT("+5", "%+ d", 5);
	EXPECT_PRINT("+5", "% +d", 5);
	EXPECT_PRINT("5", "%+u", 5U);
	EXPECT_PRINT("5", "% x", 5U);
	EXPECT_PRINT("5", "%#d", 5);
	EXPECT_PRINT("5", "%#u", 5U);
	EXPECT_PRINT("x", "%hhc", 'x');

	/* '0' is ignored when a precision is given (a negative '*' precision
	 * counts as omitted, so '0' applies again). */
	EXPECT_PRINT("  -00042", "%08.5d", -42);
	EXPECT_PRINT("     042", "%08.3u", 42U);
	EXPECT_PRINT("00042", "%0*.*d", 5, -1, 42);
	EXPECT_PRINT("   00042", "%0*.*d", 8, 5, 42);

	return NULL;
}

/** Kernel-specific behaviour (documented in printf_core.c). */
static const char *test_kernel_specific(void)
{
	/* %p: "0x" and exactly 16 hex digits. */
	EXPECT_PRINT("0x0000000000001234", "%p", (void *) 0x1234);
	EXPECT_PRINT("0x0000000000000000", "%p", NULL);
	EXPECT_PRINT("0xffffffffffffffff", "%p", (void *) UINTPTR_MAX);
	EXPECT_PRINT("0xffffffff80000000", "%p", (void *) 0xffffffff80000000UL);
	EXPECT_PRINT("  0x0000000000001234|", "%20p|", (void *) 0x1234);
	EXPECT_PRINT("0x0000000000001234  |", "%-20p|", (void *) 0x1234);
	EXPECT_PRINT("0x00000000deadbeef", "%.3p", (void *) 0xdeadbeefUL);
	EXPECT_PRINT("0x0000000000000001", "%p", (void *) 1);

	/* NULL strings. */
	EXPECT_PRINT("(null)", "%s", (char *) NULL);
	EXPECT_PRINT("  (null)", "%8s", (char *) NULL);
	EXPECT_PRINT("(null)  |", "%-8s|", (char *) NULL);
	EXPECT_PRINT("(nu", "%.3s", (char *) NULL);

	/* %c and %s ignore the '0' flag; %% ignores everything. */
	EXPECT_PRINT("   ab", "%05s", "ab");
	EXPECT_PRINT("    c", "%05c", 'c');
	EXPECT_PRINT("%", "%5%");
	EXPECT_PRINT("a%b", "a%-05%b");

	/* Unknown conversions are printed literally and take no argument. */
	EXPECT_PRINT("%q", "%q");
	EXPECT_PRINT("a%qb", "a%qb");
	EXPECT_PRINT("%-5q", "%-5q");
	EXPECT_PRINT("%#+ 0-12.34llq", "%#+ 0-12.34llq");
	EXPECT_PRINT("%f 5", "%f %d", 5);
	EXPECT_PRINT("%n 6", "%n %d", 6);
	EXPECT_PRINT("%L", "%L");
	EXPECT_PRINT("%lll", "%lll");
	EXPECT_PRINT("%llld", "%llld", 1);
	EXPECT_PRINT("%hhh", "%hhh");
	EXPECT_PRINT("%", "%");
	EXPECT_PRINT("abc%", "abc%");
	EXPECT_PRINT("%5", "%5");
	EXPECT_PRINT("%-+ #0", "%-+ #0");
	EXPECT_PRINT("%.", "%.");
	EXPECT_PRINT("%l", "%l");
	EXPECT_PRINT("%z", "%z");
	EXPECT_PRINT("1%.*", "%d%.*", 1, 2);
	EXPECT_PRINT("%\x01%\xff", "%\x01%\xff");

	/* Saturated huge precision on a string is still only a maximum. */
	EXPECT_PRINT("abc", "%.99999999999999999999s", "abc");

	return NULL;
}

#pragma GCC diagnostic pop

/** printf_core() callback counting characters and keeping the first few. */
static void count_out(char c, void *data)
{
	char *buf = data;
	size_t n = (size_t) (unsigned char) buf[0];

	if (n + 1 < 16)
		buf[n + 1] = c;
	buf[0] = (char) (n + 1);
}

/** Calls printf_core() with a va_list. */
static int core_call(void (*out)(char, void *), void *data,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = printf_core(out, data, fmt, ap);
	va_end(ap);

	return rc;
}

/** snprintf() truncation, return values and embedded NULs; printf_core(). */
static const char *test_buffers(void)
{
	char buf[16];
	int rc;

	case_idx++;
	memset(buf, FILL_CHAR, sizeof(buf));
	rc = snprintf(buf, 5, "%s", "hello world");
	if (rc != 11 || strcmp(buf, "hell") != 0 || buf[5] != FILL_CHAR)
		FAIL_CASE("snprintf(5, \"hello world\") gave %d '%s'", rc, buf);

	case_idx++;
	memset(buf, FILL_CHAR, sizeof(buf));
	rc = snprintf(buf, 1, "abc");
	if (rc != 3 || buf[0] != '\0' || buf[1] != FILL_CHAR)
		FAIL_CASE("snprintf(1, \"abc\") gave %d", rc);

	case_idx++;
	memset(buf, FILL_CHAR, sizeof(buf));
	rc = snprintf(buf, 0, "abc");
	if (rc != 3 || buf[0] != FILL_CHAR)
		FAIL_CASE("snprintf(0, \"abc\") gave %d or wrote", rc);

	case_idx++;
	rc = snprintf(NULL, 0, "%d", 12345);
	if (rc != 5)
		FAIL_CASE("snprintf(NULL, 0, 12345) gave %d", rc);

	case_idx++;
	memset(buf, FILL_CHAR, sizeof(buf));
	rc = snprintf(buf, 6, "%d", -12345);
	if (rc != 6 || strcmp(buf, "-1234") != 0 || buf[6] != FILL_CHAR)
		FAIL_CASE("snprintf(6, -12345) gave %d '%s'", rc, buf);

	case_idx++;
	memset(buf, FILL_CHAR, sizeof(buf));
	rc = snprintf(buf, 6, "12345");
	if (rc != 5 || strcmp(buf, "12345") != 0 || buf[6] != FILL_CHAR)
		FAIL_CASE("snprintf(6, \"12345\") gave %d '%s'", rc, buf);

	case_idx++;
	memset(buf, FILL_CHAR, sizeof(buf));
	rc = snprintf(buf, 4, "%5d", 42);
	if (rc != 5 || strcmp(buf, "   ") != 0 || buf[4] != FILL_CHAR)
		FAIL_CASE("snprintf(4, %%5d) gave %d '%s'", rc, buf);

	case_idx++;
	memset(buf, FILL_CHAR, sizeof(buf));
	rc = snprintf(buf, 3, "%ld", INT64_MIN);
	if (rc != 20 || strcmp(buf, "-9") != 0 || buf[3] != FILL_CHAR)
		FAIL_CASE("snprintf(3, INT64_MIN) gave %d '%s'", rc, buf);

	/* %c with NUL is output (and counted) like any other character. */
	case_idx++;
	memset(buf, FILL_CHAR, sizeof(buf));
	rc = snprintf(buf, sizeof(buf), "a%cb", 0);
	if (rc != 3 || buf[0] != 'a' || buf[1] != '\0' || buf[2] != 'b' ||
	    buf[3] != '\0')
		FAIL_CASE("snprintf(\"a%%cb\", 0) gave %d", rc);

	/* printf_core() with a custom callback. */
	case_idx++;
	memset(buf, 0, sizeof(buf));
	rc = core_call(count_out, buf, "<%3d|%s>", 7, "xy");
	if (rc != 8 || buf[0] != 8 || memcmp(buf + 1, "<  7|xy>", 8) != 0)
		FAIL_CASE("printf_core() gave %d, %d chars", rc, buf[0]);

	/* printf_core() with a NULL callback only counts. */
	case_idx++;
	rc = core_call(NULL, NULL, "%10s%%", "a");
	if (rc != 11)
		FAIL_CASE("printf_core(NULL) gave %d", rc);

	return NULL;
}

/**
 * Checks one case of the parser @a fn (str_to_uint64() or str_to_int64())
 * whose result has type @a type, printed with @a fmt: the return code, and
 * the value (untouched, the 0x5a fill, on an error).
 */
#define EXPECT_PARSE(fn, type, fmt, str, exp_rc, exp_val) \
	do { \
		type v_ = (type) 0x5a5a5a5a5a5a5a5aUL; \
		case_idx++; \
		int rc_ = fn((str), &v_); \
		type want_ = (exp_rc) == EOK ? (type) (exp_val) : \
		    (type) 0x5a5a5a5a5a5a5a5aUL; \
		if (rc_ != (exp_rc) || v_ != want_) \
			FAIL_CASE(#fn "(\"%s\") gave %d (%s), " fmt "; " \
			    "expected %d, " fmt, (str), rc_, str_error(rc_), \
			    v_, (exp_rc), want_); \
	} while (0)

/** Checks one str_to_uint64() case. */
#define EXPECT_U64(str, exp_rc, exp_val) \
	EXPECT_PARSE(str_to_uint64, uint64_t, "%lu", str, exp_rc, exp_val)

/** Checks one str_to_int64() case. */
#define EXPECT_I64(str, exp_rc, exp_val) \
	EXPECT_PARSE(str_to_int64, int64_t, "%ld", str, exp_rc, exp_val)

/** str_to_uint64() and str_to_int64(). */
static const char *test_str_to_int(void)
{
	EXPECT_U64("0", EOK, 0);
	EXPECT_U64("123", EOK, 123);
	EXPECT_U64("+7", EOK, 7);
	EXPECT_U64("010", EOK, 10);
	EXPECT_U64("0x1F", EOK, 0x1f);
	EXPECT_U64("0XfF", EOK, 0xff);
	EXPECT_U64("0x0", EOK, 0);
	EXPECT_U64("0xDeadBeef", EOK, 0xdeadbeefUL);
	EXPECT_U64("18446744073709551615", EOK, UINT64_MAX);
	EXPECT_U64("0xffffffffffffffff", EOK, UINT64_MAX);
	EXPECT_U64("0x000000000000000000ffffffffffffffff", EOK, UINT64_MAX);
	EXPECT_U64("18446744073709551616", EOVERFLOW, 0);
	EXPECT_U64("99999999999999999999", EOVERFLOW, 0);
	EXPECT_U64("0x10000000000000000", EOVERFLOW, 0);
	EXPECT_U64("", EINVAL, 0);
	EXPECT_U64("abc", EINVAL, 0);
	EXPECT_U64("12a", EINVAL, 0);
	EXPECT_U64("0x", EINVAL, 0);
	EXPECT_U64("0x1g", EINVAL, 0);
	EXPECT_U64(" 1", EINVAL, 0);
	EXPECT_U64("1 ", EINVAL, 0);
	EXPECT_U64("-1", EINVAL, 0);
	EXPECT_U64("+", EINVAL, 0);
	EXPECT_U64("++1", EINVAL, 0);
	EXPECT_U64("ff", EINVAL, 0);
	EXPECT_U64("99999999999999999999x", EINVAL, 0);

	EXPECT_I64("0", EOK, 0);
	EXPECT_I64("-0", EOK, 0);
	EXPECT_I64("42", EOK, 42);
	EXPECT_I64("-42", EOK, -42);
	EXPECT_I64("+42", EOK, 42);
	EXPECT_I64("-0x10", EOK, -16);
	EXPECT_I64("0x7fffffffffffffff", EOK, INT64_MAX);
	EXPECT_I64("-0x8000000000000000", EOK, INT64_MIN);
	EXPECT_I64("9223372036854775807", EOK, INT64_MAX);
	EXPECT_I64("-9223372036854775808", EOK, INT64_MIN);
	EXPECT_I64("-9223372036854775807", EOK, -INT64_MAX);
	EXPECT_I64("9223372036854775808", EOVERFLOW, 0);
	EXPECT_I64("-9223372036854775809", EOVERFLOW, 0);
	EXPECT_I64("0x8000000000000000", EOVERFLOW, 0);
	EXPECT_I64("18446744073709551615", EOVERFLOW, 0);
	EXPECT_I64("-18446744073709551617", EOVERFLOW, 0);
	EXPECT_I64("", EINVAL, 0);
	EXPECT_I64("-", EINVAL, 0);
	EXPECT_I64("--1", EINVAL, 0);
	EXPECT_I64("+-1", EINVAL, 0);
	EXPECT_I64("-abc", EINVAL, 0);
	EXPECT_I64("12-", EINVAL, 0);
	EXPECT_I64("- 1", EINVAL, 0);

	/* NULL arguments are rejected. */
	case_idx++;
	if (str_to_uint64(NULL, NULL) != EINVAL || str_to_int64("1", NULL) !=
	    EINVAL)
		FAIL_CASE("NULL argument not rejected");

	/* Error strings. */
	case_idx++;
	if (strcmp(str_error(12345), "unknown error") != 0 ||
	    strcmp(str_error(EOVERFLOW), "unknown error") == 0)
		FAIL_CASE("str_error() wrong");

	return NULL;
}

/**
 * Tests the formatter and the string-to-integer conversions.
 *
 * @return NULL on success, a static string with the first mismatch otherwise.
 */
const char *test_print1(void)
{
	static const testlib_part_t parts[] = {
		{ NULL, test_standard },
		{ NULL, test_ignored_flags },
		{ NULL, test_buffers },
		{ NULL, test_kernel_specific },
		{ NULL, test_str_to_int },
	};
	const char *err;

	case_idx = 0;

	printf("print1: sample: [%d] [%5s] [%-6x|] [%#o] [%+.3d] [%p] [%lu] "
	    "[%s]\n", -42, "abc", 0xbeefU, 8U, 7,
	    (void *) 0xffffffff80001000UL, UINT64_MAX, "end");

	err = testlib_run_parts("print1", parts, ARRAY_SIZE(parts));
	if (err != NULL)
		return err;

	TPRINTF("print1: %d cases passed\n", case_idx);
	return NULL;
}

/** @file ubsan.c
 * UBSAN runtime (SANITIZE=ubsan; docs/SANITIZERS.md): the handlers GCC's
 * -fsanitize=undefined checks call (__ubsan_handle_*), each printing the
 * kind of undefined behaviour, the source location and the values, then the
 * backtrace; then a panic, or the next report in continue mode. Compiled
 * without instrumentation. The data layouts are the ABI GCC shares with
 * the compiler-rt runtime (ubsan_handlers.h); the code is this kernel's.
 *
 * A location reports once: the handler marks its column (bit 31), as the
 * reference runtime does, so a check in a loop does not flood the console.
 */
#include <debug/sanitize.h>
#include <debug/symtab.h>
#include <proc/thread.h>
#include <cpu.h>
#include <print.h>
#include <panic.h>

typedef struct {
	const char *file;
	uint32_t line;
	uint32_t column;
} src_loc_t;

typedef struct {
	uint16_t kind;   /**< 0 integer, 1 float, 0xffff unknown */
	uint16_t info;   /**< integer: bit 0 signed, bits 1-15 log2(bit width) */
	char name[];
} type_desc_t;

typedef struct { src_loc_t loc; const type_desc_t *type; } overflow_data_t;
typedef struct { src_loc_t loc; const type_desc_t *lhs; const type_desc_t *rhs; } shift_data_t;
typedef struct { src_loc_t loc; const type_desc_t *array; const type_desc_t *index; } oob_data_t;
typedef struct { src_loc_t loc; const type_desc_t *type; uint8_t log_align; uint8_t kind; } mismatch_data_t;
typedef struct { src_loc_t loc; } loc_data_t;
typedef struct { src_loc_t loc; const type_desc_t *type; } vla_data_t;
typedef struct { src_loc_t loc; const type_desc_t *type; } invalid_data_t;
typedef struct { src_loc_t loc; uint8_t kind; } builtin_data_t;
typedef struct { src_loc_t loc; src_loc_t attr_loc; int arg_index; } nonnull_arg_data_t;
typedef struct { src_loc_t attr_loc; } nonnull_ret_data_t;

static bool loc_claim(src_loc_t *loc)
{
	uint32_t old = __atomic_fetch_or(&loc->column, 0x80000000U, __ATOMIC_RELAXED);
	return !(old & 0x80000000U);
}

static bool begin(src_loc_t *loc, const char *kind)
{
	if (loc != NULL && !loc_claim(loc))
		return false;
	if (!san_report_begin(SAN_UBSAN))
		return false;
	if (loc != NULL)
		printf("UBSAN: %s in %s:%u:%u\n", kind, loc->file, loc->line,
		    loc->column & 0x7fffffffU);
	else
		printf("UBSAN: %s\n", kind);
	return true;
}

static void end(const char *kind, uintptr_t ip)
{
	thread_t *t = THREAD;
	printf("by thread %s/%lu on cpu %u at ", t ? t->name : "-",
	    t ? (unsigned long) t->tid : 0UL, CPU ? CPU->id : 0);
	symtab_print_addr(ip);
	printf("\n");
	backtrace_print_from((uintptr_t) __builtin_frame_address(0));
	san_report_end(SAN_UBSAN, kind);
}

static bool type_signed(const type_desc_t *t)
{
	return t->kind == 0 && (t->info & 1);
}

static unsigned type_bits(const type_desc_t *t)
{
	return t->kind == 0 ? 1U << (t->info >> 1) : 0;
}

/** Prints a value of type @a t passed as GCC passes it (inline if it fits a pointer). */
static void print_value(const type_desc_t *t, uintptr_t v)
{
	unsigned bits = type_bits(t);
	if (bits == 0 || bits > 64) {
		printf("(%s value)", t->name);
		return;
	}
	if (type_signed(t)) {
		int64_t s = (int64_t) (v << (64 - bits)) >> (64 - bits);
		printf("%ld", (long) s);
	} else {
		uint64_t u = bits == 64 ? v : v & ((1UL << bits) - 1);
		printf("%lu", (unsigned long) u);
	}
}

static void overflow(overflow_data_t *d, uintptr_t a, uintptr_t b, char op,
    uintptr_t ip)
{
	const char *kind = type_signed(d->type) ? "signed-integer-overflow" :
	    "unsigned-integer-overflow";
	if (!begin(&d->loc, kind))
		return;
	print_value(d->type, a);
	printf(" %c ", op);
	print_value(d->type, b);
	printf(" cannot be represented in type %s\n", d->type->name);
	end(kind, ip);
}

#define RET_IP ((uintptr_t) __builtin_return_address(0))

#define HANDLER(name, ...) \
	void __ubsan_handle_##name(__VA_ARGS__); \
	void __ubsan_handle_##name(__VA_ARGS__)

HANDLER(add_overflow, overflow_data_t *d, uintptr_t a, uintptr_t b)
{
	overflow(d, a, b, '+', RET_IP);
}

HANDLER(sub_overflow, overflow_data_t *d, uintptr_t a, uintptr_t b)
{
	overflow(d, a, b, '-', RET_IP);
}

HANDLER(mul_overflow, overflow_data_t *d, uintptr_t a, uintptr_t b)
{
	overflow(d, a, b, '*', RET_IP);
}

HANDLER(negate_overflow, overflow_data_t *d, uintptr_t a)
{
	if (!begin(&d->loc, "signed-integer-overflow"))
		return;
	printf("negation of ");
	print_value(d->type, a);
	printf(" cannot be represented in type %s\n", d->type->name);
	end("signed-integer-overflow", RET_IP);
}

HANDLER(divrem_overflow, overflow_data_t *d, uintptr_t a, uintptr_t b)
{
	const char *kind = b == 0 ? "division-by-zero" : "signed-integer-overflow";
	if (!begin(&d->loc, kind))
		return;
	if (b == 0) {
		printf("division of ");
		print_value(d->type, a);
		printf(" by zero\n");
	} else {
		printf("division of ");
		print_value(d->type, a);
		printf(" by -1 cannot be represented in type %s\n", d->type->name);
	}
	end(kind, RET_IP);
}

HANDLER(shift_out_of_bounds, shift_data_t *d, uintptr_t lhs, uintptr_t rhs)
{
	if (!begin(&d->loc, "shift-out-of-bounds"))
		return;
	unsigned bits = type_bits(d->lhs);
	int64_t r = type_signed(d->rhs) ? (int64_t) (rhs << (64 - type_bits(d->rhs)))
	    >> (64 - type_bits(d->rhs)) : (int64_t) rhs;
	if (type_signed(d->rhs) && r < 0) {
		printf("shift exponent %ld is negative\n", (long) r);
	} else if ((uint64_t) r >= bits) {
		printf("shift exponent %lu is too large for %u-bit type %s\n",
		    (unsigned long) r, bits, d->lhs->name);
	} else if (type_signed(d->lhs) && (int64_t) (lhs << (64 - bits)) < 0) {
		printf("left shift of negative value ");
		print_value(d->lhs, lhs);
		printf("\n");
	} else {
		printf("left shift of ");
		print_value(d->lhs, lhs);
		printf(" by %lu places cannot be represented in type %s\n",
		    (unsigned long) r, d->lhs->name);
	}
	end("shift-out-of-bounds", RET_IP);
}

HANDLER(out_of_bounds, oob_data_t *d, uintptr_t index)
{
	if (!begin(&d->loc, "array-index-out-of-bounds"))
		return;
	printf("index ");
	print_value(d->index, index);
	printf(" is out of range for type %s\n", d->array->name);
	end("array-index-out-of-bounds", RET_IP);
}

static const char *const mismatch_kinds[] = {
	"load of", "store to", "reference binding to", "member access within",
	"member call on", "constructor call on", "downcast of", "downcast of",
	"upcast of", "cast to virtual base of", "_Nonnull binding to",
	"dynamic operation on",
};

HANDLER(type_mismatch_v1, mismatch_data_t *d, uintptr_t ptr)
{
	uintptr_t align = (uintptr_t) 1 << d->log_align;
	const char *op = d->kind < sizeof(mismatch_kinds) / sizeof(mismatch_kinds[0]) ?
	    mismatch_kinds[d->kind] : "access of";
	if (ptr == 0) {
		if (!begin(&d->loc, "null-pointer-dereference"))
			return;
		printf("%s null pointer of type %s\n", op, d->type->name);
		end("null-pointer-dereference", RET_IP);
	} else if (d->log_align != 0 && (ptr & (align - 1))) {
		if (!begin(&d->loc, "misaligned-access"))
			return;
		printf("%s misaligned address %p for type %s, which requires "
		    "%lu byte alignment\n", op, (void *) ptr, d->type->name,
		    (unsigned long) align);
		end("misaligned-access", RET_IP);
	} else {
		if (!begin(&d->loc, "object-size-mismatch"))
			return;
		printf("%s address %p with insufficient space for an object of "
		    "type %s\n", op, (void *) ptr, d->type->name);
		end("object-size-mismatch", RET_IP);
	}
}

HANDLER(pointer_overflow, loc_data_t *d, uintptr_t base, uintptr_t result)
{
	if (!begin(&d->loc, "pointer-overflow"))
		return;
	if (base == 0 || result == 0)
		printf("applying offset to a null pointer: %p -> %p\n",
		    (void *) base, (void *) result);
	else
		printf("pointer arithmetic on %p overflowed to %p\n",
		    (void *) base, (void *) result);
	end("pointer-overflow", RET_IP);
}

HANDLER(builtin_unreachable, loc_data_t *d)
{
	if (begin(&d->loc, "unreachable")) {
		printf("execution reached __builtin_unreachable()\n");
		end("unreachable", RET_IP);
	}
	panic("UBSAN: execution reached __builtin_unreachable()");
}

HANDLER(missing_return, loc_data_t *d)
{
	if (begin(&d->loc, "missing-return")) {
		printf("execution reached the end of a value-returning function\n");
		end("missing-return", RET_IP);
	}
	panic("UBSAN: missing return");
}

HANDLER(vla_bound_not_positive, vla_data_t *d, uintptr_t bound)
{
	if (!begin(&d->loc, "vla-bound-not-positive"))
		return;
	printf("variable length array bound evaluates to non-positive value ");
	print_value(d->type, bound);
	printf("\n");
	end("vla-bound-not-positive", RET_IP);
}

HANDLER(load_invalid_value, invalid_data_t *d, uintptr_t val)
{
	if (!begin(&d->loc, "invalid-load"))
		return;
	printf("load of value ");
	print_value(d->type, val);
	printf(", which is not a valid value for type %s\n", d->type->name);
	end("invalid-load", RET_IP);
}

HANDLER(invalid_builtin, builtin_data_t *d)
{
	if (!begin(&d->loc, "invalid-builtin-use"))
		return;
	printf("passing zero to %s, which is not a valid argument\n",
	    d->kind == 0 ? "ctz()" : "clz()");
	end("invalid-builtin-use", RET_IP);
}

HANDLER(nonnull_arg, nonnull_arg_data_t *d)
{
	if (!begin(&d->loc, "nonnull-argument"))
		return;
	printf("null pointer passed as argument %d, which is declared to never "
	    "be null\n", d->arg_index);
	end("nonnull-argument", RET_IP);
}

HANDLER(nonnull_return_v1, nonnull_ret_data_t *d, src_loc_t *loc)
{
	if (!begin(loc, "nonnull-return"))
		return;
	printf("null pointer returned from a function declared to never return null\n");
	end("nonnull-return", RET_IP);
}

/** @file page_ht.h
 * The global page hash table: (address-space id, virtual page) -> PTE record.
 *
 * Two back ends, chosen at build time:
 * - CHT (default, `make PAGE_HT=cht`): a concurrent hash table; lookups are
 *   wait-free RCU readers, so every page fault is a lock-free lookup.
 * - locked (`make PAGE_HT=locked`): the previous design, one chained hash table
 *   under a single global spinlock, kept for comparison (chtbench).
 *
 * A page has at most one record. page_mapping_update replaces the record's
 * mapping in place with one atomic exchange of its (frame | flags) word, so a
 * lookup copies either the old or the new mapping, never a mix, and an update
 * racing a remove never brings the page back. Removed records (and, with
 * PTE_REC_FREE_FRAME, their frames) and replaced frames are freed after a
 * grace period.
 */
#ifndef KERN_PAGE_HT_H_
#define KERN_PAGE_HT_H_

#include <typedefs.h>

/*
 * Address spaces are named by their id (as_t.id, unique for the system's
 * lifetime), so the table needs no address-space header: mm/as.c uses this
 * table, and this table does not use mm/as.h. Every @a as_id below is such an
 * id; @a page is a page-aligned user virtual address.
 */

/** PTE record flags. */
#define PTE_REC_PRESENT    (1 << 0)
#define PTE_REC_WRITABLE   (1 << 1)
#define PTE_REC_USER       (1 << 2)
#define PTE_REC_EXEC       (1 << 3)
#define PTE_REC_GLOBAL     (1 << 4)
#define PTE_REC_CACHEABLE  (1 << 5)
#define PTE_REC_ACCESSED   (1 << 6)
#define PTE_REC_DIRTY      (1 << 7)
/** Free the frame together with the record (anonymous memory). */
#define PTE_REC_FREE_FRAME (1 << 8)

/** A copy of a mapping. */
typedef struct {
	uintptr_t frame;   /**< physical address of the frame */
	unsigned flags;    /**< PTE_REC_* */
} pte_t;

/** Initializes the table (BSP, boot, after RCU and the work queue). */
void page_ht_init(void);

/**
 * Inserts a mapping of @a page (page aligned) to @a pte.
 * @return EOK; EEXIST if a mapping exists (then *existing, if not NULL, gets a
 *         copy of it); ENOMEM.
 * Context: any (interrupts may be disabled; never sleeps).
 */
int page_mapping_insert(uint64_t as_id, uintptr_t page, const pte_t *pte,
    pte_t *existing);
/**
 * Removes the mapping of @a page. @return EOK or ENOENT. The record (and its
 * frame with PTE_REC_FREE_FRAME) is freed after a grace period. Any context.
 */
int page_mapping_remove(uint64_t as_id, uintptr_t page);
/**
 * Finds the mapping of @a page and copies it to @a out. @return true if found.
 * Any context; wait-free with the CHT back end.
 */
bool page_mapping_find(uint64_t as_id, uintptr_t page, pte_t *out);
/**
 * Replaces the mapping of @a page with @a pte, in place (one atomic exchange;
 * concurrent updates and removes of the page are linearizable, lookups stay
 * lock-free). If the replaced mapping owned its frame (PTE_REC_FREE_FRAME) and
 * @a pte maps another frame, the old frame is freed after a grace period; with
 * the same frame, @a pte's PTE_REC_FREE_FRAME says who owns it from now on.
 * The hardware page tables are not touched: the caller clears and shoots down
 * the entry of a page whose frame changes.
 * @a pte->frame must be page aligned and @a pte->flags below PAGE_SIZE.
 * @return EOK; ENOENT (no mapping: nothing inserted); ENOMEM.
 * Context: any (interrupts may be disabled; never sleeps).
 */
int page_mapping_update(uint64_t as_id, uintptr_t page, const pte_t *pte);

/**
 * Counts the records of @a page in the table (at most 1 unless the table is
 * broken); for tests. Any context; lock-free with the CHT back end.
 */
size_t page_mapping_count(uint64_t as_id, uintptr_t page);

/** Table state for `page_ht` and tests. */
typedef struct {
	const char *backend;
	size_t entries;
	size_t buckets;
	uint64_t grows;
	uint64_t shrinks;
	uint64_t lookups;
	uint64_t inserts;
	uint64_t removes;
	/** A resize is requested or running (CHT back end; the locked table
	 * never resizes). */
	bool resizing;
} page_ht_stats_t;

void page_ht_get_stats(page_ht_stats_t *st);
/** Name of the back end built in: "cht" or "locked". */
extern const char *const page_ht_backend;

#endif

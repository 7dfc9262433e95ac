/**
 * OFFSET pages over an exactly counted list that stay cheap at any depth. The total is counted
 * first (index-only); a page in the back half of the list is then read from the far end in the
 * opposite order, so no page skips more than half the list; and the skipped entries are ids from
 * the index (a deferred join), never table rows. The rows are exactly those of the plain
 * `ORDER BY … LIMIT … OFFSET …`, because every list orders by (sort column, id): a total order,
 * whose reverse is exact.
 */
export interface Slice {
  offset: number;
  limit: number;
  /** Read in the opposite order (from the list's end). */
  reversed: boolean;
}

/** The slice to read for `page` of `limit` over `total` rows, or undefined when the page is past the end. */
export function nearEndSlice(total: number, page: number, limit: number): Slice | undefined {
  const offset = (page - 1) * limit;
  if (offset >= total) return undefined;
  const take = Math.min(limit, total - offset);
  const fromEnd = total - offset - take;
  return fromEnd < offset ? { offset: fromEnd, limit: take, reversed: true } : { offset, limit: take, reversed: false };
}

/**
 * A page whose filter must test every one of the owner's entries anyway (a search: no index orders
 * its matches), read in one statement that also counts them: `count(*) over ()` beside each id, so
 * the owner's entries are read once, not once for the total and again for the page. `rows` is that
 * statement at the page's offset; `countAll` counts when the page is past the end (no row to carry
 * the total). Page 1 with no row means no match at all.
 */
export async function pageWithTotal(
  rows: Promise<Array<{ id: string; total: number | string }>>,
  page: number,
  countAll: () => Promise<number>,
): Promise<{ ids: string[]; total: number }> {
  const found = await rows;
  if (found.length > 0) return { ids: found.map((r) => r.id), total: Number(found[0]!.total) };
  return { ids: [], total: page === 1 ? 0 : await countAll() };
}

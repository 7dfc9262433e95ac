import { type AnyColumn, type SQL, sql } from 'drizzle-orm';

/** `text` as a LIKE pattern matching it anywhere: its own `%`, `_` and `\` taken literally. */
export const containingPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Whether `column` contains `text` in any case: exactly ILIKE's match (which lower-cases both sides
 * too), written so the lists' covering indexes answer it from their stored `lower(column)` without
 * reading the table or lower-casing every row again (migration 0043_list_search_covering_indexes).
 */
export const containsAnyCase = (column: AnyColumn, text: string): SQL =>
  sql`lower(${column}) like lower(${containingPattern(text)})`;

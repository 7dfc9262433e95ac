import { badInput } from './errors.js';

/** Page numbers start at 1; `limit` is 1 to `max`. Anything else is a 400 naming the parameter. */
export function checkPage(page: number, limit: number, max: number): void {
  if (!Number.isInteger(page) || page < 1) throw badInput('page', 'page must be a whole number from 1.');
  if (!Number.isInteger(limit) || limit < 1 || limit > max)
    throw badInput('limit', `limit must be a whole number from 1 to ${max}.`);
}

export interface PageBlock {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
  hasNext: boolean;
  hasPrev: boolean;
}

/** The seed's pagination block around `rows` under `key`. */
export function paged<K extends string, T>(
  key: K,
  rows: T[],
  total: number,
  page: number,
  limit: number,
): Record<K, T[]> & PageBlock {
  const totalPages = Math.ceil(total / limit);
  return { [key]: rows, page, limit, total, totalPages, hasNext: page < totalPages, hasPrev: page > 1 } as Record<
    K,
    T[]
  > &
    PageBlock;
}

/**
 * Provider reference data (offramp assets, the bills catalogue, bank lists) kept for `ttlMs`:
 * it changes rarely and every request would otherwise ask the provider again. Concurrent callers
 * share one load; a failed load is forgotten, so the next call asks again.
 */
export class ReferenceCache {
  private readonly entries = new Map<string, { at: number; value: Promise<unknown> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.value as Promise<T>;
    const value = load();
    this.entries.set(key, { at: this.now(), value });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }
}

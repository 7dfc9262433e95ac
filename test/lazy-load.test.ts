import { describe, expect, it } from 'vitest';
import { lazyLoad } from '../src/domain/lazy-load.js';

describe('lazyLoad', () => {
  it('loads once for concurrent and later calls', async () => {
    let loads = 0;
    const value = lazyLoad(async () => ++loads);
    expect(await Promise.all([value(), value()])).toEqual([1, 1]);
    expect(await value()).toBe(1);
    expect(loads).toBe(1);
  });

  it('forgets a failed load, so the next call tries again', async () => {
    let calls = 0;
    const value = lazyLoad(async () => {
      calls++;
      if (calls === 1) throw new Error('not yet');
      return 'loaded';
    });
    await expect(value()).rejects.toThrow('not yet');
    expect(await value()).toBe('loaded');
    expect(calls).toBe(2);
  });
});

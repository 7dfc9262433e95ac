import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { tuneGarbageCollector } from '../src/gc-tuning.js';

describe('garbage collector tuning', () => {
  it('lets the heap double past what a full collection kept, unless told otherwise', () => {
    expect(loadConfig({}).GC_HEAP_GROWING_PERCENT).toBe(100);
    expect(loadConfig({ GC_HEAP_GROWING_PERCENT: '0' }).GC_HEAP_GROWING_PERCENT).toBe(0);
    expect(() => loadConfig({ GC_HEAP_GROWING_PERCENT: '-1' })).toThrow(/GC_HEAP_GROWING_PERCENT/);
    expect(() => loadConfig({ GC_HEAP_GROWING_PERCENT: '401' })).toThrow(/GC_HEAP_GROWING_PERCENT/);
  });

  it("sets V8's growing factor, and leaves V8's own at 0", () => {
    const set: string[] = [];
    tuneGarbageCollector(100, (flags) => set.push(flags), []);
    tuneGarbageCollector(0, (flags) => set.push(flags), []);
    expect(set).toEqual(['--heap-growing-percent=100']);
  });

  it("leaves a factor given on node's command line alone", () => {
    const set: string[] = [];
    tuneGarbageCollector(100, (flags) => set.push(flags), ['--heap-growing-percent=50']);
    tuneGarbageCollector(100, (flags) => set.push(flags), ['--heap_growing_percent=50']);
    expect(set).toEqual([]);
  });
});

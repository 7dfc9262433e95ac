import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { tuneGarbageCollector, YOUNG_GENERATION_ARGS, YOUNG_GENERATION_FLAGS } from '../src/gc-tuning.js';

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

describe('the young generation', () => {
  it('is sized alike wherever the gateway starts: npm start, the image, its check, the money and start-up benches', async () => {
    const { readFileSync } = await import('node:fs');
    const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
    const start = JSON.parse(read('package.json')).scripts.start as string;
    expect(start).toContain(`node ${YOUNG_GENERATION_ARGS} `);
    const cmd = ['node', ...YOUNG_GENERATION_FLAGS, 'dist/src/main.js'].map((arg) => `"${arg}"`).join(', ');
    expect(read('Dockerfile')).toContain(`CMD [${cmd}]`);
    expect(read('.ci/check-image.sh')).toContain(`node ${YOUNG_GENERATION_ARGS} dist/src/main.js`);
    expect(read('.ci/check-image.sh')).not.toMatch(/node (--max-semi-space-size=\d+ )?dist\/src\/main\.js/);
    expect(read('scripts/bench/harness/pinning.ts')).toContain('[...YOUNG_GENERATION_FLAGS]');
    expect(read('scripts/bench/startup.ts')).toContain('spawn(process.execPath, [...YOUNG_GENERATION_FLAGS, ');
  });
});

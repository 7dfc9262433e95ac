import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DescriptorWriter, LineBatches, logWriterStats } from '../../src/observability/log-writer.js';
import { registry } from '../../src/observability/metrics.js';

const sink = () => {
  const writes: string[] = [];
  return { writes, write: (text: string) => writes.push(text), flushSync: vi.fn() };
};

/**
 * Runs a fixture with its stdout on a pipe; `read: false` leaves the pipe unread until the child
 * exits. `bundled`: built with esbuild and run by plain node, because tsx reads process.stdout at
 * start (making it non-blocking), which would hide whether the writer does so itself.
 */
async function runFixture(fixture: string, { read, bundled = false }: { read: boolean; bundled?: boolean }) {
  let args = ['--import', 'tsx', fixture];
  let bundle: string | undefined;
  if (bundled) {
    // Inside the repository, so the bundle's packages resolve from its node_modules.
    const dir = join('node_modules', '.cache', 'log-writer-test');
    mkdirSync(dir, { recursive: true });
    const outfile = join(dir, `${process.pid}-${Date.now()}.mjs`);
    await build({
      entryPoints: [fixture],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'error',
    });
    args = [outfile];
    bundle = outfile;
  }
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  if (!read) child.stdout.pause();
  child.on('exit', () => {
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stdout.resume();
  });
  if (read) child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  // 'close' comes after the last byte of both pipes is read; 'exit' may come before.
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      if (bundle) rmSync(bundle, { force: true });
      resolve({ code, stdout: Buffer.concat(stdout).toString(), stderr });
    }),
  );
}

const lineNumbers = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{') && line.endsWith('}'))
    .map((line) => (JSON.parse(line) as { n: number }).n);

/**
 * A writeTo that takes at most `chunk` bytes a call; answers EAGAIN while `full` is set or while
 * `busyCalls` lasts, and EPIPE while `gone` is set; `fullAfter` sets `full` once a call has taken bytes.
 */
function fakeDescriptor(chunk: number) {
  const state = { written: '', full: false, gone: false, busyCalls: 0, fullAfter: false };
  const writeTo = (_fd: number, bytes: Buffer) => {
    if (state.gone) throw Object.assign(new Error('EPIPE'), { code: 'EPIPE' });
    if (state.full || state.busyCalls > 0) {
      state.busyCalls = Math.max(0, state.busyCalls - 1);
      throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
    }
    const taken = bytes.subarray(0, chunk);
    state.written += taken.toString();
    if (state.fullAfter) state.full = true;
    return taken.length;
  };
  return { state, writeTo };
}

describe('log line batches', () => {
  afterEach(() => vi.useRealTimers());

  it('hands lines over as one string once they reach the batch size, in order', () => {
    const out = sink();
    const batches = new LineBatches(out, 30, 250);
    batches.write('{"n":1}\n');
    batches.write('{"n":2}\n');
    batches.write('{"n":3}\n');
    expect(out.writes).toEqual([]);
    batches.write('{"n":4}\n');
    expect(out.writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n']);
    batches.end();
  });

  it('hands a partial batch over at the flush interval, and at a synchronous flush', () => {
    vi.useFakeTimers();
    const out = sink();
    const batches = new LineBatches(out, 4096, 250);
    batches.write('{"n":1}\n');
    vi.advanceTimersByTime(249);
    expect(out.writes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(out.writes).toEqual(['{"n":1}\n']);
    batches.write('{"n":2}\n');
    batches.flushSync();
    expect(out.writes).toEqual(['{"n":1}\n', '{"n":2}\n']);
    expect(out.flushSync).toHaveBeenCalledOnce();
    batches.end();
  });
});

describe('descriptor writer', () => {
  afterEach(() => vi.useRealTimers());
  const options = { maxHeldBytes: 64, retryMs: 10, exitWaitMs: 50 };

  it('writes on from where a partial write stopped, before anything newer', () => {
    vi.useFakeTimers();
    const fd = fakeDescriptor(5);
    const writer = new DescriptorWriter(1, options, fd.writeTo);
    fd.state.fullAfter = true;
    writer.write('{"n":1}\n');
    expect(fd.state.written).toBe('{"n":');
    writer.write('{"n":2}\n');
    fd.state.full = false;
    fd.state.fullAfter = false;
    vi.advanceTimersByTime(10);
    expect(fd.state.written).toBe('{"n":1}\n{"n":2}\n');
  });

  it('holds what a full pipe refused and writes it on the retry, calling flush callbacks once written', () => {
    vi.useFakeTimers();
    const fd = fakeDescriptor(1000);
    const writer = new DescriptorWriter(1, options, fd.writeTo);
    fd.state.full = true;
    writer.write('{"n":1}\n');
    const flushed = vi.fn();
    writer.flush(flushed);
    writer.write('{"n":2}\n');
    expect(fd.state.written).toBe('');
    vi.advanceTimersByTime(10);
    expect(fd.state.written).toBe('');
    fd.state.full = false;
    vi.advanceTimersByTime(10);
    expect(fd.state.written).toBe('{"n":1}\n{"n":2}\n');
    expect(flushed).toHaveBeenCalledOnce();
  });

  it('drops and counts what is past the bound while the reader is behind, and what a gone reader cannot take', async () => {
    vi.useFakeTimers();
    const fd = fakeDescriptor(1000);
    const writer = new DescriptorWriter(1, options, fd.writeTo);
    const before = logWriterStats.droppedBytes;
    fd.state.full = true;
    const line = `${'x'.repeat(30)}\n`;
    expect(writer.write(line)).toBe(true);
    expect(writer.write(line)).toBe(true);
    expect(writer.write(line)).toBe(false);
    expect(logWriterStats.droppedBytes - before).toBe(31);
    const flushed = vi.fn();
    writer.flush(flushed);
    fd.state.full = false;
    fd.state.gone = true;
    vi.advanceTimersByTime(10);
    expect(logWriterStats.droppedBytes - before).toBe(93);
    expect(flushed).toHaveBeenCalledOnce();
    fd.state.gone = false;
    writer.write('{"n":3}\n');
    expect(fd.state.written).toBe('{"n":3}\n');
    // /metrics reports what was dropped.
    vi.useRealTimers();
    const scraped = await registry.getSingleMetricAsString('gateway_log_bytes_dropped_total');
    expect(Number(scraped.match(/gateway_log_bytes_dropped_total (\d+)/)?.[1])).toBeGreaterThanOrEqual(93);
  });

  it('takes one batch longer than the bound when nothing waits', () => {
    const fd = fakeDescriptor(1000);
    const writer = new DescriptorWriter(1, options, fd.writeTo);
    const long = `${'y'.repeat(200)}\n`;
    expect(writer.write(long)).toBe(true);
    expect(fd.state.written).toBe(long);
  });

  it('starts a new line after the rest of a partly written line was dropped', () => {
    const fd = fakeDescriptor(4);
    const writer = new DescriptorWriter(1, options, fd.writeTo);
    fd.state.fullAfter = true;
    writer.write('{"n":1}\n');
    fd.state.full = false;
    fd.state.fullAfter = false;
    fd.state.gone = true;
    writer.flushSync();
    fd.state.gone = false;
    writer.write('{"n":2}\n');
    writer.flushSync();
    expect(fd.state.written).toBe('{"n"\n{"n":2}\n');
  });

  it('a synchronous flush (pino after a fatal line) writes what it can now and never waits', () => {
    vi.useFakeTimers();
    const fd = fakeDescriptor(1000);
    const writer = new DescriptorWriter(1, { ...options, exitWaitMs: 10_000 }, fd.writeTo);
    fd.state.full = true;
    writer.write('{"n":1}\n');
    const before = logWriterStats.droppedBytes;
    const started = performance.now();
    writer.flushSync();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(logWriterStats.droppedBytes).toBe(before);
    fd.state.full = false;
    vi.advanceTimersByTime(10);
    expect(fd.state.written).toBe('{"n":1}\n');
  });

  it('at exit waits for a pipe that empties, and writes everything', () => {
    const fd = fakeDescriptor(1000);
    const writer = new DescriptorWriter(1, { ...options, exitWaitMs: 5_000 }, fd.writeTo);
    fd.state.full = true;
    writer.write('{"n":1}\n');
    fd.state.full = false;
    fd.state.busyCalls = 5;
    writer.flushAtExit();
    expect(fd.state.written).toBe('{"n":1}\n');
  });

  it('at exit waits a bounded time for a full pipe, then drops the rest', () => {
    const fd = fakeDescriptor(1000);
    const writer = new DescriptorWriter(1, options, fd.writeTo);
    fd.state.full = true;
    writer.write('{"n":1}\n');
    const before = logWriterStats.droppedBytes;
    const started = performance.now();
    writer.flushAtExit();
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
    expect(logWriterStats.droppedBytes - before).toBe(8);
  });

  it('at exit waits once for a full pipe, however many batchers share the writer', () => {
    const fd = fakeDescriptor(1000);
    const writer = new DescriptorWriter(1, { ...options, exitWaitMs: 200 }, fd.writeTo);
    const batchers = [1, 2, 3].map(() => new LineBatches(writer, 1_000_000, 60_000));
    fd.state.full = true;
    batchers.forEach((batcher, n) => batcher.write(`{"n":${n}}\n`));
    const before = logWriterStats.droppedBytes;
    const started = performance.now();
    for (const batcher of batchers) batcher.flushAtExit();
    const waited = performance.now() - started;
    for (const batcher of batchers) batcher.end();
    expect(waited).toBeGreaterThanOrEqual(200);
    // Three waits would be 600 ms.
    expect(waited).toBeLessThan(550);
    expect(logWriterStats.droppedBytes - before).toBe(24);
  });

  it('writes every line, in order, of a process that exits at once after logging', async () => {
    for (let run = 0; run < 3; run++) {
      const { code, stdout } = await runFixture('test/observability/log-writer-exit.fixture.ts', { read: true });
      expect(code).toBe(0);
      expect(lineNumbers(stdout)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    }
  });

  it('keeps the event loop running and its memory bounded when standard output is not read', async () => {
    const { code, stdout, stderr } = await runFixture('test/observability/log-writer-stuck.fixture.ts', {
      read: false,
      bundled: true,
    });
    expect(code).toBe(0);
    const report = JSON.parse(stderr.trim().split('\n').at(-1)!) as {
      ticks: number;
      droppedBytes: number;
      heldMiB: number;
      nonBlocking?: { before: boolean; after: boolean };
    };
    // stdout began blocking and the writer made it non-blocking (Linux: /proc/self/fdinfo).
    if (report.nonBlocking) expect(report.nonBlocking).toEqual({ before: false, after: true });
    expect(report.droppedBytes).toBeGreaterThan(0);
    expect(report.ticks).toBeGreaterThan(0);
    // About 96 MiB were logged; what waits is bounded at 32 MiB.
    expect(report.heldMiB).toBeLessThan(48);
    // What the reader got afterwards is whole lines in order, the oldest first.
    const received = lineNumbers(stdout);
    expect(received[0]).toBe(0);
    expect(received.every((n, i) => i === 0 || n > received[i - 1]!)).toBe(true);
  });
});

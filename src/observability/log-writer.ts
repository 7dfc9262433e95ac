import { fstatSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { DestinationStream } from 'pino';

/** What a batch is handed to: a DescriptorWriter, or a test's fake. */
export interface LineSink {
  write(text: string): unknown;
  flush?(callback?: (error?: Error) => void): void;
  /** Writes what it can now, without waiting (pino calls it after a fatal line). */
  flushSync?(): void;
  /** At `exit`: writes what it holds, waiting a bounded time for a slow reader. */
  flushAtExit?(): void;
  end?(): void;
}

/** Bytes of log lines that could not be written (reader gone, or too far behind); /metrics reads it. */
export const logWriterStats = { droppedBytes: 0 };

/** Every batcher made, so the process's exit writes what each still holds. */
const batchers = new Set<LineBatches>();
let exitHooked = false;

/**
 * Log lines gathered into batches of at least `minLength` characters, each handed to the sink as one
 * string. SonicBoom batches on its own, but it appends each line to a growing string and measures
 * that string's UTF-8 length on every write, which for 4 KiB batches cost more than the line's JSON:
 * joining an array once per batch costs a fraction of it. A line waits at most `flushMs` here.
 */
export class LineBatches {
  #lines: string[] = [];
  #chars = 0;
  /** Armed by the first line of a batch only: an idle process has no timer waking it for nothing. */
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sink: LineSink,
    private readonly minLength: number,
    private readonly flushMs: number,
  ) {
    batchers.add(this);
    if (!exitHooked) {
      exitHooked = true;
      // At `exit` nothing asynchronous runs any more: each sink writes what it holds synchronously.
      // (After the exit listeners registered before this one, which may still log.)
      process.on('exit', () => {
        for (const batcher of batchers) batcher.flushAtExit();
      });
    }
  }

  write(line: string): boolean {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= this.minLength) this.handOver();
    else if (!this.#timer) this.#timer = setTimeout(() => this.handOver(), this.flushMs).unref();
    return true;
  }

  /** Hands the lines held to the sink as one string. */
  handOver(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#lines.length === 0) return;
    const text = this.#lines.length === 1 ? this.#lines[0]! : this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    this.sink.write(text);
  }

  flush(callback?: (error?: Error) => void): void {
    this.handOver();
    if (this.sink.flush) this.sink.flush(callback);
    else callback?.();
  }

  flushSync(): void {
    this.handOver();
    this.sink.flushSync?.();
  }

  flushAtExit(): void {
    this.handOver();
    if (this.sink.flushAtExit) this.sink.flushAtExit();
    else this.sink.flushSync?.();
  }

  end(): void {
    this.handOver();
    batchers.delete(this);
    this.sink.end?.();
  }
}

type WriteSync = (fd: number, bytes: Buffer) => number;

const sleepOneMs = (() => {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  return () => Atomics.wait(cell, 0, 0, 1);
})();

const NEWLINE = 10;

/**
 * Batches written to a file descriptor with writeSync, so that what has been written is known at every
 * moment and nothing is ever in flight. pino's asynchronous writer (SonicBoom) hands each write to
 * libuv's thread pool: a write still there, or waiting 100 ms to retry after EAGAIN, when the process
 * exits was lost (SonicBoom's exit flush skips the buffer it is writing), and that buffer held the
 * oldest lines. A batch is some 16 KiB, so one system call per ~50 request lines, on the event loop
 * without a thread hand-over.
 *
 * On a non-blocking descriptor (batchedStdout makes a pipe or socket one) a full pipe answers EAGAIN
 * instead of blocking: what is left waits and is retried every `retryMs`; past `maxHeldBytes` (a reader
 * that stopped reading) new batches are dropped and counted instead of growing the heap. Only at exit
 * is the rest written synchronously, waiting up to `exitWaitMs` for the reader. Lines stay whole: a
 * batch is written on from where a partial write stopped, and when bytes after a partial write are
 * dropped (the reader gone, a disk error) the next write starts on a new line.
 */
export class DescriptorWriter implements LineSink {
  #held: Buffer[] = [];
  #heldBytes = 0;
  #retry: NodeJS.Timeout | undefined;
  #flushed: Array<(error?: Error) => void> = [];
  /** The last byte written ended in the middle of a line. */
  #midLine = false;
  /** Bytes of a line already begun were dropped: the next write ends that line first. */
  #torn = false;
  /** When the exit's wait for the reader ends (set by the first flushAtExit). */
  #exitDeadline: number | undefined;

  constructor(
    private readonly fd: number,
    private readonly options: { maxHeldBytes: number; retryMs: number; exitWaitMs: number },
    private readonly writeTo: WriteSync = writeSync,
  ) {}

  write(text: string): boolean {
    const bytes = Buffer.from(this.#torn ? `\n${text}` : text);
    this.#torn = false;
    // One batch is always taken when nothing waits, however long; the bound is on what waits.
    if (this.#held.length > 0 && this.#heldBytes + bytes.length > this.options.maxHeldBytes) {
      logWriterStats.droppedBytes += bytes.length;
      return false;
    }
    this.#held.push(bytes);
    this.#heldBytes += bytes.length;
    if (this.#retry === undefined) this.#writeOrRetry();
    return true;
  }

  flush(callback?: (error?: Error) => void): void {
    if (callback) this.#flushed.push(callback);
    if (this.#retry === undefined) this.#writeOrRetry();
  }

  /** One attempt, no waiting: a live process is never held up by its reader (a retry stays due). */
  flushSync(): void {
    if (this.#writeHeld()) {
      clearTimeout(this.#retry);
      this.#retry = undefined;
    } else if (this.#retry === undefined) this.#retryLater();
  }

  /**
   * At exit: writes everything, waiting up to `exitWaitMs` for a full pipe, then drops the rest.
   * Every batcher sharing this writer calls it at exit: they share the one wait, counted from the
   * first call, so a stuck reader holds the exit `exitWaitMs` however many batchers there are.
   */
  flushAtExit(): void {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#exitDeadline ??= performance.now() + this.options.exitWaitMs;
    const deadline = this.#exitDeadline;
    while (!this.#writeHeld()) {
      if (performance.now() >= deadline) {
        this.#drop();
        return;
      }
      sleepOneMs();
    }
  }

  /** A batcher that ends leaves the writer to the others (it is shared): no waiting until exit. */
  end(): void {
    this.flushSync();
  }

  #writeOrRetry(): void {
    if (!this.#writeHeld()) this.#retryLater();
  }

  #retryLater(): void {
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#writeOrRetry();
    }, this.options.retryMs).unref();
  }

  /** Writes what is held, in order, until all is written (true) or the descriptor would block (false). */
  #writeHeld(): boolean {
    while (this.#held.length > 0) {
      const head = this.#held[0]!;
      let written: number;
      try {
        written = this.writeTo(this.fd, head);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return false;
        // EPIPE, EBADF, ENOSPC…: nothing held can be written now.
        this.#drop();
        return true;
      }
      if (written > 0) this.#midLine = head[written - 1] !== NEWLINE;
      this.#heldBytes -= written;
      if (written === head.length) this.#held.shift();
      else this.#held[0] = head.subarray(written);
    }
    this.#settleFlushes();
    return true;
  }

  /** Drops everything held (counted), and tells whoever waits for a flush. */
  #drop(): void {
    logWriterStats.droppedBytes += this.#heldBytes;
    this.#held = [];
    this.#heldBytes = 0;
    if (this.#midLine) this.#torn = true;
    this.#midLine = false;
    this.#settleFlushes();
  }

  #settleFlushes(): void {
    const flushed = this.#flushed;
    this.#flushed = [];
    for (const callback of flushed) callback();
  }
}

/** Standard output's one writer per process: batchers sharing it never interleave their batches. */
let stdoutWriter: DescriptorWriter | undefined;

/**
 * Where the gateway's own log lines go when no stream is given: standard output, in batches of about
 * 16 KiB (some 50 request lines) instead of one write per line, each written by DescriptorWriter. A
 * line waits at most 250 ms for its batch; what is left is written when the process exits.
 */
export function batchedStdout(): DestinationStream {
  if (!stdoutWriter) {
    const stdout = fstatSync(1);
    // Node makes a pipe or socket non-blocking when process.stdout is first read (as any console.log
    // does); reading it here makes that so from the start, so a reader that stops reading fills the
    // pipe and gets EAGAIN answered, instead of blocking the event loop. A regular file or a terminal
    // is written as any file is: a write waits for a slow disk or a paused terminal.
    if (stdout.isFIFO() || stdout.isSocket()) void process.stdout;
    stdoutWriter = new DescriptorWriter(1, { maxHeldBytes: 32 * 1024 * 1024, retryMs: 10, exitWaitMs: 3_000 });
  }
  return new LineBatches(stdoutWriter, 16_384, 250);
}

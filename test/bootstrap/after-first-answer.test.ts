import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startAfterFirstAnswer } from '../../src/bootstrap/after-first-answer.js';
import { waitUntil } from '../helpers/wait.js';

/** A server whose handler answers only when the test says so, recording what happened in order. */
function serverWithLog(log: string[]) {
  let answer: (() => void) | undefined;
  const server = createServer((_request, response) => {
    log.push('request');
    answer = () => {
      log.push('answered');
      response.end('ok');
    };
  });
  return { server, answer: () => answer?.() };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function listening(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const work = (log: string[]) => () => {
  log.push('started');
  return { stop: async () => void log.push('stopped') };
};

describe('background work started after the first answer', () => {
  it('starts once the first request has been answered, not when it arrives', async () => {
    const log: string[] = [];
    const { server, answer } = serverWithLog(log);
    const url = await listening(server);
    startAfterFirstAnswer(server, 60_000, work(log));
    const reply = fetch(url).then((r) => r.text());
    await waitUntil(() => log.includes('request'), 10_000);
    expect(log).toEqual(['request']);
    answer();
    expect(await reply).toBe('ok');
    await waitUntil(() => log.includes('started'), 10_000);
    expect(log).toEqual(['request', 'answered', 'started']);
  });

  it('starts after the grace when no request comes, and only once', async () => {
    const log: string[] = [];
    const { server, answer } = serverWithLog(log);
    const url = await listening(server);
    startAfterFirstAnswer(server, 20, work(log));
    await waitUntil(() => log.includes('started'), 10_000);
    const reply = fetch(url).then((r) => r.text());
    await waitUntil(() => log.includes('request'), 10_000);
    answer();
    await reply;
    expect(log.filter((entry) => entry === 'started')).toHaveLength(1);
  });

  it('starts when the first client goes away before its answer', async () => {
    const log: string[] = [];
    const { server } = serverWithLog(log);
    const url = await listening(server);
    startAfterFirstAnswer(server, 60_000, work(log));
    const abort = new AbortController();
    const reply = fetch(url, { signal: abort.signal }).catch(() => 'aborted');
    await waitUntil(() => log.includes('request'), 10_000);
    abort.abort();
    expect(await reply).toBe('aborted');
    await waitUntil(() => log.includes('started'), 10_000);
  });

  it('never starts work that shutdown stopped first, and stops work that started', async () => {
    const log: string[] = [];
    const { server, answer } = serverWithLog(log);
    const url = await listening(server);
    // The grace's timer, past its time, under fake timers: stopped first, it starts nothing.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const early = startAfterFirstAnswer(server, 20, work(log));
      await early.stop(0);
      vi.advanceTimersByTime(1_000);
    } finally {
      vi.useRealTimers();
    }
    const reply = fetch(url).then((r) => r.text());
    await waitUntil(() => log.includes('request'), 10_000);
    answer();
    await reply;
    expect(log).not.toContain('started');

    const late = startAfterFirstAnswer(server, 20, work(log));
    await waitUntil(() => log.includes('started'), 10_000);
    await late.stop(0);
    expect(log.slice(-2)).toEqual(['started', 'stopped']);
  });
});

import { describe, expect, it } from 'vitest';
import { WalletTurns } from '../../src/domain/wallet/wallet-turns.js';
import { waitUntil } from '../helpers/wait.js';

/** A write the test ends when it chooses, recording when it began. */
function writes(turns: WalletTurns, began: string[]) {
  const ends = new Map<string, () => void>();
  const start = (wallet: string, name: string, options?: { ahead?: boolean }) =>
    turns.run(
      wallet,
      () =>
        new Promise<void>((resolve) => {
          began.push(name);
          ends.set(name, resolve);
        }),
      options,
    );
  return { start, end: (name: string) => ends.get(name)!() };
}

describe('wallet turns', () => {
  it('lets two of one wallet’s writes in at once, the rest in order, and another wallet’s alongside', async () => {
    const began: string[] = [];
    const { start, end } = writes(new WalletTurns(2), began);
    const all = [start('w1', 'a'), start('w1', 'b'), start('w1', 'c'), start('w1', 'd'), start('w2', 'x')];
    await waitUntil(() => began.length === 3);
    expect(began).toEqual(['a', 'b', 'x']);
    end('b');
    await waitUntil(() => began.length === 4);
    end('a');
    await waitUntil(() => began.length === 5);
    expect(began).toEqual(['a', 'b', 'x', 'c', 'd']);
    for (const name of ['c', 'd', 'x']) end(name);
    await Promise.all(all);
  });

  it('puts a settle (ahead) before the waiting opens, settles among themselves in order', async () => {
    const began: string[] = [];
    const { start, end } = writes(new WalletTurns(1), began);
    const all = [
      start('w', 'open-1'),
      start('w', 'open-2'),
      start('w', 'open-3'),
      start('w', 'settle-1', { ahead: true }),
      start('w', 'settle-2', { ahead: true }),
    ];
    for (let n = 1; n <= 5; n++) {
      await waitUntil(() => began.length === n);
      end(began[n - 1]!);
    }
    await Promise.all(all);
    expect(began).toEqual(['open-1', 'settle-1', 'settle-2', 'open-2', 'open-3']);
  });

  it('gives the turn back when a write fails', async () => {
    const turns = new WalletTurns(1);
    await expect(turns.run('w', async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await turns.run('w', async () => 'next')).toBe('next');
  });
});

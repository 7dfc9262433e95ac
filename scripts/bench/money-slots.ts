/**
 * Distinct wallets for concurrent requests in `npm run bench:money`: the tenants split into
 * disjoint groups, one per connection (autocannon sends one request at a time per connection), so
 * no two requests in flight share a wallet — the same for the gateway and for every peer. Without
 * this, random pairs of 100 tenants at c=16 meet often, and a path that holds its row locks longer
 * waits more for that reason alone.
 */

/** `items` dealt into `count` disjoint groups (item i into group i mod count). */
export function groupsOf<T>(items: readonly T[], count: number, smallest: number): T[][] {
  const groups = Array.from({ length: count }, (_, g) => items.filter((_, i) => i % count === g));
  if (groups.some((group) => group.length < smallest))
    throw new Error(
      `${items.length} tenants cannot give ${count} connections ${smallest} wallet(s) each: fewer connections or more tenants`,
    );
  return groups;
}

const any = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

/** One member of the group, at random. */
export const oneOf = any;

/** Two different members of the group, at random (a sender and a recipient). */
export function pairOf<T>(group: readonly T[]): [T, T] {
  const from = Math.floor(Math.random() * group.length);
  const to = (from + 1 + Math.floor(Math.random() * (group.length - 1))) % group.length;
  return [group[from]!, group[to]!];
}

/**
 * Slots lent to requests of an open-loop load (harness/paced.ts), which are not tied to a
 * connection: a request takes a free slot and gives it back when answered. When every slot is out
 * (more requests in flight than slots), one in use is lent again, and counted: the output says how
 * often two requests in flight may have shared a wallet.
 */
export function slotLender(count: number): { take(): number; give(slot: number): void; shared(): number } {
  const free = Array.from({ length: count }, (_, i) => count - 1 - i);
  const holders = new Array<number>(count).fill(0);
  let sharedCount = 0;
  return {
    take() {
      let slot = free.pop();
      if (slot === undefined) {
        sharedCount++;
        slot = Math.floor(Math.random() * count);
      }
      holders[slot]!++;
      return slot;
    },
    give(slot) {
      holders[slot]!--;
      if (holders[slot] === 0) free.unshift(slot);
    },
    shared: () => sharedCount,
  };
}

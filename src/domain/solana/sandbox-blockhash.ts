import { createHash } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import type { Clock } from '../clock.js';
import { BLOCKHASH_LIFETIME_SLOTS, SLOT_MS } from './blockhash-lifetime.js';

/** Solana's blockhash lifetime, which the sandbox chains keep as the network does. */
export { BLOCKHASH_LIFETIME_SLOTS, BLOCKHASH_MAX_AGE_MS, SLOT_MS } from './blockhash-lifetime.js';

/**
 * Slots ahead of this instance's clock a blockhash may be from (10 s): another instance whose
 * clock runs ahead hands out blockhashes this one has not reached yet, and they are not expired.
 */
export const CLOCK_SKEW_SLOTS = 25n;

const base58 = getBase58Decoder();

/**
 * The sandbox chains' recent blockhashes, from the clock: slot n of a network has a blockhash
 * derived from its name and n, so every instance gives the same one without storing it, and one
 * more than BLOCKHASH_LIFETIME_SLOTS old is unknown. (litesvm's own blockhash never moves, so a
 * transaction signed once could otherwise run again whenever its signature was forgotten.)
 */
export class SandboxBlockhashes {
  /** Recent blockhashes by network: hash → slot for the window's slots up to `newest`. */
  private readonly recent = new Map<string, { newest: bigint; slots: Map<string, bigint> }>();

  constructor(private readonly clock: Clock) {}

  /** The current slot: the sandbox's block height. */
  slot(): bigint {
    return BigInt(Math.floor(this.clock.now().getTime() / SLOT_MS));
  }

  /** The blockhash to sign with now, and the last block height it is good for. */
  latest(network: string): { blockhash: string; lastValidBlockHeight: bigint } {
    const slot = this.slot();
    return { blockhash: blockhashOf(network, slot), lastValidBlockHeight: slot + BLOCKHASH_LIFETIME_SLOTS };
  }

  /** Whether a transaction carrying this blockhash may still run. */
  isRecent(network: string, blockhash: string): boolean {
    const now = this.slot();
    const oldest = now - BLOCKHASH_LIFETIME_SLOTS;
    const newest = now + CLOCK_SKEW_SLOTS;
    let window = this.recent.get(network);
    if (!window) this.recent.set(network, (window = { newest: oldest - 1n, slots: new Map() }));
    if (window.newest < newest) {
      // Add the slots the window gained since last asked, forget the ones it lost.
      for (let slot = window.newest < oldest ? oldest : window.newest + 1n; slot <= newest; slot++)
        window.slots.set(blockhashOf(network, slot), slot);
      window.newest = newest;
      for (const [hash, slot] of window.slots) if (slot < oldest) window.slots.delete(hash);
    }
    const slot = window.slots.get(blockhash);
    return slot !== undefined && slot >= oldest && slot <= newest;
  }
}

function blockhashOf(network: string, slot: bigint): string {
  return base58.decode(createHash('sha256').update(`partner-gateway sandbox blockhash ${network} ${slot}`).digest());
}

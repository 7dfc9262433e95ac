/** A slot lasts about 400 ms on Solana (and as long on the sandbox chains, whose slots follow the clock). */
export const SLOT_MS = 400;
/** Slots a blockhash stays good for after its own. */
export const BLOCKHASH_LIFETIME_SLOTS = 150n;
/**
 * The longest a signed transaction can wait before it is refused as expired (about a minute). On
 * the sandbox chains retention keeps executed signatures far longer (at least a day), so a
 * transaction old enough to have lost its signature record is refused for its blockhash instead.
 */
export const BLOCKHASH_MAX_AGE_MS = Number(BLOCKHASH_LIFETIME_SLOTS + 1n) * SLOT_MS;

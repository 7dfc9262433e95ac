import { ASSOCIATED_TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { ComputeBudgetProgram, type VersionedMessage } from '@solana/web3.js';
import { SIGNATURE_FEE } from './transfer-service.js';

/** Compute units an instruction gets without a SetComputeUnitLimit, and the most a transaction may ask. */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_UNITS = 1_400_000n;
const SET_UNIT_LIMIT = 2;
const SET_UNIT_PRICE = 3;

/**
 * The most a transaction built by someone else (a routing provider's swap) can cost its fee payer in
 * lamports besides what it moves on purpose: the base fee of every signature it carries, the priority
 * fee at its compute-unit price for its whole compute-unit limit (the fee is charged on the limit
 * asked, not the units used), and the rent of every associated token account it creates at the
 * payer's expense (`tokenAccountRent` each). What a chain send holds in the native coin for it,
 * so a send beside it can never spend what it may take.
 */
export function feeCapOf(message: VersionedMessage, payer: string, tokenAccountRent: bigint): bigint {
  const keys = message.staticAccountKeys.map((key) => key.toBase58());
  const budget = ComputeBudgetProgram.programId.toBase58();
  const associatedTokens = ASSOCIATED_TOKEN_PROGRAM_ID.toBase58();
  let limit: bigint | undefined;
  let microLamportsPerUnit = 0n;
  let others = 0n;
  let created = 0n;
  for (const instruction of message.compiledInstructions) {
    const program = keys[instruction.programIdIndex];
    const data = Buffer.from(instruction.data);
    if (program === budget) {
      if (data[0] === SET_UNIT_LIMIT && data.length >= 5) limit = BigInt(data.readUInt32LE(1));
      else if (data[0] === SET_UNIT_PRICE && data.length >= 9) microLamportsPerUnit = data.readBigUInt64LE(1);
      continue;
    }
    others += 1n;
    // Create (no data) and CreateIdempotent ([1]) are paid by their first account; a lookup-table
    // index past the static keys is never the payer, which signs and so is static.
    const creates = data.length === 0 || (data.length === 1 && data[0] === 1);
    if (program === associatedTokens && creates && keys[instruction.accountKeyIndexes[0]!] === payer) created += 1n;
  }
  const units =
    limit ?? (others * DEFAULT_UNITS_PER_INSTRUCTION < MAX_UNITS ? others * DEFAULT_UNITS_PER_INSTRUCTION : MAX_UNITS);
  const priority = (microLamportsPerUnit * units + 999_999n) / 1_000_000n;
  return BigInt(message.header.numRequiredSignatures) * SIGNATURE_FEE + priority + created * tokenAccountRent;
}

import { eq } from 'drizzle-orm';
import { toEventSelector } from 'viem';
import { type ChainSendRow, chainSends } from '../../db/chain-schema.js';
import type { Executor } from '../../db/client.js';
import type { EvmReceipt } from './evm-chain.js';
import { EVM_NATIVE_ASSET } from './exchange-contracts.js';

const TRANSFER = toEventSelector('Transfer(address,address,uint256)');
/** WETH9's event when the router unwraps the last hop's output to forward it. */
const WITHDRAWAL = toEventSelector('Withdrawal(address,uint256)');

const topicOf = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;

/**
 * What a mined swap paid the wallet, from its receipt: the output token's Transfer logs to the
 * wallet, or, for the native coin, WETH9's Withdrawal by the router (it unwraps the last hop's
 * output and forwards it). Stored on the swap's row, which until now held the quote's expectation.
 */
export async function settleSwapOutput(tx: Executor, row: ChainSendRow, receipt: EvmReceipt): Promise<ChainSendRow> {
  let paid = 0n;
  const native = row.outputAsset?.toLowerCase() === EVM_NATIVE_ASSET.toLowerCase();
  for (const log of receipt.logs) {
    if (native) {
      // Only the router unwraps in a router call: its Withdrawal is the native output.
      if (log.topics[0] === WITHDRAWAL) paid += BigInt(log.data);
    } else if (
      log.address.toLowerCase() === row.outputAsset?.toLowerCase() &&
      log.topics[0] === TRANSFER &&
      log.topics[2] === topicOf(row.fromAddress)
    ) {
      paid += BigInt(log.data);
    }
  }
  await tx.update(chainSends).set({ outputAmountRaw: paid }).where(eq(chainSends.id, row.id));
  return { ...row, outputAmountRaw: paid };
}

import type { ChainSendRow } from '../../db/chain-schema.js';
import type { Executor } from '../../db/client.js';
import { chainSendStore } from '../chain/chain-send-store.js';
import { chainSendLifecycles, type KeyAnswer, transitionChainSend } from '../chain/chain-sends.js';
import { formatUnits } from '../money/decimal.js';
import { EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';
import { EVM } from './evm-wallets.js';

/** The job that follows a stored EVM send until it is final (receipts, re-broadcasts, cancels); its id is the send's. */
export const EVM_CONFIRM_JOB = 'evm.confirm';

/** The asset ledger's name for a network's native coin (a token is named by its contract). */
export const NATIVE_ASSET = 'native';

/** Where an EVM transaction can be looked up: the explorer in production, the gateway's own path in sandbox. */
export function evmTxUrl(hash: string, network: EvmNetwork, environment: 'sandbox' | 'production'): string {
  if (environment === 'sandbox') return `/api/v1/evm/${network}/transactions/${hash}`;
  return `${EVM_NETWORK_SPECS[network].explorer}${hash}`;
}

/** `data` of an EVM send's `transaction.*` events. */
export function evmSendEventData(row: ChainSendRow): Record<string, unknown> {
  const network = row.network as EvmNetwork;
  const spec = EVM_NETWORK_SPECS[network];
  return {
    // A swap's legs are told apart by kind: its approval, then its router call.
    type: row.kind === 'swap' ? 'CRYPTO_SWAP' : row.kind === 'approve' ? 'TOKEN_APPROVAL' : 'CRYPTO_TRANSFER',
    kind: row.kind,
    status: row.status.toUpperCase(),
    reference: row.txHash,
    hash: row.txHash,
    network,
    chainId: spec.chainId,
    asset: row.asset ? 'ERC20' : spec.native.symbol,
    token: row.asset,
    amount: formatUnits(row.amountRaw, row.decimals),
    amountRaw: row.amountRaw.toString(),
    nonce: row.nonce?.toString() ?? null,
    from: row.fromAddress,
    to: row.toAddress,
    replaces: row.replaces,
    ...(row.kind === 'swap'
      ? { quoteId: row.quoteId, outputToken: row.outputAsset, outputAmountRaw: row.outputAmountRaw?.toString() ?? null }
      : {}),
    error: row.error,
    txUrl: evmTxUrl(row.txHash, network, row.environment),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** EVM sends carry a nonce: one can end `replaced` when its cancel (same nonce) landed instead. */
export const EVM_LIFECYCLES = chainSendLifecycles<ChainSendRow>(evmSendEventData, { replaceable: true });

/** EVM sends on the core's chain_sends, locking evm_wallets rows. */
export const evmSendStore = chainSendStore({
  family: EVM,
  walletTable: 'evm_wallets',
  confirmJob: EVM_CONFIRM_JOB,
  eventData: evmSendEventData,
});

export function moveEvmSend(
  tx: Executor,
  row: ChainSendRow,
  to: ChainSendRow['status'],
  at: Date,
  changes: { error?: string | null; answer?: KeyAnswer; holdsSettled?: boolean } = {},
): Promise<ChainSendRow | undefined> {
  return transitionChainSend(evmSendStore, EVM_LIFECYCLES, tx, row, to, at, changes);
}

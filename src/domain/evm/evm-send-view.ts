import type { ChainSendRow } from '../../db/chain-schema.js';
import { formatUnits } from '../money/decimal.js';
import { evmTxUrl } from './evm-send-store.js';
import { EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';

/** An outgoing EVM transaction as the API shows it. */
export interface EvmSendView {
  id: string;
  hash: string;
  /** `replaced`: a cancel with its nonce landed instead, so nothing it asked for happened. */
  status: 'pending' | 'confirmed' | 'failed' | 'replaced';
  network: EvmNetwork;
  chainId: number;
  /** A transfer of the native coin or a token, or a swap's leg: a token's approval to the router, or the swap. */
  kind: 'native' | 'token' | 'approve' | 'swap';
  from: string;
  to: string;
  /** The native coin's symbol, or the token's. */
  asset: string;
  /** The ERC-20 contract; null for the native coin. */
  token: string | null;
  amount: string;
  amountRaw: bigint;
  nonce: bigint;
  /** The most the send can cost in native coin (gas limit × fee cap, plus any data fee): what was held for fees. */
  maxFee: string;
  maxFeeRaw: bigint;
  /** The send whose nonce this one cancels. */
  replaces: string | null;
  error: string | null;
  txUrl: string;
  createdAt: Date;
}

export function evmSendView(row: ChainSendRow, symbol: string): EvmSendView {
  const network = row.network as EvmNetwork;
  const spec = EVM_NETWORK_SPECS[network];
  return {
    id: row.id,
    hash: row.txHash,
    status: row.status,
    network,
    chainId: spec.chainId,
    kind: row.kind,
    from: row.fromAddress,
    to: row.toAddress,
    asset: symbol,
    token: row.asset,
    amount: formatUnits(row.amountRaw, row.decimals),
    amountRaw: row.amountRaw,
    nonce: row.nonce ?? 0n,
    maxFee: formatUnits(row.feeRaw, spec.native.decimals),
    maxFeeRaw: row.feeRaw,
    replaces: row.replaces,
    error: row.error,
    txUrl: evmTxUrl(row.txHash, network, row.environment),
    createdAt: row.createdAt,
  };
}

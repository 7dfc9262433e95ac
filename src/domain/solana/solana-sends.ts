import type { TransferView } from './transfer-view.js';

/**
 * An outgoing Solana transaction as the Solana wallet domain gives it, whoever sent it: this
 * gateway's own (every field, a TransferView) or an upstream REST v1 deployment's, of which the
 * spec's token transfer answer shows the signature only. What the spec does not give is optional:
 * the graph served in facade mode leaves those fields out (docs/facade.md).
 */
export type SolanaSend = Pick<TransferView, 'signature'> & Partial<Omit<TransferView, 'signature'>>;

/**
 * A swap that was signed and sent: the spec's swap execution result (signature, txUrl); this
 * gateway's own adds its status, the quote executed and the amounts.
 */
export interface SwapSubmitted {
  signature: string;
  txUrl: string;
  status?: 'pending' | 'confirmed' | 'failed';
  quoteId?: string;
  inputAmount?: string;
  outputAmount?: string;
}

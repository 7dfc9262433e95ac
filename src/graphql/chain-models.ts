import type { EvmSendView } from '../domain/evm/evm-send-view.js';
import type { TransferView } from '../domain/solana/transfer-view.js';

/** A transfer read through the chain-neutral ChainTransfer interface: this gateway's own, of any family. */
export type ChainTransferModel = TransferView | EvmSendView;

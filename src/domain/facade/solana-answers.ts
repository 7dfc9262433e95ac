import { Type } from '@sinclair/typebox';
import { answerShape } from '../upstream/answer-shape.js';

/** `GET /api/v1/solana/address`: the envelope with `data.address`, a base58 public key. */
export const SolanaAddressAnswer = answerShape(
  Type.Object({ data: Type.Object({ address: Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' }) }) }),
);

/** A transaction signature: base58, 64 bytes (87 or 88 characters). */
const Signature = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{80,90}$' });

/** `POST /api/v1/solana/transfer-token`: the envelope with `data.signature`. */
export const TokenTransferAnswer = answerShape(Type.Object({ data: Type.Object({ signature: Signature }) }));

/** `POST /api/v1/solana-exchange/swap-token-to-sol`: the envelope with `data.signature` and `data.txUrl`. */
export const SwapAnswer = answerShape(
  Type.Object({ data: Type.Object({ signature: Signature, txUrl: Type.String({ minLength: 1 }) }) }),
);

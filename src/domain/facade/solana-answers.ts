import { Type } from '@sinclair/typebox';
import { answerShape } from '../upstream/answer-shape.js';

/** `GET /api/v1/solana/address`: the envelope with `data.address`, a base58 public key. */
export const SolanaAddressAnswer = answerShape(
  Type.Object({ data: Type.Object({ address: Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' }) }) }),
);

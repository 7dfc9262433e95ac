import { type TSchema, Type } from '@sinclair/typebox';
import { Maybe, Nullable, RawUnits, SafeInteger } from '../upstream/answer-shape.js';

/**
 * The documented `result` of each Solana JSON-RPC method the production chain (rpc-chain.ts) calls,
 * with the encodings it asks for (base64 accounts, jsonParsed token accounts and transactions), as
 * the chain reads them. Only what it reads is required; web3.js checks the rest of its own fields.
 */

const Signature = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{32,90}$' });
const Address = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' });
/** Account data as `[base64, "base64"]`. */
const Base64Data = Type.Tuple([Type.String(), Type.Literal('base64')]);
const Decimals = Type.Integer({ minimum: 0, maximum: 255 });
const withContext = <T extends TSchema>(value: T) => Type.Object({ value });

const TokenBalance = Type.Object({
  accountIndex: Type.Integer({ minimum: 0 }),
  mint: Address,
  owner: Maybe(Address),
  uiTokenAmount: Type.Object({ amount: RawUnits, decimals: Decimals }),
});

export const RPC_RESULTS: Record<string, TSchema> = {
  getLatestBlockhash: withContext(
    Type.Object({ blockhash: Type.String({ minLength: 1 }), lastValidBlockHeight: SafeInteger }),
  ),
  getBlockHeight: SafeInteger,
  getBalance: withContext(SafeInteger),
  getMinimumBalanceForRentExemption: SafeInteger,
  getAccountInfo: withContext(Nullable(Type.Object({ data: Base64Data, owner: Address }))),
  /** Asked with `encoding: jsonParsed`: each SPL token account's mint and amount. */
  getTokenAccountsByOwner: withContext(
    Type.Array(
      Type.Object({
        pubkey: Address,
        account: Type.Object({
          data: Type.Object({
            parsed: Type.Object({
              info: Type.Object({
                mint: Address,
                tokenAmount: Type.Object({ amount: RawUnits, decimals: Decimals }),
              }),
            }),
          }),
        }),
      }),
    ),
  ),
  sendTransaction: Signature,
  getSignatureStatuses: withContext(
    Type.Array(Nullable(Type.Object({ err: Type.Unknown(), confirmationStatus: Maybe(Type.String()) }))),
  ),
  getSignaturesForAddress: Type.Array(
    Type.Object({ signature: Signature, err: Type.Unknown(), blockTime: Maybe(Type.Integer()) }),
  ),
  /** Asked with `encoding: jsonParsed`: who signed, and the balances before and after. */
  getTransaction: Nullable(
    Type.Object({
      meta: Nullable(
        Type.Object({
          preBalances: Type.Array(SafeInteger),
          postBalances: Type.Array(SafeInteger),
          preTokenBalances: Maybe(Type.Array(TokenBalance)),
          postTokenBalances: Maybe(Type.Array(TokenBalance)),
        }),
      ),
      transaction: Type.Object({
        message: Type.Object({
          accountKeys: Type.Array(Type.Object({ pubkey: Address, signer: Type.Boolean() }), { minItems: 1 }),
        }),
      }),
    }),
  ),
  simulateTransaction: withContext(
    Type.Object({
      err: Type.Unknown(),
      accounts: Maybe(Type.Array(Nullable(Type.Object({ lamports: SafeInteger, owner: Address, data: Base64Data })))),
    }),
  ),
};

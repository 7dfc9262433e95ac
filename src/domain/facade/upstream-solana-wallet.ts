import type { SolanaWalletAddress } from '../solana/custodial-wallets.js';
import type { SolanaSend } from '../solana/solana-sends.js';
import type { SolanaWalletDomain } from '../solana/solana-wallet-domain.js';
import type { TransferInput } from '../solana/transfer-service.js';
import type { Caller } from '../users/user-directory.js';
import { SolanaAddressAnswer, TokenTransferAnswer } from './solana-answers.js';
import type { FacadeKeys } from './facade-keys.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream, credentialOf } from './upstream-json.js';

/**
 * The caller's Solana wallet in a facade: the spec's `GET /api/v1/solana/address` and
 * `POST /api/v1/solana/transfer-token`, asked with the caller's credential. A transfer is sent
 * once with the caller's Idempotency-Key, under the facade's record of it (facade-keys.ts).
 */
export class UpstreamSolanaWallet implements SolanaWalletDomain {
  constructor(
    private readonly upstream: RestV1Upstream,
    /** The facade's record per Idempotency-Key (facade-keys.ts); without it a send is simply sent once. */
    private readonly keys?: FacadeKeys,
  ) {}

  async address(caller: Caller): Promise<SolanaWalletAddress> {
    const answer = await askUpstream(
      this.upstream,
      { method: 'GET', path: '/api/v1/solana/address', credential: credentialOf(caller) },
      SolanaAddressAnswer,
    );
    return { address: answer.value.data.address };
  }

  /** The spec's body: `to`, `tokenMintAddress`, `amount` (a string, as the caller wrote it) and `network`. */
  async transferToken(caller: Caller, input: TransferInput, idempotencyKey: string | undefined): Promise<SolanaSend> {
    const body: Record<string, unknown> = {
      to: input.to,
      tokenMintAddress: input.tokenMintAddress,
      amount: typeof input.amount === 'number' ? String(input.amount) : input.amount,
      ...(input.network ? { network: input.network } : {}),
    };
    const credential = credentialOf(caller);
    const send = async (key: string | undefined) => {
      const answer = await askUpstream(
        this.upstream,
        { method: 'POST', path: '/api/v1/solana/transfer-token', credential, body, idempotencyKey: key },
        TokenTransferAnswer,
      );
      return { signature: answer.value.data.signature };
    };
    if (!this.keys) return send(idempotencyKey);
    return this.keys.run(caller, { operation: 'solana.transferToken', key: idempotencyKey, input: body, send });
  }
}

import type { SolanaWalletAddress } from '../solana/custodial-wallets.js';
import type { SolanaWalletDomain } from '../solana/solana-wallet-domain.js';
import type { Caller } from '../users/user-directory.js';
import { SolanaAddressAnswer } from './solana-answers.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream, credentialOf } from './upstream-json.js';

/** The caller's Solana wallet in a facade: the spec's `GET /api/v1/solana/address`, asked with the caller's credential. */
export class UpstreamSolanaWallet implements SolanaWalletDomain {
  constructor(private readonly upstream: RestV1Upstream) {}

  async address(caller: Caller): Promise<SolanaWalletAddress> {
    const answer = await askUpstream(
      this.upstream,
      { method: 'GET', path: '/api/v1/solana/address', credential: credentialOf(caller) },
      SolanaAddressAnswer,
    );
    return { address: answer.value.data.address };
  }
}

import { Keypair, PublicKey, VersionedTransaction } from '@solana/web3.js';
import type { Tx } from '../../db/client.js';
import type { ChainFamily } from '../chain/family.js';
import { solanaChainAdapter } from './chain.js';
import type { ExchangeProvider } from './exchange-provider.js';
import { SOLANA_NETWORKS, type SolanaNetwork } from './networks.js';
import type { SolanaChains } from './solana-chains.js';
import type { SwapQuoteView } from './swap-quote.js';
import { signTransaction } from './transaction-signing.js';
import type { SolanaTransferRow } from './transfer-store.js';

export type SolanaFamily = ChainFamily<SolanaNetwork, SwapQuoteView, Tx, SolanaTransferRow>;

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * Solana as a chain family of the core (chain/family.ts): ed25519 keys whose address is the base58
 * public key, transactions in Solana's wire format (legacy or v0), the environment's chains
 * (litesvm in sandbox, RPC in production) and exchange provider (the sandbox AMM or Jupiter).
 */
export function solanaFamily(
  chains: SolanaChains,
  exchange: (environment: 'sandbox' | 'production') => ExchangeProvider | undefined,
): SolanaFamily {
  return {
    name: 'solana',
    networks: SOLANA_NETWORKS,
    addresses: {
      generate() {
        const keypair = Keypair.generate();
        return { address: keypair.publicKey.toBase58(), secret: keypair.secretKey };
      },
      isValid(address) {
        if (!BASE58_ADDRESS.test(address)) return false;
        try {
          return new PublicKey(address).toBytes().length === 32;
        } catch {
          return false;
        }
      },
    },
    signing: {
      // VersionedTransaction reads legacy messages too, so one path signs both.
      sign: (prepared, sign) =>
        signTransaction(VersionedTransaction.deserialize(prepared.unsigned), prepared.signer, sign),
    },
    chain: (environment, network) => solanaChainAdapter(chains.chainFor(environment, network)),
    exchange,
  };
}

import type { Database } from '../../db/client.js';
import { lazyLoad } from '../lazy-load.js';
import type { EvmSandboxChain } from './evm-chain.js';
import { checkEvmToken, EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';
import type { SandboxEvmChains, SandboxEvmChainsOptions } from './sandbox-chains.js';
import { genesisContracts } from './sandbox-contracts.js';

/**
 * The sandbox EVM chains, with the VM (ethereumjs, about 40 MiB and a second of start-up on this
 * machine's cores) imported when a network is first used rather than when the process starts: most
 * processes never touch an EVM network, and the embedded default's start and idle memory stay as
 * they were. Each chain object answers its synchronous facts (network, chain id, token addresses)
 * from the catalogue and forwards every call to the real chain once it is loaded.
 */
export function lazySandboxEvmChains(
  db: Database,
  options: SandboxEvmChainsOptions & {
    /** Told after this process's send, faucet grant or mempool release has been mined (blocks to read). */
    onMined?: (network: EvmNetwork) => void;
  } = {},
): SandboxEvmChains {
  const load = lazyLoad(async () => (await import('./sandbox-chains.js')).sandboxEvmChains(db, options));
  const chains = new Map<EvmNetwork, EvmSandboxChain>();
  return {
    chainFor(network) {
      let chain = chains.get(network);
      if (!chain) {
        chain = lazyChain(
          network,
          async () => (await load()).chainFor(network),
          () => options.onMined?.(network),
        );
        chains.set(network, chain);
      }
      return chain;
    },
  };
}

function lazyChain(network: EvmNetwork, real: () => Promise<EvmSandboxChain>, mined: () => void): EvmSandboxChain {
  const thenMined = async <T>(work: Promise<T>): Promise<T> => {
    const result = await work;
    mined();
    return result;
  };
  const tokens = new Map(genesisContracts(network).map((contract) => [contract.token.symbol, contract.address]));
  return {
    network,
    chainId: EVM_NETWORK_SPECS[network].chainId,
    // The real chain's answer: checkEvmToken's 400 for a symbol the network lacks, else its address.
    tokenAddress: (symbol) => tokens.get(checkEvmToken(network, symbol).symbol)!,
    nativeBalance: async (address) => (await real()).nativeBalance(address),
    tokenBalance: async (owner, token) => (await real()).tokenBalance(owner, token),
    sendRaw: async (wire, signer) => thenMined((await real()).sendRaw(wire, signer)),
    txState: async (hash) => (await real()).txState(hash),
    height: async () => (await real()).height(),
    transactionCount: async (address) => (await real()).transactionCount(address),
    feeTerms: async () => (await real()).feeTerms(),
    estimateGas: async (call) => (await real()).estimateGas(call),
    call: async (call) => (await real()).call(call),
    dataFee: async (signed) => (await real()).dataFee(signed),
    receipt: async (hash) => (await real()).receipt(hash),
    logs: async (filter) => (await real()).logs(filter),
    nativeTransfers: async (range) => (await real()).nativeTransfers(range),
    faucet: async (to, asset, amount) => thenMined((await real()).faucet(to, asset, amount)),
    ensureExchange: async () => (await real()).ensureExchange(),
    mempool: {
      pause: async () => (await real()).mempool.pause(),
      release: async (order) => thenMined((await real()).mempool.release(order)),
      drop: async (hashes) => (await real()).mempool.drop(hashes),
      pending: async () => (await real()).mempool.pending(),
    },
  };
}

import type { EvmFeeTerms } from './evm-chain.js';
import { EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';

const GWEI = 1_000_000_000n;

/**
 * The sandbox's base fee per network: fixed, so a fee quoted is the fee charged and tests can
 * count in exact wei. A few gwei where L1s charge more (Ethereum 3, Polygon 30 since POL is cheap,
 * BNB Smart Chain 1) and 1 gwei on the rollups.
 */
const BASE_FEE: Readonly<Record<EvmNetwork, bigint>> = {
  ethereum: 3n * GWEI,
  polygon: 30n * GWEI,
  'bnb-smart-chain': 1n * GWEI,
  base: GWEI,
  'arbitrum-one': GWEI,
  optimism: GWEI,
  lisk: GWEI,
  scroll: GWEI,
};

export const baseFeeOf = (network: EvmNetwork): bigint => BASE_FEE[network];

/** A tenth of the base fee as tip; the fee cap leaves room for the base fee to double. */
export function sandboxFeeTerms(network: EvmNetwork): EvmFeeTerms {
  const baseFeePerGas = BASE_FEE[network];
  const maxPriorityFeePerGas = baseFeePerGas / 10n;
  return { baseFeePerGas, maxPriorityFeePerGas, maxFeePerGas: 2n * baseFeePerGas + maxPriorityFeePerGas };
}

/** The L1 base fee the sandbox's rollups post at, and the share of it they charge (parts per million). */
export const L1_BASE_FEE = 2n * GWEI;
export const L1_FEE_SCALAR_PPM = 500_000n;
/** L1 calldata gas per byte of the signed transaction (EIP-2028's non-zero byte). */
const L1_GAS_PER_BYTE = 16n;

/**
 * The data fee of a signed transaction on a network that charges one (the OP stack and Scroll),
 * and 0 elsewhere: every byte of the signed transaction as L1 calldata (16 gas) at the L1 base
 * fee, times the scalar, i.e. `bytes × 16 × 2 gwei × 0.5` = 16 gwei per byte. Deducted from the
 * sender beside gas, even when the transaction reverts, and recorded in its receipt.
 */
export function dataFeeOf(network: EvmNetwork, signed: Uint8Array): bigint {
  if (!EVM_NETWORK_SPECS[network].dataFee) return 0n;
  return (BigInt(signed.length) * L1_GAS_PER_BYTE * L1_BASE_FEE * L1_FEE_SCALAR_PPM) / 1_000_000n;
}

/** Where data fees go (the OP stack's L1 fee vault), so the chain's coin is conserved. */
export const L1_FEE_VAULT = '0x420000000000000000000000000000000000001a';

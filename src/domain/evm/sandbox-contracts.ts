import {
  type Abi,
  decodeErrorResult,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  type Hex,
} from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import artifact from './sandbox-contracts.json' with { type: 'json' };
import { EVM_NETWORK_SPECS, type EvmNetwork, type EvmTokenSpec } from './networks.js';

/**
 * The sandbox chains' contracts, compiled from scripts/evm/contracts by `npm run evm:contracts`
 * (the artifact is checked against a recompile in CI): an OpenZeppelin ERC-20 minted by its
 * deployer, and WETH9 for the wrapped native coin.
 */
export const TOKEN_ABI = artifact.contracts.SandboxToken.abi as Abi;
export const WETH_ABI = artifact.contracts.WETH9.abi as Abi;
const TOKEN_BYTECODE = artifact.contracts.SandboxToken.bytecode as Hex;
const WETH_BYTECODE = artifact.contracts.WETH9.bytecode as Hex;

/**
 * The faucet's key, the same on every network and every instance: it deploys the tokens at
 * genesis (so it is their minter), holds the native coin the faucet hands out, and pays for
 * faucet transactions. A sandbox key, public by design: it guards nothing of value.
 */
export const FAUCET_KEY: Hex = '0x5a4e4b0c1c8f3b9d6e2a7f1031c5d8e94b6a2f7c0d3e8b1a9c4f6e2d7b0a5c31';
export const FAUCET_ADDRESS = privateKeyToAddress(FAUCET_KEY);
/** The native coin the faucet account starts with on every network (2^200 wei): it never runs out. */
export const FAUCET_GENESIS_BALANCE = 2n ** 200n;

/** A token the genesis deploys: its spec, its creation code with constructor arguments, and its address. */
export interface GenesisContract {
  token: EvmTokenSpec;
  /** Creation bytecode followed by the ABI-encoded constructor arguments. */
  initCode: Hex;
  /** The faucet's nonce when it deploys the contract: its place in the network's token list. */
  nonce: bigint;
  address: Hex;
}

const genesisByNetwork = new Map<EvmNetwork, GenesisContract[]>();

/**
 * The contracts a network's genesis deploys, one per token of networks.ts in its order, each by
 * the faucet at the nonce of its place: so an address is known without building the chain (and
 * is the same on every instance and after every restart).
 */
export function genesisContracts(network: EvmNetwork): GenesisContract[] {
  let contracts = genesisByNetwork.get(network);
  if (!contracts) {
    contracts = EVM_NETWORK_SPECS[network].tokens.map((token, i) => {
      const initCode = token.wrapsNative
        ? concat(
            WETH_BYTECODE,
            encodeAbiParameters([{ type: 'string' }, { type: 'string' }], [token.name, token.symbol]),
          )
        : concat(
            TOKEN_BYTECODE,
            encodeAbiParameters(
              [{ type: 'string' }, { type: 'string' }, { type: 'uint8' }],
              [token.name, token.symbol, token.decimals],
            ),
          );
      const nonce = BigInt(i);
      return { token, initCode, nonce, address: getContractAddress({ from: FAUCET_ADDRESS, nonce }) };
    });
    genesisByNetwork.set(network, contracts);
  }
  return contracts;
}

const concat = (code: Hex, args: Hex): Hex => `${code}${args.slice(2)}`;

/** `balanceOf(owner)` for an ERC-20 (WETH9's included). */
export const balanceOfCall = (owner: Hex): Hex =>
  encodeFunctionData({ abi: TOKEN_ABI, functionName: 'balanceOf', args: [owner] });

/** The minter's `mint(to, amount)`. */
export const mintCall = (to: Hex, amount: bigint): Hex =>
  encodeFunctionData({ abi: TOKEN_ABI, functionName: 'mint', args: [to, amount] });

const ALL_ERRORS = [...TOKEN_ABI, ...WETH_ABI].filter((item) => item.type === 'error') as Abi;

/**
 * Why a call reverted, from its revert data: `Error(string)`'s message, a panic's code, or the
 * name and arguments of a custom error of the sandbox's contracts (OpenZeppelin's
 * `ERC20InsufficientBalance(sender, balance, needed)`, …).
 */
export function revertReason(data: Uint8Array, fallback: string): string {
  if (data.length < 4) return fallback;
  try {
    const decoded = decodeErrorResult({ abi: ALL_ERRORS, data: `0x${Buffer.from(data).toString('hex')}` });
    if (decoded.errorName === 'Error') return String(decoded.args?.[0]);
    const args = (decoded.args ?? []).map((arg) => String(arg)).join(', ');
    return `${decoded.errorName}(${args})`;
  } catch {
    return fallback;
  }
}

import { encodeFunctionData, erc20Abi, type Hex, hexToBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { EvmSandboxChain } from '../../src/domain/evm/evm-chain.js';

/** A fresh key of the tests' own, signing as a wallet would (viem, EIP-1559). */
export function newSigner() {
  const account = privateKeyToAccount(generatePrivateKey());
  return {
    address: account.address,
    /** Signs a type-2 transaction for `chain` with its fee terms unless given; nonce from the chain unless given. */
    async sign(
      chain: EvmSandboxChain,
      tx: {
        to: Hex;
        value?: bigint;
        data?: Hex;
        gas?: bigint;
        nonce?: number;
        maxFeePerGas?: bigint;
        chainId?: number;
      },
    ): Promise<Uint8Array> {
      const fees = await chain.feeTerms();
      const signed = await account.signTransaction({
        type: 'eip1559',
        chainId: tx.chainId ?? chain.chainId,
        nonce: tx.nonce ?? Number(await chain.transactionCount(account.address)),
        to: tx.to,
        value: tx.value ?? 0n,
        data: tx.data,
        gas: tx.gas ?? 100_000n,
        maxFeePerGas: tx.maxFeePerGas ?? fees.maxFeePerGas,
        maxPriorityFeePerGas:
          (tx.maxFeePerGas ?? fees.maxFeePerGas) < fees.maxPriorityFeePerGas ? 0n : fees.maxPriorityFeePerGas,
      });
      return hexToBytes(signed);
    },
  };
}

export const transferData = (to: Hex, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });

export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const ZERO_TOPIC = `0x${'00'.repeat(32)}`;
export const addressTopic = (address: string) => `0x${'00'.repeat(12)}${address.slice(2).toLowerCase()}`;

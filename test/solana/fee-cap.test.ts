import { createAssociatedTokenAccountIdempotentInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  ComputeBudgetProgram,
  Keypair,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
} from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { feeCapOf } from '../../src/domain/solana/fee-cap.js';

/**
 * What a provider-built Solana transaction can cost its fee payer besides what it moves: base fee
 * per signature, the priority fee on the compute-unit limit it asks (or the default limit), and the
 * rent of token accounts it creates at the payer's expense.
 */
describe('the SOL fee cap of a transaction', () => {
  const payer = Keypair.generate().publicKey;
  const pool = Keypair.generate().publicKey;
  const mint = Keypair.generate().publicKey;
  const RENT = 2_039_280n;
  const transfer = SystemProgram.transfer({ fromPubkey: payer, toPubkey: pool, lamports: 1_000n });
  const messageOf = (instructions: TransactionInstruction[]) =>
    new TransactionMessage({
      payerKey: payer,
      recentBlockhash: Keypair.generate().publicKey.toBase58(),
      instructions,
    }).compileToV0Message();

  it('is the base fee of each signature when nothing else is asked', () => {
    expect(feeCapOf(messageOf([transfer]), payer.toBase58(), RENT)).toBe(5_000n);
    const twoSigners = SystemProgram.transfer({ fromPubkey: pool, toPubkey: payer, lamports: 1n });
    expect(feeCapOf(messageOf([transfer, twoSigners]), payer.toBase58(), RENT)).toBe(10_000n);
  });

  it('adds the priority fee on the whole limit asked, rounded up, or on the default limit per instruction', () => {
    const price = ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_500 });
    const limit = ComputeBudgetProgram.setComputeUnitLimit({ units: 300_001 });
    // 1,500 µlamports × 300,001 units = 450,001,500 µlamports → 451 lamports.
    expect(feeCapOf(messageOf([limit, price, transfer]), payer.toBase58(), RENT)).toBe(5_000n + 451n);
    // No limit: 200,000 units for each instruction that is not the budget's.
    expect(feeCapOf(messageOf([price, transfer, transfer]), payer.toBase58(), RENT)).toBe(5_000n + 600n);
  });

  it('adds the rent of each associated token account the payer creates, not of one another pays for', () => {
    const ownAta = getAssociatedTokenAddressSync(mint, payer, true);
    const poolAta = getAssociatedTokenAddressSync(mint, pool, true);
    const byPayer = createAssociatedTokenAccountIdempotentInstruction(payer, ownAta, payer, mint);
    const byPool = createAssociatedTokenAccountIdempotentInstruction(pool, poolAta, pool, mint);
    expect(feeCapOf(messageOf([transfer, byPayer]), payer.toBase58(), RENT)).toBe(5_000n + RENT);
    expect(feeCapOf(messageOf([transfer, byPool]), payer.toBase58(), RENT)).toBe(10_000n);
  });
});

import { parseUnits } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_GAS, SWAP_GAS_BASE, SWAP_GAS_PER_HOP } from '../../src/domain/evm/evm-exchange-provider.js';
import type { EvmNetwork } from '../../src/domain/evm/networks.js';
import { sandboxFeeTerms } from '../../src/domain/evm/sandbox-fees.js';
import { seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';

const ETH = 10n ** 18n;
const USD6 = 10n ** 6n;

/**
 * A swap quote's network fee is what its legs will pay: their gas at the base fee plus tip and, on
 * a network that charges one (the OP stack and Scroll), the data fee of each signed transaction.
 * Executed, the swap pays no more than quoted; where there is no data fee nothing is added.
 */
describe("an EVM swap quote's network fee", () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp();
  });
  afterAll(() => s.t.close());

  const get = async (key: string, url: string) => {
    const response = await s.t.app.inject({ url, headers: { 'x-api-key': key } });
    expect(response.statusCode).toBe(200);
    return response.json().data;
  };
  /** A tenant with native coin for gas and USDC to sell on `network`, its USDC → USDT quote, and the swap executing it. */
  const quoteAndSwap = async (network: EvmNetwork) => {
    const chain = s.t.services.evmChains.sandboxFor(network);
    const tenant = await seedTenant(s.t.services);
    const { address } = await get(tenant.keys.READ_ONLY, '/api/v1/evm/address');
    await chain.faucet(address, { native: true }, ETH);
    await chain.faucet(address, { token: 'USDC' }, 100n * USD6);
    const quote = await get(
      tenant.keys.READ_ONLY,
      `/api/v1/evm-exchange/${network}/quote/token-to-token?inputToken=USDC&outputToken=USDT&amount=10`,
    );
    const swapped = await s.t.app.inject({
      method: 'POST',
      url: `/api/v1/evm-exchange/${network}/swap`,
      headers: { 'x-api-key': tenant.keys.TRANSACTIONS },
      payload: { quoteId: quote.quoteId },
    });
    expect(swapped.statusCode).toBe(201);
    const result = swapped.json().data;
    expect(result.status).toBe('confirmed');
    expect(result.legs.map((l: { kind: string }) => l.kind)).toEqual(['approve', 'swap']);
    // What the legs paid the network, from their receipts: gas × price, plus the data fee.
    const receipts = await Promise.all(result.legs.map((l: { hash: string }) => chain.receipt(l.hash)));
    const paid = receipts.reduce((sum, r) => sum + r!.gasUsed * r!.effectiveGasPrice + r!.dataFee, 0n);
    const dataFees = receipts.reduce((sum, r) => sum + r!.dataFee, 0n);
    // The quote's expected gas alone: the approval and a one-hop router call at the base fee plus tip.
    const terms = sandboxFeeTerms(network);
    const gasOnly =
      (APPROVE_GAS + SWAP_GAS_BASE + SWAP_GAS_PER_HOP) * (terms.baseFeePerGas + terms.maxPriorityFeePerGas);
    return { quote, quoted: parseUnits(quote.fees.gasFee, 18), paid, dataFees, gasOnly };
  };

  it('on base includes the data fee of the approval and the swap, and covers what the swap paid', async () => {
    const { quote, quoted, paid, dataFees, gasOnly } = await quoteAndSwap('base');
    expect(dataFees).toBeGreaterThan(0n);
    expect(quoted).toBeGreaterThanOrEqual(paid);
    // Beyond the gas, the quote counts at least the data fees the two transactions were charged.
    expect(quoted - gasOnly).toBeGreaterThanOrEqual(dataFees);
    // At their largest once signed (nonce and signature at their longest): a few bytes more, not more.
    expect(quoted - gasOnly - dataFees).toBeLessThan(dataFees / 10n);
    // totalCost (USD) is the pools' fee plus this gas fee at ETH's price, so it counts the data fee too.
    const reader = await seedTenant(s.t.services);
    const ethQuote = await get(
      reader.keys.READ_ONLY,
      '/api/v1/evm-exchange/base/quote/native-to-token?outputToken=USDC&amount=1',
    );
    const ethUsd = Number(ethQuote.rates.usdRate);
    expect(Number(quote.fees.totalCost)).toBeCloseTo(
      Number(quote.fees.protocolFeeAmount) + Number(quote.fees.gasFee) * ethUsd,
      1,
    );
  });

  it('adds nothing on a network without a data fee (polygon), and still covers what the swap paid', async () => {
    const { quoted, paid, dataFees, gasOnly } = await quoteAndSwap('polygon');
    expect(dataFees).toBe(0n);
    expect(quoted).toBe(gasOnly);
    expect(quoted).toBeGreaterThanOrEqual(paid);
  });
});

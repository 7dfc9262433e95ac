/**
 * The EVM sandbox swap as a row of `npm run bench:money` ("gateway EVM sandbox swap"): a partner's
 * flow through REST on `base`, USDC → USDT (the pair has a pool of its own there, so one hop: an
 * exact approval to Router02, then `swapExactTokensForTokens`, two transactions signed, held,
 * stored, mined and settled per swap; `base` also charges a data fee on both).
 *
 * First, every tenant's EVM wallet is funded from the sandbox faucet over REST
 * (`POST /api/v1/evm/base/sandbox/faucet`): 10 ETH for gas and 100,000 USDC.
 *
 * What is measured: the swap alone. Each request asks for a fresh quote for its tenant
 * (`GET /api/v1/evm-exchange/base/quote/token-to-token?inputToken=USDC&outputToken=USDT&amount=0.01`)
 * just before, untimed, then executes it with `POST /api/v1/evm-exchange/base/swap` `{quoteId}` and
 * its own Idempotency-Key, and only that POST is timed (harness/closed.ts: autocannon builds its
 * requests synchronously, so it cannot ask for the quote first). p50/p99 are the swap's; req/s
 * counts swaps, each connection asking for the next quote once its swap is answered, so a
 * connection's turn is a quote plus a swap; server CPU, commits, WAL and round trips per request
 * include the swap's quote (one read of the pools and one stored quote). A swap counts only when
 * answered 2xx with `status: confirmed` (both legs mined). The quote is the swap's own prerequisite,
 * not a path of its own: timing the pair would mix a read into the money path's latency.
 *
 * As every row, no two requests in flight share a wallet: the caller picks the tenant from its
 * connection's group (money-slots.ts), and a connection's quote and swap are one after the other.
 */
import { randomUUID } from 'node:crypto';
import type { ClosedRequest } from './harness/closed.js';

const NETWORK = 'base';
/** What a swap sells and buys, and how much: small, so the pool's price barely moves over a run. */
const PAIR = { inputToken: 'USDC', outputToken: 'USDT', amount: '0.01' } as const;
/** Faucet grants per tenant: gas for tens of thousands of swaps (approval + swap, with data fees), and the input. */
const GRANTS = [
  { asset: 'ETH', amount: '10' },
  { asset: 'USDC', amount: '100000' },
] as const;

async function call(
  baseUrl: string,
  key: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      'x-api-key': key,
      ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json().catch(() => undefined) };
}

/** Funds each key's EVM wallet on `base` with ETH for gas and USDC to sell, from the sandbox faucet, eight keys at a time. */
export async function fundEvmSwapWallets(baseUrl: string, apiKeys: string[]): Promise<void> {
  const queue = [...apiKeys];
  await Promise.all(
    Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift())
        for (const grant of GRANTS) {
          const { status, json } = await call(baseUrl, key, 'POST', `/api/v1/evm/${NETWORK}/sandbox/faucet`, grant);
          if (status >= 300) throw new Error(`EVM faucet answered ${status}: ${JSON.stringify(json)}`);
        }
    }),
  );
}

/**
 * The EVM sandbox swap as a target of `npm run bench:money`: funds every tenant's wallet, then
 * gives `prepare(key)`, which asks for a fresh quote as that tenant (untimed) and answers the swap
 * request executing it, and `counts`, whether the swap's answer counts.
 */
export async function evmSwapRequests(
  baseUrl: string,
  apiKeys: string[],
): Promise<{
  prepare: (key: string) => Promise<ClosedRequest>;
  counts: (status: number, body: string) => boolean;
}> {
  await fundEvmSwapWallets(baseUrl, apiKeys);
  const quotePath = `/api/v1/evm-exchange/${NETWORK}/quote/token-to-token?${new URLSearchParams(PAIR)}`;
  return {
    async prepare(key) {
      const { status, json } = await call(baseUrl, key, 'GET', quotePath);
      const quoteId = json?.data?.quoteId;
      if (status !== 200 || typeof quoteId !== 'string')
        throw new Error(`EVM quote answered ${status}: ${JSON.stringify(json)}`);
      return {
        method: 'POST',
        path: `/api/v1/evm-exchange/${NETWORK}/swap`,
        headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': randomUUID() },
        body: JSON.stringify({ quoteId }),
      };
    },
    counts(status, body) {
      if (status < 200 || status >= 300) return false;
      try {
        return (JSON.parse(body) as { data?: { status?: string } }).data?.status === 'confirmed';
      } catch {
        return false;
      }
    },
  };
}

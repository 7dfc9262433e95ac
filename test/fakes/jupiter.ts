import type { IncomingMessage, ServerResponse } from 'node:http';
import { address } from '@solana/kit';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import { parseTokenAccount } from '../../src/domain/solana/litesvm-chain.js';
import { outGivenIn } from '../../src/domain/chain/pool-math.js';
import { SOL_MINT, type TokenInfo } from '../../src/domain/solana/sandbox-world.js';
import { LocalHttpServer } from '../helpers/local-server.js';
import { MalformedAnswers } from './malformed.js';
import type { FakeSolanaRpc } from './solana-rpc.js';

/**
 * A local Jupiter (Swap API v1 `/quote` and `/swap`, Price API v3) built from the documented shapes
 * in providers.md §2, routing over one SOL/token pool that lives on the fake RPC's chain, so the
 * transactions it builds really execute there. Knobs: 429s, a tampered transaction, and 2xx answers
 * spoiled by `malformed` (malformed.ts).
 */
export class FakeJupiter extends LocalHttpServer {
  readonly pool = Keypair.generate();
  readonly requests: Array<{ method: string; path: string; body?: any }> = [];
  /** Answer the next N calls with 429 and this reset (Unix seconds; default now + 1). */
  rateLimitNext = 0;
  rateLimitResetSeconds: number | undefined;
  /** /swap builds a transaction that takes twice the quoted input. */
  tamper = false;
  /** 2xx answers sent in another shape than the documented one, by method and path. */
  readonly malformed = new MalformedAnswers();

  constructor(
    private readonly rpc: FakeSolanaRpc,
    private readonly token: TokenInfo & { fund(owner: PublicKey, raw: bigint): void },
  ) {
    super();
    rpc.airdrop(this.pool.publicKey, 1_000n * BigInt(LAMPORTS_PER_SOL));
    token.fund(this.pool.publicKey, 150_000n * 10n ** BigInt(token.decimals));
  }

  reserves(): [bigint, bigint] {
    const svm = this.rpc.svm;
    const sol =
      (svm.getBalance(address(this.pool.publicKey.toBase58())) ?? 0n) - svm.minimumBalanceForRentExemption(0n);
    const account = svm.getAccount(
      address(getAssociatedTokenAddressSync(new PublicKey(this.token.address), this.pool.publicKey).toBase58()),
    );
    return [sol, account.exists ? parseTokenAccount(account.data).amount : 0n];
  }

  /** Someone else trades against the pool: its SOL reserve grows by `raw`. */
  moveMarket(raw: bigint): void {
    this.rpc.airdrop(this.pool.publicKey, raw);
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url!, 'http://x');
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    this.requests.push({ method: req.method!, path: url.pathname, body });
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-ratelimit-remaining': '5', ...headers });
      const answer = status < 300 ? this.malformed.apply(req.method!, req.url!, payload) : payload;
      res.end(JSON.stringify(answer) ?? '');
    };
    if (this.rateLimitNext > 0) {
      this.rateLimitNext--;
      const reset = this.rateLimitResetSeconds ?? Math.ceil(Date.now() / 1000) + 1;
      return send(
        429,
        { message: 'Too Many Requests' },
        { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      );
    }
    if (url.pathname === '/price/v3') {
      const ids = (url.searchParams.get('ids') ?? '').split(',');
      const [sol, tokens] = this.reserves();
      const solUsd = 150;
      const tokenUsd = (Number(sol) / 1e9 / (Number(tokens) / 10 ** this.token.decimals)) * solUsd;
      const prices: Record<string, object> = {};
      for (const id of ids) {
        if (id === SOL_MINT)
          prices[id] = {
            usdPrice: solUsd,
            decimals: 9,
            liquidity: 1e6,
            priceChange24h: 0.1,
            blockId: 1,
            createdAt: new Date().toISOString(),
          };
        if (id === this.token.address)
          prices[id] = {
            usdPrice: tokenUsd,
            decimals: this.token.decimals,
            liquidity: 1e6,
            priceChange24h: 0,
            blockId: 1,
            createdAt: new Date().toISOString(),
          };
      }
      return send(200, prices);
    }
    if (url.pathname === '/swap/v1/quote') return this.quote(url.searchParams, send);
    if (url.pathname === '/swap/v1/swap' && req.method === 'POST') return this.swap(body, send);
    return send(404, { error: 'Not found' });
  }

  private quote(params: URLSearchParams, send: (status: number, payload: unknown) => void) {
    const inputMint = params.get('inputMint');
    const outputMint = params.get('outputMint');
    const amount = params.get('amount');
    const slippageBps = Number(params.get('slippageBps') ?? 50);
    if (!inputMint || !outputMint || !amount || !/^\d+$/.test(amount))
      return send(400, { error: 'Invalid request', errorCode: 'INVALID_REQUEST' });
    if (inputMint === outputMint)
      return send(400, {
        error: 'inputMint cannot be the same as outputMint',
        errorCode: 'CIRCULAR_ARBITRAGE_IS_DISABLED',
      });
    const pair = new Set([inputMint, outputMint]);
    if (!pair.has(SOL_MINT) || !pair.has(this.token.address))
      return send(400, { error: 'The token is not tradable', errorCode: 'TOKEN_NOT_TRADABLE' });
    if ((params.get('swapMode') ?? 'ExactIn') !== 'ExactIn')
      return send(400, {
        error: 'ExactOut not supported on this route',
        errorCode: 'ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT',
      });
    const [sol, tokens] = this.reserves();
    const [rIn, rOut] = inputMint === SOL_MINT ? [sol, tokens] : [tokens, sol];
    const hop = outGivenIn(rIn, rOut, BigInt(amount));
    const threshold = (hop.amountOut * BigInt(10_000 - slippageBps)) / 10_000n;
    send(200, {
      inputMint,
      inAmount: amount,
      outputMint,
      outAmount: hop.amountOut.toString(),
      otherAmountThreshold: threshold.toString(),
      swapMode: 'ExactIn',
      slippageBps,
      platformFee: { amount: '0', feeBps: 0 },
      priceImpactPct: String(Number(hop.amountIn - hop.fee) / Number(rIn + hop.amountIn - hop.fee)),
      routePlan: [
        {
          swapInfo: {
            ammKey: this.pool.publicKey.toBase58(),
            label: 'Fake AMM',
            inputMint,
            outputMint,
            inAmount: amount,
            outAmount: hop.amountOut.toString(),
            feeAmount: hop.fee.toString(),
            feeMint: inputMint,
          },
          percent: 100,
          bps: 10_000,
        },
      ],
      contextSlot: 324307186,
      timeTaken: 0.002,
    });
  }

  private swap(
    body: { quoteResponse: Record<string, string>; userPublicKey: string },
    send: (status: number, payload: unknown) => void,
  ) {
    const quote = body?.quoteResponse;
    if (!quote || !body.userPublicKey) return send(400, { error: 'quoteResponse and userPublicKey are required' });
    const user = new PublicKey(body.userPublicKey);
    const mint = new PublicKey(this.token.address);
    const inAmount = BigInt(quote['inAmount']!) * (this.tamper ? 2n : 1n);
    const outAmount = BigInt(quote['outAmount']!);
    const userAta = getAssociatedTokenAddressSync(mint, user, true);
    const poolAta = getAssociatedTokenAddressSync(mint, this.pool.publicKey);
    const instructions =
      quote['inputMint'] === SOL_MINT
        ? [
            SystemProgram.transfer({ fromPubkey: user, toPubkey: this.pool.publicKey, lamports: inAmount }),
            createAssociatedTokenAccountIdempotentInstruction(user, userAta, user, mint),
            createTransferCheckedInstruction(
              poolAta,
              mint,
              userAta,
              this.pool.publicKey,
              outAmount,
              this.token.decimals,
            ),
          ]
        : [
            createTransferCheckedInstruction(userAta, mint, poolAta, user, inAmount, this.token.decimals),
            SystemProgram.transfer({ fromPubkey: this.pool.publicKey, toPubkey: user, lamports: outAmount }),
          ];
    const message = new TransactionMessage({
      payerKey: user,
      recentBlockhash: this.rpc.svm.latestBlockhash(),
      instructions,
    }).compileToV0Message();
    const transaction = new VersionedTransaction(message);
    transaction.sign([this.pool]);
    send(200, {
      swapTransaction: Buffer.from(transaction.serialize()).toString('base64'),
      lastValidBlockHeight: 1_150,
      prioritizationFeeLamports: 0,
    });
  }
}

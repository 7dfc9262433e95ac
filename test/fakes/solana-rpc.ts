import type { IncomingMessage, ServerResponse } from 'node:http';
import { address, getBase58Decoder, getTransactionDecoder, lamports } from '@solana/kit';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, VersionedTransaction } from '@solana/web3.js';
import { LiteSVM } from 'litesvm';
import { parseTokenAccount } from '../../src/domain/solana/litesvm-chain.js';
import { directRunner, execute, type TokenInfo } from '../../src/domain/solana/sandbox-world.js';
import { LocalHttpServer } from '../helpers/local-server.js';
import { MalformedAnswers } from './malformed.js';

const base58 = getBase58Decoder();
const decoder = getTransactionDecoder();

/**
 * A Solana JSON-RPC node on a local port, as web3.js `Connection` speaks to it, with a real SVM
 * (litesvm) behind it. Knobs make it misbehave as real clusters do: `dropSends` accepts transactions
 * and never lands them, `advanceBlocks` moves the block height on (expiring old blockhashes), and
 * `malformed` spoils the answers to chosen JSON-RPC methods (malformed.ts; the call is still made).
 */
export class FakeSolanaRpc extends LocalHttpServer {
  readonly svm = new LiteSVM();
  /** How many of the next sendTransaction calls are accepted and silently dropped. */
  dropSends = 0;
  readonly sent: string[] = [];
  /** Answers sent in another shape than the documented one, by JSON-RPC method (the whole response body). */
  readonly malformed = new MalformedAnswers();
  /** Executed transactions, oldest first, with balances before and after (for getTransaction). */
  private readonly history: Array<{
    signature: string;
    slot: number;
    /** Unix seconds, as nodes report a block's time. */
    blockTime: number;
    keys: Array<{ pubkey: string; signer: boolean; writable: boolean }>;
    meta: Record<string, unknown>;
  }> = [];
  private height = 1_000n;
  private readonly authority = Keypair.generate();

  constructor() {
    super();
    this.svm.airdrop(address(this.authority.publicKey.toBase58()), lamports(1_000n * BigInt(LAMPORTS_PER_SOL)));
  }

  /** A new mint on this chain, its tokens given by the faucet's authority. */
  createToken(symbol: string, decimals: number): TokenInfo & { fund(owner: PublicKey, raw: bigint): void } {
    const mint = Keypair.generate();
    execute(
      directRunner(this.svm),
      [
        SystemProgram.createAccount({
          fromPubkey: this.authority.publicKey,
          newAccountPubkey: mint.publicKey,
          lamports: Number(this.svm.minimumBalanceForRentExemption(BigInt(MINT_SIZE))),
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeMint2Instruction(mint.publicKey, decimals, this.authority.publicKey, null),
      ],
      [this.authority, mint],
    );
    const info: TokenInfo = { address: mint.publicKey.toBase58(), symbol, name: symbol, decimals };
    return {
      ...info,
      fund: (owner, raw) =>
        void execute(directRunner(this.svm), fundTokenInstructionsBy(this.authority, owner, info, raw), [
          this.authority,
        ]),
    };
  }

  airdrop(to: PublicKey, raw: bigint): void {
    this.svm.airdrop(address(to.toBase58()), lamports(raw));
  }

  advanceBlocks(count: number): void {
    this.height += BigInt(count);
    if (count >= 150) this.svm.expireBlockhash();
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.answer(req, res);
    } catch (error) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32603, message: `Internal error: ${(error as Error).message}` },
        }),
      );
    }
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: any[] };
    const reply = (payload: object) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const answer = this.malformed.apply(call.method, '', { jsonrpc: '2.0', id: call.id, ...payload });
      res.end(JSON.stringify(answer) ?? '');
    };
    const context = { slot: Number(this.height) };
    const withContext = (value: unknown) => reply({ result: { context, value } });
    const p = call.params ?? [];
    switch (call.method) {
      case 'getLatestBlockhash':
        return withContext({ blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: Number(this.height) + 150 });
      case 'getBlockHeight':
        return reply({ result: Number(this.height) });
      case 'getBalance':
        return withContext(Number(this.svm.getBalance(address(p[0])) ?? 0n));
      case 'getMinimumBalanceForRentExemption':
        return reply({ result: Number(this.svm.minimumBalanceForRentExemption(BigInt(p[0]))) });
      case 'getAccountInfo':
        return withContext(this.account(p[0]));
      case 'getTokenAccountsByOwner':
        return withContext(this.tokenAccountsOf(p[0]));
      case 'sendTransaction':
        return this.send(p[0], reply);
      case 'getSignaturesForAddress': {
        const { until, before, limit = 1000 } = (p[1] ?? {}) as { until?: string; before?: string; limit?: number };
        const found = [];
        // Newest first; `before` starts below that signature, `until` stops at one.
        let started = before === undefined;
        for (const entry of [...this.history].reverse()) {
          if (!started) {
            started = entry.signature === before;
            continue;
          }
          if (entry.signature === until) break;
          if (entry.keys.some((k) => k.pubkey === p[0]))
            found.push({
              signature: entry.signature,
              slot: entry.slot,
              err: null,
              memo: null,
              blockTime: entry.blockTime,
              confirmationStatus: 'confirmed',
            });
        }
        return reply({ result: found.slice(0, limit) });
      }
      case 'getTransaction': {
        const entry = this.history.find((h) => h.signature === p[0]);
        if (!entry) return reply({ result: null });
        return reply({
          result: {
            slot: entry.slot,
            blockTime: entry.blockTime,
            version: 'legacy',
            meta: entry.meta,
            transaction: {
              signatures: [entry.signature],
              message: {
                accountKeys: entry.keys.map((k) => ({ ...k, source: 'transaction' })),
                instructions: [],
                recentBlockhash: this.svm.latestBlockhash(),
              },
            },
          },
        });
      }
      case 'getSignatureStatuses':
        return withContext((p[0] as string[]).map((signature) => this.status(signature)));
      case 'simulateTransaction': {
        // As a node does with sigVerify false: signatures are not checked, so blank ones are filled in on a copy.
        const wire = Buffer.from(p[0], 'base64');
        const count = wire[0]!;
        for (let i = 0; i < count; i++)
          if (wire.subarray(1 + 64 * i, 65 + 64 * i).every((b) => b === 0)) wire.fill(1, 1 + 64 * i, 65 + 64 * i);
        const result = LiteSVM.fromBytes(this.svm.toBytes())
          .withSigverify(false)
          .simulateTransaction(decoder.decode(wire) as never);
        const addresses: string[] = p[1]?.accounts?.addresses ?? [];
        if ('err' in result)
          return withContext({
            err: String(result.err()),
            logs: result.meta().logs(),
            accounts: null,
            unitsConsumed: 0,
            returnData: null,
          });
        const post = new Map(result.postAccounts().map((a) => [String(a.address), a]));
        return withContext({
          err: null,
          logs: result.meta().logs(),
          accounts: addresses.map((a) => (post.has(a) ? encode(post.get(a)!) : this.account(a))),
          unitsConsumed: 0,
          returnData: null,
        });
      }
      default:
        return reply({ error: { code: -32601, message: `Method not found: ${call.method}` } });
    }
  }

  private send(wireBase64: string, reply: (payload: object) => void) {
    const wire = Buffer.from(wireBase64, 'base64');
    const signature = base58.decode(VersionedTransaction.deserialize(wire).signatures[0]!);
    this.sent.push(signature);
    if (this.dropSends > 0) {
      this.dropSends--;
      return reply({ result: signature });
    }
    const parsed = VersionedTransaction.deserialize(wire);
    const keys = parsed.message.staticAccountKeys.map((k, i) => ({
      pubkey: k.toBase58(),
      signer: i < parsed.message.header.numRequiredSignatures,
      writable: parsed.message.isAccountWritable(i),
    }));
    const before = this.balances(keys.map((k) => k.pubkey));
    const result = this.svm.sendTransaction(decoder.decode(wire) as never);
    if (!('err' in result)) {
      const after = this.balances(keys.map((k) => k.pubkey));
      this.history.push({
        signature,
        slot: Number(this.height),
        blockTime: Math.floor(Date.now() / 1000),
        keys,
        meta: {
          err: null,
          fee: 5000,
          preBalances: before.lamports,
          postBalances: after.lamports,
          preTokenBalances: before.tokens,
          postTokenBalances: after.tokens,
          innerInstructions: [],
          logMessages: [],
        },
      });
    }
    if ('err' in result) {
      const text = result.toString();
      const message = /AlreadyProcessed/.test(text)
        ? 'Transaction simulation failed: This transaction has already been processed'
        : /BlockhashNotFound/.test(text)
          ? 'Transaction simulation failed: Blockhash not found'
          : `Transaction simulation failed: ${text.slice(0, 200)}`;
      return reply({
        error: {
          code: -32002,
          message,
          data: { err: 'failed', logs: result.meta().logs(), accounts: null, unitsConsumed: 0, returnData: null },
        },
      });
    }
    return reply({ result: signature });
  }

  private balances(keys: string[]) {
    const lamports = keys.map((k) => Number(this.svm.getBalance(address(k)) ?? 0n));
    const tokens = keys.flatMap((k, accountIndex) => {
      const account = this.svm.getAccount(address(k));
      if (
        !account.exists ||
        account.data.length !== 165 ||
        String(account.programAddress) !== TOKEN_PROGRAM_ID.toBase58()
      )
        return [];
      const token = parseTokenAccount(account.data);
      const decimals = (this.svm.getAccount(address(token.mint)) as { data: ArrayLike<number> }).data[44]!;
      const ui = Number(token.amount) / 10 ** decimals;
      return [
        {
          accountIndex,
          mint: token.mint,
          owner: token.owner,
          programId: TOKEN_PROGRAM_ID.toBase58(),
          uiTokenAmount: { amount: token.amount.toString(), decimals, uiAmount: ui, uiAmountString: String(ui) },
        },
      ];
    });
    return { lamports, tokens };
  }

  private status(signature: string) {
    const found = this.svm.getTransaction(signature as never);
    if (!found) return null;
    return {
      slot: Number(this.height),
      confirmations: null,
      err: 'err' in found ? { InstructionError: [0, 'Custom'] } : null,
      status: 'err' in found ? { Err: {} } : { Ok: null },
      confirmationStatus: 'confirmed',
    };
  }

  private account(key: string) {
    const account = this.svm.getAccount(address(key));
    return account.exists ? encode(account) : null;
  }

  private tokenAccountsOf(owner: string) {
    return this.svm
      .getProgramAccounts(address(TOKEN_PROGRAM_ID.toBase58()))
      .filter((a) => a.data.length === 165 && parseTokenAccount(a.data).owner === owner)
      .map((a) => {
        const token = parseTokenAccount(a.data);
        const decimals = this.svm.getAccount(address(token.mint)).exists
          ? (this.svm.getAccount(address(token.mint)) as { data: ArrayLike<number> }).data[44]!
          : 0;
        return {
          pubkey: String(a.address),
          account: {
            data: {
              program: 'spl-token',
              parsed: {
                type: 'account',
                info: {
                  mint: token.mint,
                  owner: token.owner,
                  state: 'initialized',
                  isNative: false,
                  tokenAmount: {
                    amount: token.amount.toString(),
                    decimals,
                    uiAmount: Number(token.amount) / 10 ** decimals,
                    uiAmountString: String(Number(token.amount) / 10 ** decimals),
                  },
                },
              },
              space: 165,
            },
            executable: false,
            lamports: Number(a.lamports),
            owner: TOKEN_PROGRAM_ID.toBase58(),
            rentEpoch: 0,
            space: 165,
          },
        };
      });
  }
}

function encode(account: {
  lamports: bigint | number;
  programAddress: unknown;
  data: ArrayLike<number>;
  executable: boolean;
}) {
  return {
    data: [Buffer.from(Uint8Array.from(account.data)).toString('base64'), 'base64'],
    executable: account.executable,
    lamports: Number(account.lamports),
    owner: String(account.programAddress),
    rentEpoch: 0,
    space: account.data.length,
  };
}

function fundTokenInstructionsBy(authority: Keypair, owner: PublicKey, token: TokenInfo, raw: bigint) {
  const mint = new PublicKey(token.address);
  const ata = getAssociatedTokenAddressSync(mint, owner, true);
  return [
    createAssociatedTokenAccountIdempotentInstruction(authority.publicKey, ata, owner, mint),
    createMintToInstruction(mint, ata, authority.publicKey, raw),
  ];
}

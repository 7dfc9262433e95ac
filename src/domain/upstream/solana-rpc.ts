import { AsyncLocalStorage } from 'node:async_hooks';
import { type TSchema, Type } from '@sinclair/typebox';
import { SendTransactionError } from '@solana/web3.js';
import { type AnswerShape, answerShape } from './answer-shape.js';
import { generate, UpstreamError } from './upstream-error.js';

const SOLANA_RPC = { name: 'solana-rpc', label: 'The Solana RPC node' };

/** The only method that can move anything: no clear answer to it is "outcome unknown". */
const SENDS = new Set(['sendTransaction']);

/** A JSON-RPC error answer, which web3.js turns into a SolanaJSONRPCError (classified below). */
const RPC_ERROR = answerShape(Type.Object({ error: Type.Object({ code: Type.Integer(), message: Type.String() }) }));

/**
 * The fault a call's answer raised, kept for the call that made it: web3.js wraps some failures in
 * a plain Error made from their text (getBalance, getAccountInfo, getLatestBlockhash), which would
 * otherwise lose the classified error.
 */
const callFaults = new AsyncLocalStorage<{ fault?: UpstreamError }>();

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A fetch for web3.js `Connection` that gives every call a deadline and checks each 2xx answer
 * before web3.js reads it: a JSON-RPC error as JSON-RPC has it, else a `result` of the documented
 * shape for the method called (`results`, by method name; a method not listed needs a `result`). An
 * answer that is not is an upstream fault naming the path of its first mismatching field, never
 * its body: on a send, "outcome unknown"; on a read, unavailable.
 */
export function checkedRpcFetch(results: Record<string, TSchema>, timeoutMs: number): Fetch {
  const shapes = new Map<string, AnswerShape<unknown>>(
    Object.entries(results).map(([method, result]) => [method, answerShape(Type.Object({ result }))]),
  );
  const anyResult = answerShape(Type.Object({ result: Type.Unknown() }));
  return async (input, init) => {
    const method = methodOf(init?.body);
    const response = await fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    // A batch (an array of calls) and a non-2xx are left to web3.js, which reports them itself.
    if (!response.ok || method === undefined) return response;
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const isError = typeof body === 'object' && body !== null && 'error' in body;
    const shape = isError ? RPC_ERROR : (shapes.get(method) ?? anyResult);
    const at = body === undefined ? '/' : shape.mismatchAt(body);
    if (at !== undefined) {
      const fault = generate({
        upstream: SOLANA_RPC,
        mutating: SENDS.has(method),
        httpStatus: response.status,
        unreadable: true,
        mismatch: at,
      });
      const slot = callFaults.getStore();
      if (slot) slot.fault = fault;
      throw fault;
    }
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The JSON-RPC method of a single call's body, undefined for a batch or anything else. */
function methodOf(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const call = JSON.parse(body) as { method?: unknown } | null;
    return call && !Array.isArray(call) && typeof call.method === 'string' ? call.method : undefined;
  } catch {
    return undefined;
  }
}

/**
 * web3.js checks the fields it needs itself (superstruct), and reports a miss as a StructError whose
 * text quotes the value it got ("At path: result.value -- Expected a number, but received: …"),
 * sometimes inside another error's text. Only the path is kept, as a JSON pointer.
 */
function structMismatch(error: unknown): string | undefined {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (!/StructError/.test(text)) return undefined;
  const path = /At path: (\S+) --/.exec(text)?.[1];
  return path ? `/${path.split('.').join('/')}` : '/';
}

/**
 * web3.js reports an HTTP failure as a plain Error whose message carries the status ("503 Service
 * Unavailable: …", sometimes behind "failed to get balance of account …: Error: "), a JSON-RPC
 * error as SolanaJSONRPCError (a numeric `code`), and no answer as the fetch error itself. Each
 * becomes an UpstreamError; a send the node refused stays a SendTransactionError for the chain to
 * name (TransactionRejected).
 */
export function classifyRpcFailure(error: unknown, mutating: boolean): unknown {
  if (error instanceof UpstreamError || error instanceof SendTransactionError) return error;
  const mismatch = structMismatch(error);
  // No cause: the StructError's text carries the answer's values.
  if (mismatch !== undefined)
    return generate({ upstream: SOLANA_RPC, mutating, httpStatus: 200, unreadable: true, mismatch });
  const message = error instanceof Error ? error.message : String(error);
  const status = /(?:^|: |Error: )([1-5]\d\d) [A-Za-z]/.exec(message)?.[1];
  if (status) return generate({ upstream: SOLANA_RPC, mutating, httpStatus: Number(status), message, cause: error });
  const jsonRpc = typeof (error as { code?: unknown } | null)?.code === 'number';
  if (jsonRpc)
    return generate({ upstream: SOLANA_RPC, mutating, httpStatus: 200, unreadable: true, message, cause: error });
  return generate({ upstream: SOLANA_RPC, mutating, cause: error });
}

/**
 * The connection with every call's failure classified: one place for every RPC method instead of a
 * try/catch in each. Only `sendRawTransaction` can move anything, so only it can end "outcome
 * unknown". A fault `checkedRpcFetch` raised for the call is the call's error, whatever web3.js
 * made of it.
 */
export function classifiedConnection<C extends object>(connection: C): C {
  return new Proxy(connection, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const mutating = property === 'sendRawTransaction' || property === 'sendTransaction';
      return (...args: unknown[]) => {
        const slot: { fault?: UpstreamError } = {};
        const result = callFaults.run(slot, () => (value as (...a: unknown[]) => unknown).apply(target, args));
        return result instanceof Promise
          ? result.catch((error: unknown) => {
              throw slot.fault ?? classifyRpcFailure(error, mutating);
            })
          : result;
      };
    },
  });
}

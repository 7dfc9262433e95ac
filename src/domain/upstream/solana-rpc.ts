import { SendTransactionError } from '@solana/web3.js';
import { generate, UpstreamError } from './upstream-error.js';

const SOLANA_RPC = { name: 'solana-rpc', label: 'The Solana RPC node' };

/**
 * web3.js reports an HTTP failure as a plain Error whose message carries the status ("503 Service
 * Unavailable: …", sometimes behind "failed to get balance of account …: Error: "), a JSON-RPC
 * error as SolanaJSONRPCError (a numeric `code`), and no answer as the fetch error itself. Each
 * becomes an UpstreamError; a send the node refused stays a SendTransactionError for the chain to
 * name (TransactionRejected).
 */
export function classifyRpcFailure(error: unknown, mutating: boolean): unknown {
  if (error instanceof UpstreamError || error instanceof SendTransactionError) return error;
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
 * try/catch in each. Only `sendRawTransaction` can move anything, so only it can end "outcome unknown".
 */
export function classifiedConnection<C extends object>(connection: C): C {
  return new Proxy(connection, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const mutating = property === 'sendRawTransaction' || property === 'sendTransaction';
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result instanceof Promise
          ? result.catch((error: unknown) => {
              throw classifyRpcFailure(error, mutating);
            })
          : result;
      };
    },
  });
}

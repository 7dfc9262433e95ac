/**
 * What an error becomes in a log line. Drizzle's query errors put the SQL parameters in their
 * message ("params: …") and on `.params`; PostgreSQL puts row values in `detail`
 * ("Key (key_hash)=(…) already exists") and quotes bad input in its message. None of that may
 * reach a log: parameters are key hashes, card fields, PINs. What is kept: the error's type, a
 * message with quoted values blanked, the SQLSTATE and constraint names, the stack frames, and
 * the same for its cause.
 */
export interface SafeError {
  [key: string]: unknown;
  type: string;
  message: string;
  code?: string;
  constraint?: string;
  table?: string;
  stack: string;
  cause?: SafeError;
}

const QUOTED = /"[^"]*"|'[^']*'|\([^)]*\)=\([^)]*\)/g;

export function safeError(error: unknown, depth = 0): SafeError {
  if (!(error instanceof Error)) return { type: typeof error, message: '(not an Error)', stack: '' };
  const record = error as Error & Record<string, unknown>;
  const failedQuery = error.message.startsWith('Failed query:') || 'params' in record;
  const message = failedQuery
    ? `Failed query: ${statementName(String(record.query ?? ''))}`
    : blankValues(error.message);
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .join('\n');
  const result: SafeError = {
    type: error.constructor?.name ?? error.name,
    message,
    stack: `${error.name}: ${message}\n${frames}`,
  };
  if (typeof record.code === 'string') result.code = record.code;
  if (typeof record.constraint === 'string') result.constraint = record.constraint;
  if (typeof record.table === 'string') result.table = record.table;
  if (error.cause !== undefined && depth < 3) result.cause = safeError(error.cause, depth + 1);
  return result;
}

function blankValues(message: string): string {
  return message.replace(QUOTED, (m) => (m.startsWith('(') ? '(…)=(…)' : `${m[0]}…${m[0]}`)).slice(0, 500);
}

/**
 * A name for a SQL statement that carries no data: its leading comment name (`/* findUser *\/`)
 * when it has one, else its verb and first table ("select api_keys", "insert into events").
 * The same name labels SQL spans.
 */
export function statementName(text: string): string {
  const named = text.match(/^\s*\/\*\s*([A-Za-z0-9_.-]{1,64})\s*\*\//);
  if (named) return named[1]!;
  const sql = text.replace(/\s+/g, ' ').trim();
  const verb = sql.match(
    /^(with|select|insert|update|delete|begin|commit|rollback|savepoint|release|set|create|alter|drop|lock)\b/i,
  );
  if (!verb) return 'sql';
  const v = verb[1]!.toLowerCase();
  const table =
    v === 'insert'
      ? sql.match(/^insert into "?([A-Za-z0-9_]+)"?/i)
      : v === 'update'
        ? sql.match(/^update "?([A-Za-z0-9_]+)"?/i)
        : v === 'delete'
          ? sql.match(/^delete from "?([A-Za-z0-9_]+)"?/i)
          : v === 'select' || v === 'with'
            ? sql.match(/ from "?([A-Za-z0-9_]+)"?/i)
            : null;
  return table ? `${v} ${table[1]}` : v;
}

/** Pino serializers that keep errors safe under any of the keys our code logs them as. */
export const safeSerializers = { err: safeError, error: safeError };

import { tracingChannel } from 'node:diagnostics_channel';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';

/** What each request's line says (see registerRequestObservation). */
export interface RequestLineFields {
  reqId: string;
  traceId: string | undefined;
  credentialId: string | undefined;
  method: string;
  route: string;
  operation: string | undefined;
  statusCode: number;
  durationMs: number;
}

/** Writes the line, or answers false when pino must write it (someone listens to pino's lines). */
export type RequestLineWriter = (fields: RequestLineFields) => boolean;

/** pino traces each line it serialises on this channel (APM tools subscribe to it). */
const PINO_LINES = tracingChannel('pino_asJson');

const INFO = 30;
const MESSAGE = ',"msg":"request completed"';
/** Text that can stand in a JSON string as it is: no quote, backslash, control character or surrogate. */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** pino's internal symbols read here (msgPrefixSym is missing from its types). */
const PINO_SYMBOLS = [
  'serializersSym',
  'stringifiersSym',
  'wildcardFirstSym',
  'errorKeySym',
  'lsCacheSym',
  'timeSym',
  'chindingsSym',
  'streamSym',
  'endSym',
  'formattersSym',
  'mixinSym',
  'hooksSym',
  'messageKeySym',
  'nestedKeySym',
  'msgPrefixSym',
  'needsMetadataGsym',
] as const;

const sym = pino.symbols as unknown as Record<(typeof PINO_SYMBOLS)[number], symbol>;

/**
 * Whether this pino still has every internal read here: a version that renamed one would read as
 * "no formatter, no hook…" below, so without all of them pino writes every line.
 */
const KNOWS_PINO = PINO_SYMBOLS.every((name) => typeof sym[name] === 'symbol');

type PinoInternals = Record<symbol, unknown>;

/** The keys of the line, its message's included: a serializer or redaction of any of them is pino's to apply. */
const LINE_KEYS = [
  'reqId',
  'traceId',
  'credentialId',
  'method',
  'route',
  'operation',
  'statusCode',
  'durationMs',
  'msg',
] as const;

/**
 * Writes each request's line as `root.info(fields, 'request completed')` would, the same bytes to
 * the same stream, without pino's general walk over an object: that walk escapes every key, looks
 * up a serializer and a stringifier for each and switches on each value's type, which made the line
 * dearer than the rest of its logging (the bench's info / warn ratio). Here the keys are constants,
 * numbers are written as they are, and a string is quoted as it is unless it holds a character JSON
 * must escape (then JSON.stringify, which also escapes a lone surrogate pino would write raw).
 *
 * Only for a root logger whose lines pino writes plainly: no log formatter, mixin, log-method or
 * stream hook, nested key, message prefix or other message key, no serializer or redaction of the
 * line's keys, and a stream that does not ask for each line's metadata (pino.multistream does).
 * Anything else gets undefined, and pino writes the line; so does a line written while something
 * listens on pino's `pino_asJson` tracing channel. (Not byte for byte in one case: a lone
 * surrogate, which pino would write unescaped, is written escaped, so the line stays valid UTF-8.)
 */
export function requestLineWriter(root: FastifyBaseLogger): RequestLineWriter | undefined {
  if (!KNOWS_PINO) return undefined;
  const logger = root as unknown as PinoInternals & pino.Logger;
  const formatters = logger[sym.formattersSym] as { log?: unknown } | undefined;
  const hooks = logger[sym.hooksSym] as { streamWrite?: unknown; logMethod?: unknown } | undefined;
  const serializers = (logger[sym.serializersSym] ?? {}) as Record<string, unknown>;
  const stringifiers = (logger[sym.stringifiersSym] ?? {}) as Record<string | symbol, unknown>;
  const stream = logger[sym.streamSym] as { write(line: string): unknown } & PinoInternals;
  const plain =
    formatters?.log === undefined &&
    !logger[sym.mixinSym] &&
    !hooks?.streamWrite &&
    !hooks?.logMethod &&
    !LINE_KEYS.some((key) => serializers[key] || stringifiers[key]) &&
    // pino passes its error key through the `err` serializer too.
    !(serializers.err && (LINE_KEYS as readonly unknown[]).includes(logger[sym.errorKeySym])) &&
    !stringifiers[sym.wildcardFirstSym] &&
    !logger[sym.nestedKeySym] &&
    !logger[sym.msgPrefixSym] &&
    logger[sym.messageKeySym] === 'msg' &&
    stream?.[sym.needsMetadataGsym] !== true &&
    typeof stream?.write === 'function';
  if (!plain) return undefined;
  const prefix = (logger[sym.lsCacheSym] as Record<number, string>)[INFO];
  const time = logger[sym.timeSym] as (this: unknown) => string;
  const end = logger[sym.endSym] as string;
  if (typeof prefix !== 'string' || typeof time !== 'function') return undefined;
  return (fields) => {
    // Something listening to pino's lines must see this one too: pino writes it then.
    if (PINO_LINES.hasSubscribers) return false;
    // The level can change while the process runs, and so can the root's bindings (setBindings).
    if (!logger.isLevelEnabled('info')) return true;
    let line = `${prefix}${time.call(logger)}${logger[sym.chindingsSym] as string},"reqId":${quoted(fields.reqId)}`;
    if (fields.traceId !== undefined) line += `,"traceId":${quoted(fields.traceId)}`;
    if (fields.credentialId !== undefined) line += `,"credentialId":${quoted(fields.credentialId)}`;
    line += `,"method":${quoted(fields.method)},"route":${quoted(fields.route)}`;
    if (fields.operation !== undefined) line += `,"operation":${quoted(fields.operation)}`;
    line += `,"statusCode":${finite(fields.statusCode)},"durationMs":${finite(fields.durationMs)}${MESSAGE}${end}`;
    stream.write(line);
    return true;
  };
}

function quoted(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** pino writes a number that is not finite as null. */
function finite(value: number): string {
  return Number.isFinite(value) ? `${value}` : 'null';
}

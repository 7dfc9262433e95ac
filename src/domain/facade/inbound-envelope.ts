import { badInput } from '../errors.js';

/** An upstream event as the spec's webhook envelope gives it, checked. */
export interface InboundEnvelope {
  id: string;
  type: string;
  /** The upstream's `created`, no later than when it arrived (an upstream clock ahead is not followed). */
  created: Date;
  data: Record<string, unknown>;
}

/**
 * How long a facade remembers an event's `id`, and so the oldest `created` it takes. The
 * upstream's signature carries no timestamp, so an event older than the events it still holds
 * could be an old delivery sent again; its retries end about 8.6 h after the first failure. The
 * events table keeps each event RETENTION_EVENTS_DAYS (30 at least) from its `created`, so an
 * event taken is remembered for at least 23 days more.
 */
export const INBOUND_MAX_AGE_MS = 7 * 24 * 3_600_000;

const MAX_ID_LENGTH = 255;
const KIND = /^[A-Za-z0-9_.-]{1,100}$/;

/**
 * The spec's envelope, `{id, type, created, data}`: `id` a string, `type` a kind, `created` Unix
 * seconds, `data` an object (kept as sent: the spec shows it for bill, deposit and offramp events
 * only, and the facade invents nothing for the others). Anything else is refused naming the field.
 */
export function readEnvelope(body: Buffer, now: Date): InboundEnvelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw badInput('body', 'The body is not valid JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw badInput('body', 'The body must be the event envelope {id, type, created, data}.');
  const { id, type, created, data } = parsed as Record<string, unknown>;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH)
    throw badInput('id', `id must be a string of 1-${MAX_ID_LENGTH} characters.`);
  if (typeof type !== 'string' || !KIND.test(type))
    throw badInput('type', 'type must be an event kind such as deposit.completed.');
  if (typeof created !== 'number' || !Number.isFinite(created))
    throw badInput('created', 'created must be a Unix time in seconds.');
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw badInput('data', 'data must be an object.');
  const at = Math.min(Math.floor(created) * 1000, now.getTime());
  if (at < now.getTime() - INBOUND_MAX_AGE_MS)
    throw badInput('created', 'The event is older than the 7 days a facade remembers event ids for; it is not taken.');
  return { id, type, created: new Date(at), data: data as Record<string, unknown> };
}

import type { UnknownOutcome } from '../../src/domain/facade/operator-queue.js';
import type { Services } from '../../src/services.js';

/**
 * The facade's operator queue in the admin CLI (docs/facade.md#the-operator-queue):
 *
 *   admin facade-unknowns [--all] [--limit N]
 *   admin facade-resolve <id> --reference <upstream bill reference> --note "…"
 *   admin facade-resolve <id> --failed --note "…"
 */
export const FACADE_COMMANDS = ['facade-unknowns', 'facade-resolve'];

export const FACADE_OPTIONS = {
  all: { type: 'boolean', default: false },
  reference: { type: 'string' },
  failed: { type: 'boolean', default: false },
} as const;

export interface FacadeValues {
  all?: boolean | undefined;
  reference?: string | undefined;
  failed?: boolean | undefined;
  note?: string | undefined;
  limit?: string | undefined;
  id?: string | undefined;
}

export class FacadeUsageError extends Error {}

type Output = { json: unknown; text: string };

/** Runs a facade command; undefined when `command` is not one. */
export async function runFacadeCommand(
  services: Services,
  command: string | undefined,
  positionals: string[],
  values: FacadeValues,
): Promise<Output | undefined> {
  if (!command || !FACADE_COMMANDS.includes(command)) return undefined;
  const queue = services.unknownOutcomes;
  if (!queue)
    throw new FacadeUsageError(`${command} is for a facade: run it with GATEWAY_MODE=facade and its UPSTREAM_URL`);
  if (command === 'facade-unknowns') {
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new FacadeUsageError('--limit must be a whole number from 1 to 1000');
    const entries = await queue.list({ all: values.all === true, limit });
    const empty = values.all ? 'No mutation of unknown outcome.' : 'The operator queue is empty.';
    return { json: entries, text: entries.map(describe).join('\n') || empty };
  }
  const id = positionals[1] ?? values.id;
  const note = values.note?.trim();
  if (!id || !note || (values.failed === true) === (values.reference !== undefined))
    throw new FacadeUsageError(
      'facade-resolve needs the id, one of --reference <upstream reference> or --failed, and --note "…"',
    );
  const resolved = await queue.resolve(
    id,
    values.failed ? { failed: true, note } : { reference: values.reference!, note },
  );
  return {
    json: resolved,
    text: `Settled ${resolved.id}: ${resolved.state}${values.reference ? ` (upstream record ${values.reference})` : ''}; a retry with its key replays this answer`,
  };
}

function describe(u: UnknownOutcome): string {
  const what = u.match
    ? `${u.match.type} ${u.match.customer} ${u.match.amountKobo ?? '-'} kobo${u.match.reference ? ` ref ${u.match.reference}` : ''}`
    : '';
  const where = u.queuedAt ? 'queued' : 'matching';
  return `${u.id}  ${where.padEnd(8)} ${String(u.ageSeconds).padStart(6)} s  ${u.environment} ${u.userId} ${u.operation} key ${u.key}  ${what}${u.lastLook ? `  (${u.lastLook})` : ''}`;
}

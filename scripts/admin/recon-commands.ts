import type { Environment } from '../../src/domain/auth/permissions.js';
import type { ReconBreak, ReconNotices, ReconRun } from '../../src/domain/reconciliation/reconciliation-service.js';
import type { Services } from '../../src/services.js';

type Output = { json: unknown; text: string; ok?: boolean };

/** The lines an operator must not miss: aged breaks and clearing past its window. */
export function describeNotices(notices: ReconNotices, maxAgeHours: number): string[] {
  const lines: string[] = [];
  if (notices.agedBreaks > 0)
    lines.push(`NOTICE: ${notices.agedBreaks} open break(s) older than ${maxAgeHours} h: see recon-breaks --open`);
  for (const c of notices.overdueClearing)
    lines.push(
      `NOTICE: ${c.provider} (${c.environment}) clearing is ${c.clearingMinor} kobo past its settlement window (day ${c.businessDate})`,
    );
  for (const u of notices.unreadProviders)
    lines.push(`NOTICE: ${u.provider} (${u.environment}) could not be read at the latest run: ${u.error}`);
  return lines;
}

export function describeRun(run: ReconRun): string {
  const lines = [
    `Run ${run.id}  ${run.environment} ${run.businessDate} (${run.trigger}): ${run.outcome.toUpperCase()}, ${run.matched} matched, ${run.breaks} break(s)`,
  ];
  for (const s of run.sources)
    lines.push(
      `  ${s.provider.padEnd(20)} ours ${s.ours}, theirs ${s.theirs}, matched ${s.matched}, breaks ${s.breaks}` +
        (s.clearingMinor !== null ? `, clearing ${s.clearingMinor} kobo${s.clearingDue ? '' : ' (window open)'}` : '') +
        (s.error ? `, NOT READ: ${s.error}` : ''),
    );
  return lines.join('\n');
}

export function describeBreak(b: ReconBreak): string {
  const amounts = `ours ${b.ourAmount ?? '-'} ${b.ourStatus ?? ''} / theirs ${b.theirAmount ?? '-'} ${b.theirStatus ?? ''}`;
  const resolved = b.status === 'resolved' ? `  note: ${b.resolutionNote}` : '';
  return `${b.id}  ${b.status.padEnd(8)} ${b.provider} ${b.businessDate} ${b.itemType} ${b.reference}  ${b.kind}  ${amounts} ${b.currency}${resolved}`;
}

/** `reconcile [--provider X] [--date YYYY-MM-DD] [--env E]`: exit code 4 when it found breaks or could not read a provider. */
export async function reconcileCommand(
  services: Services,
  options: { environments: Environment[]; provider?: string | undefined; date?: string | undefined },
): Promise<Output> {
  const runs: ReconRun[] = [];
  for (const environment of options.environments)
    runs.push(
      await services.reconciliation.run({
        environment,
        trigger: 'manual',
        ...(options.provider ? { provider: options.provider } : {}),
        ...(options.date ? { date: options.date } : {}),
      }),
    );
  const notices = await services.reconciliation.notices();
  const text = [...runs.map(describeRun), ...describeNotices(notices, services.config.RECON_BREAK_MAX_AGE_HOURS)].join(
    '\n',
  );
  return { json: { runs, notices }, text, ok: runs.every((r) => r.outcome === 'ok') };
}

export async function reconRunsCommand(services: Services, limit: number): Promise<Output> {
  const runs = await services.reconciliation.runs(limit);
  const notices = await services.reconciliation.notices();
  return {
    json: { runs, notices },
    text:
      [...runs.map(describeRun), ...describeNotices(notices, services.config.RECON_BREAK_MAX_AGE_HOURS)].join('\n') ||
      'No reconciliation has run yet.',
  };
}

export async function reconBreaksCommand(services: Services, open: boolean, limit: number): Promise<Output> {
  const breaks = await services.reconciliation.breaks({ open, limit });
  const notices = await services.reconciliation.notices();
  return {
    json: { breaks, notices },
    text:
      [...breaks.map(describeBreak), ...describeNotices(notices, services.config.RECON_BREAK_MAX_AGE_HOURS)].join(
        '\n',
      ) || (open ? 'No open breaks.' : 'No breaks.'),
  };
}

export async function reconResolveCommand(services: Services, id: string, note: string): Promise<Output> {
  const resolved = await services.reconciliation.resolve(id, note);
  return { json: resolved, text: `Resolved ${resolved.id}: ${resolved.resolutionNote}` };
}

/**
 * The plans of the statements a bench request sent, for the lists bench's load-independent
 * evidence: which index each statement read, how many index entries it read and kept, and how many
 * table rows it fetched. Latency on a shared machine moves with the neighbours' load; these do not.
 * Statements are recorded as they enter a pool (`record`), then each is run again under
 * `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` with its own parameters through the same pool.
 */
type Query = (...args: unknown[]) => unknown;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'CTE Name'?: string;
  'Scan Direction'?: string;
  'Actual Rows': number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Heap Fetches'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

interface Recorded {
  query: Query;
  self: unknown;
  text: string;
  values: unknown[];
}

export function statementPlans() {
  let recorded: Recorded[] | undefined;
  return {
    /** Called with every statement entering a pool; keeps it while a recording is open. */
    record(query: Query, self: unknown, args: unknown[]) {
      if (!recorded) return;
      const [first, second] = args as [unknown, unknown];
      const text = typeof first === 'string' ? first : (first as { text: string }).text;
      // drizzle passes (config, params); pg also takes (text, params) and ({ text, values }).
      const values = (second ?? (first as { values?: unknown[] }).values) as unknown[] | undefined;
      if (
        !/^\s*(\/\*.*?\*\/\s*)?(select|with)\b/is.test(text) ||
        !/bill_records|wallet_transactions|list_counts/.test(text)
      )
        return;
      recorded.push({ query, self, text, values: values ?? [] });
    },
    start() {
      recorded = [];
    },
    /** One line per recorded statement: its scans, then the buffers it touched. */
    async explain(): Promise<string[]> {
      const statements = recorded ?? [];
      recorded = undefined;
      const lines: string[] = [];
      for (const s of statements) {
        const result = (await s.query.call(s.self, `explain (analyze, buffers, format json) ${s.text}`, s.values)) as {
          rows: Array<Record<string, unknown>>;
        };
        const cell = Object.values(result.rows[0] ?? {})[0];
        const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell)[0].Plan as PlanNode;
        const scans: string[] = [];
        const walk = (node: PlanNode) => {
          if (node['Node Type'].includes('Scan')) scans.push(describe(node));
          for (const child of node.Plans ?? []) walk(child);
        };
        walk(plan);
        const buffers = (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
        lines.push(`${scans.join(' + ')}; ${buffers.toLocaleString('en')} buffers`);
      }
      return lines;
    },
  };
}

/** "Index Only Scan Backward on <index>: 100,000 read → 11 kept, 0 heap fetches". */
function describe(node: PlanNode): string {
  const loops = node['Actual Loops'] ?? 1;
  const kept = node['Actual Rows'] * loops;
  const read = kept + (node['Rows Removed by Filter'] ?? 0) * loops;
  const direction = node['Scan Direction'] === 'Backward' ? ' Backward' : '';
  const heap = node['Heap Fetches'] === undefined ? '' : `, ${node['Heap Fetches'].toLocaleString('en')} heap fetches`;
  const target = node['Index Name'] ?? node['Relation Name'] ?? node['CTE Name'];
  const counts =
    read === kept
      ? `${kept.toLocaleString('en')} rows`
      : `${read.toLocaleString('en')} read → ${kept.toLocaleString('en')} kept`;
  return `${node['Node Type']}${direction}${target ? ` on ${target}` : ''}: ${counts}${heap}`;
}

/**
 * An object graph (a job handler and the services it calls) seen through another database
 * handle: the job's fenced handle instead of the application's. This is how a job's every
 * transaction, in whatever service it runs, is fenced without an async-local store (which in
 * Node 20 costs every request a hook per promise; see pool-routing.ts).
 *
 * Every object reachable from the root through own enumerable properties that holds `from`, or
 * holds such an object, is seen through a proxy that answers `to` for those properties, and the
 * proxies of such children for theirs. Everything else reads and writes the original: a service
 * that keeps state (a last result, a cursor, a health flag) keeps it in one place.
 * What it does not see, and so leaves on `from`: a closure that captured `from`, a module-level
 * handle, what is held in arrays, maps and sets, and a back-reference in a cycle of services.
 * `test/jobs/job-database.test.ts` checks every handler of the gateway as far as this walk sees,
 * and runs two money jobs with the application's handle refusing every statement.
 */

interface Node {
  original: object;
  /** Properties holding `from`. */
  direct: string[];
  /** Properties holding an object seen through a proxy too, by its index in the plan. */
  nested: Array<[string, number]>;
}

/** The proxies to make, children before their parents (the root's, when it has one, is last). */
type Plan = Node[];

/** Deep enough for handler → service → service → store → handle; an object graph is walked once per root. */
const MAX_DEPTH = 6;
/** Objects with more own properties than this are data (caches, maps), not services. */
const MAX_KEYS = 64;

const plans = new WeakMap<object, WeakMap<object, Plan>>();

/**
 * `root` with every use of the handle `from` (as far as it can see, see above) replaced by the
 * handle `to` makes, which is made only when something holds `from`.
 */
export function onDatabase<T extends object>(root: T, from: object, to: () => object): T {
  let byHandle = plans.get(root);
  if (!byHandle) plans.set(root, (byHandle = new WeakMap()));
  let plan = byHandle.get(from);
  if (!plan) byHandle.set(from, (plan = planFor(root, from)));
  if (plan.length === 0 || plan.at(-1)!.original !== root) return root;
  const handle = to();
  const views: object[] = [];
  for (const node of plan) {
    const replaced = new Map<string | symbol, unknown>();
    for (const key of node.direct) replaced.set(key, handle);
    for (const [key, index] of node.nested) replaced.set(key, views[index]);
    views.push(new Proxy(node.original, viewOf(replaced)));
  }
  return views.at(-1) as T;
}

/** Reads of the replaced properties answer their replacement; everything else is the original's. */
function viewOf(replaced: Map<string | symbol, unknown>): ProxyHandler<object> {
  return {
    get: (target, key, receiver) => (replaced.has(key) ? replaced.get(key) : Reflect.get(target, key, receiver)),
    set: (target, key, value) => {
      // A replaced property written anew (no service does) becomes the original's again.
      replaced.delete(key);
      return Reflect.set(target, key, value);
    },
  };
}

function planFor(root: object, from: object): Plan {
  const plan: Plan = [];
  const indexOf = new Map<object, number>();
  const holdsNothing = new Set<object>();
  const visiting = new Set<object>();
  /** Walks cut short (depth, a cycle): a node whose walk was cut is not known to hold nothing. */
  let cuts = 0;
  const visit = (node: object, depth: number): number => {
    const known = indexOf.get(node);
    if (known !== undefined) return known;
    if (holdsNothing.has(node)) return -1;
    if (visiting.has(node) || depth > MAX_DEPTH) {
      cuts += 1;
      return -1;
    }
    const keys = Object.keys(node);
    if (keys.length > MAX_KEYS) return -1;
    const cutsBefore = cuts;
    visiting.add(node);
    const direct: string[] = [];
    const nested: Array<[string, number]> = [];
    for (const key of keys) {
      const value = (node as Record<string, unknown>)[key];
      if (value === from) direct.push(key);
      else if (walkable(value)) {
        const index = visit(value, depth + 1);
        if (index >= 0) nested.push([key, index]);
      }
    }
    visiting.delete(node);
    if (direct.length === 0 && nested.length === 0) {
      if (cuts === cutsBefore) holdsNothing.add(node);
      return -1;
    }
    // A walk cut short may have missed handles deeper down: such a node is walked again when met
    // by another path (a second proxy of it is harmless: its state is on the original).
    if (cuts === cutsBefore) indexOf.set(node, plan.length);
    plan.push({ original: node, direct, nested });
    return plan.length - 1;
  };
  visit(root, 0);
  return plan;
}

/** Objects that may be services: not collections, buffers, dates, promises or errors. */
function walkable(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  return !(
    Array.isArray(value) ||
    ArrayBuffer.isView(value) ||
    value instanceof Map ||
    value instanceof Set ||
    value instanceof WeakMap ||
    value instanceof WeakSet ||
    value instanceof Date ||
    value instanceof RegExp ||
    value instanceof Promise ||
    value instanceof Error
  );
}

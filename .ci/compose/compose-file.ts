import { parse } from 'yaml';
import { type Environment, interpolateTree } from './interpolate.js';
import { shellWords } from './shell-words.js';

/**
 * compose.yaml as `docker compose` reads it: YAML with merge keys (`<<: *gateway`), then every
 * string value interpolated from the given environment. Only what the deployment check runs is
 * kept: each service's image or build, command, environment, dependencies and stop grace period,
 * and the proxy's configuration text.
 */

export interface ComposeService {
  name: string;
  /** Built from this repository (`build:`): runs the Dockerfile's final stage, its ENV and CMD. */
  ownImage: boolean;
  image: string | undefined;
  /** The service's `command`, else undefined (the image's CMD). */
  command: string[] | undefined;
  environment: Record<string, string>;
  /** Service name → condition (`service_started` for the list form). */
  dependsOn: Record<string, string>;
  /** `stop_grace_period` (Compose's default: 10 s), what `docker compose stop` waits before SIGKILL. */
  stopGracePeriodMs: number;
}

export interface ComposeFile {
  services: Map<string, ComposeService>;
  /** `configs.<name>.content`, interpolated (the proxy's Caddyfile). */
  configs: Map<string, string>;
}

type Node = Record<string, unknown>;

const asNode = (value: unknown, where: string): Node => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where}: not a mapping`);
  return value as Node;
};

export function readCompose(text: string, env: Environment): ComposeFile {
  const document = asNode(interpolateTree(parse(text, { merge: true }), env), 'compose.yaml');
  const services = new Map<string, ComposeService>();
  for (const [name, value] of Object.entries(asNode(document.services, 'services'))) {
    const service = asNode(value, `services.${name}`);
    services.set(name, {
      name,
      ownImage: service.build !== undefined,
      image: typeof service.image === 'string' ? service.image : undefined,
      command: commandOf(service.command),
      environment: environmentOf(service.environment, env, name),
      dependsOn: dependsOnOf(service.depends_on),
      stopGracePeriodMs:
        service.stop_grace_period === undefined ? 10_000 : composeDurationMs(String(service.stop_grace_period)),
    });
  }
  const configs = new Map<string, string>();
  for (const [name, value] of Object.entries(document.configs ? asNode(document.configs, 'configs') : {})) {
    const content = asNode(value, `configs.${name}`).content;
    if (typeof content === 'string') configs.set(name, content);
  }
  return { services, configs };
}

function commandOf(command: unknown): string[] | undefined {
  if (command === undefined || command === null) return undefined;
  if (typeof command === 'string') return shellWords(command);
  if (Array.isArray(command)) return command.map(String);
  throw new Error(`command: ${JSON.stringify(command)} is neither a string nor a list`);
}

/** `environment:` as a mapping or a `KEY=VALUE` list; a key without a value takes the caller's (Compose passes the shell's). */
function environmentOf(value: unknown, env: Environment, service: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item) => {
        const text = String(item);
        const at = text.indexOf('=');
        return at < 0 ? [text, null] : [text.slice(0, at), text.slice(at + 1)];
      })
    : Object.entries(asNode(value, `services.${service}.environment`));
  const out: Record<string, string> = {};
  for (const [key, item] of entries) {
    if (item === null || item === undefined) {
      const given = env[key];
      if (given !== undefined) out[key] = given;
    } else if (typeof item === 'object') {
      throw new Error(`services.${service}.environment.${key}: not a scalar`);
    } else out[key] = String(item);
  }
  return out;
}

function dependsOnOf(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (Array.isArray(value)) return Object.fromEntries(value.map((name) => [String(name), 'service_started']));
  return Object.fromEntries(
    Object.entries(asNode(value, 'depends_on')).map(([name, spec]) => [
      name,
      String((spec as { condition?: unknown } | null)?.condition ?? 'service_started'),
    ]),
  );
}

const DURATION_UNITS_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001 };

/** A Compose duration (`30s`, `1m30s`, `1.5s`, `500ms`) in milliseconds. */
export function composeDurationMs(text: string): number {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
    throw new Error(`not a Compose duration: ${JSON.stringify(text)}`);
  return parts.reduce(
    (total, [, amount, unit]) => total + Number(amount) * (DURATION_UNITS_MS[unit as string] ?? 0),
    0,
  );
}

/** The upstreams (`service:port`) and health check path of a Caddy `reverse_proxy` block. */
export function proxyUpstreams(caddyfile: string): {
  upstreams: { service: string; port: number }[];
  healthUri: string;
} {
  const line = /reverse_proxy\s+([^{\n]+)/.exec(caddyfile)?.[1];
  if (!line) throw new Error('the proxy configuration has no reverse_proxy line');
  const upstreams = line
    .trim()
    .split(/\s+/)
    .map((target) => {
      const [service = '', port] = target.split(':');
      return { service, port: Number(port) };
    });
  const healthUri = /health_uri\s+(\S+)/.exec(caddyfile)?.[1];
  if (!healthUri) throw new Error('the proxy configuration has no health_uri');
  return { upstreams, healthUri };
}

/** Services ordered so each comes after those it depends on (among the given ones). */
export function inDependencyOrder(services: ComposeService[]): ComposeService[] {
  const names = new Set(services.map((s) => s.name));
  const done = new Set<string>();
  const ordered: ComposeService[] = [];
  while (ordered.length < services.length) {
    const next = services.find(
      (s) => !done.has(s.name) && Object.keys(s.dependsOn).every((d) => !names.has(d) || done.has(d)),
    );
    if (!next) throw new Error(`depends_on has a cycle among ${services.map((s) => s.name).join(', ')}`);
    done.add(next.name);
    ordered.push(next);
  }
  return ordered;
}

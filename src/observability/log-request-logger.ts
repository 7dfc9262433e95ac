import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type LogArgs = Parameters<FastifyBaseLogger['info']>;

/**
 * A request's logger (`request.log`) that becomes a pino child, with the request id bound, only
 * when something logs through it. Fastify makes that child for every request, and making it (its
 * bindings serialised to JSON, a new logger object) cost about a microsecond; most requests never
 * log through it: the request's own line is written by the root logger with the id given as a field,
 * which writes the same line (see isUntouchedLazy).
 */
class LazyRequestLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
  ) {}

  /** The pino child, made on first use. */
  get child_(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings);
    return this.#child;
  }

  /** True until something has logged through this logger or changed it. */
  get untouched(): boolean {
    return this.#child === undefined;
  }

  get level(): string {
    return this.#child ? this.#child.level : this.parent.level;
  }

  set level(level: string) {
    this.child_.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.child_.child(bindings, options);
  }

  fatal(...args: LogArgs): void {
    this.child_.fatal(...args);
  }
  error(...args: LogArgs): void {
    this.child_.error(...args);
  }
  warn(...args: LogArgs): void {
    this.child_.warn(...args);
  }
  info(...args: LogArgs): void {
    this.child_.info(...args);
  }
  debug(...args: LogArgs): void {
    this.child_.debug(...args);
  }
  trace(...args: LogArgs): void {
    this.child_.trace(...args);
  }
  silent(...args: LogArgs): void {
    this.child_.silent(...args);
  }
}
/**
 * Fastify's child logger factory for the app: lazy children for requests (routes set no log level
 * or serializers of their own; one that did gets a real child at once, as Fastify would make).
 */
export const lazyRequestLoggers: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => {
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new LazyRequestLogger(logger, bindings) as unknown as FastifyBaseLogger;
};

/**
 * True while a request's logger is a lazy one nothing has used: its line can then be written by the
 * root logger with `reqId` as the first field, which reads exactly as the child's line would (pino
 * writes a child's bindings right where an object's first fields go), without making the child.
 */
export function isUntouchedLazy(requestLog: FastifyBaseLogger): boolean {
  return requestLog instanceof LazyRequestLogger && requestLog.untouched;
}

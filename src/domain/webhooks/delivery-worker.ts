import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { Database } from '../../db/client.js';
import type { Clock } from '../clock.js';
import { type Job, LeaseLostError, type JobHandler, type JobOutcome } from '../jobs/job-runner.js';
import { DEFAULT_DISABLE_AFTER_MS, deferWhileOpen, recordEndpointHealth } from './endpoint-health.js';
import { BlockedAddressError, createGuardedAgent, createPlainAgent, type Lookup } from './safe-http.js';
import { observeWebhookAttempt } from '../../observability/job-observation.js';
import type { SecretBox } from './secret-box.js';
import { signatureHeaders } from './signing.js';
import { lazyLoad } from '../lazy-load.js';
import { DELIVERY_JOB, RETRY_DELAYS_MS, type WebhookAttempt } from './webhook.js';
import { secretBinding } from './webhook-service.js';
import { webhookStore } from './webhook-store.js';

export const DELIVERY_TIMEOUT_MS = 10_000;
const SNIPPET_BYTES = 512;

interface HttpClient {
  request: typeof import('undici').request;
  /** For production endpoints: refuses private and reserved addresses after DNS (safe-http.ts). */
  guarded: Dispatcher;
  /** For local sandbox receivers, when allowed. */
  local: Dispatcher;
}

interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  snippet: string | null;
}

export interface DeliveryOptions {
  /** Test seam: the DNS the guarded agent asks. */
  lookup?: Lookup;
  timeoutMs?: number;
  /**
   * Sandbox endpoints may be http and local (a development setting). Off: every endpoint, sandbox
   * or live, follows the production rules. Production servers always run with it off.
   */
  localReceivers?: boolean;
  /** Continuous failure after which an endpoint is disabled (default 5 days). */
  disableAfterMs?: number;
}

/**
 * Sends one attempt of a webhook delivery (a job), outside any transaction, then records it:
 * 2xx succeeds; 410 disables the endpoint; anything else (other statuses, redirects, timeouts,
 * refused connections) fails and is retried after the seed's delays, counted from this attempt,
 * until five retries have failed. A process that dies after sending and before recording loses its
 * lease, and the next worker sends the same event (same `webhook-id`) again: receivers dedupe by id.
 */
export class WebhookDeliveryHandler implements JobHandler {
  readonly kind = DELIVERY_JOB;
  /**
   * undici (0.7 MB of code) and the agents load with the first attempt, not with the server: a
   * start answers its first request before any delivery is due.
   */
  private readonly httpClient: () => Promise<HttpClient>;
  private readonly timeoutMs: number;
  private readonly localReceivers: boolean;
  private readonly disableAfterMs: number;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    options: DeliveryOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.localReceivers = options.localReceivers ?? true;
    this.disableAfterMs = options.disableAfterMs ?? DEFAULT_DISABLE_AFTER_MS;
    this.httpClient = lazyLoad(async () => {
      const [{ request }, guarded, local] = await Promise.all([
        import('undici'),
        createGuardedAgent(options.lookup),
        createPlainAgent(),
      ]);
      return { request, guarded, local };
    });
  }

  async run(job: Job): Promise<JobOutcome> {
    const deliveryId = String(job.payload.deliveryId);
    const manual = job.payload.manual === true;
    // One query for the delivery, its endpoint and its event: this runs once per attempt.
    const found = await webhookStore.findDeliveryWithEndpointAndEvent(this.db, deliveryId);
    if (!found || (!manual && found.delivery.status !== 'pending')) return { status: 'done' };
    const { endpoint, event } = found;
    if (endpoint.deletedAt || (!endpoint.enabled && !manual)) {
      await webhookStore.updateDelivery(this.db, deliveryId, {
        status: 'failed',
        nextAttemptAt: null,
        updatedAt: this.clock.now(),
      });
      return { status: 'done' };
    }

    const startedAt = this.clock.now();
    // An open circuit: the endpoint keeps failing, so this delivery waits (no attempt is counted).
    if (!manual && endpoint.circuitOpenUntil && endpoint.circuitOpenUntil > startedAt)
      return { status: 'retry', at: endpoint.circuitOpenUntil, error: 'Circuit open: the endpoint keeps failing.' };
    const body = JSON.stringify({ id: event.id, type: event.type, created: event.created, data: event.data });
    const binding = secretBinding(endpoint);
    const previousLive =
      endpoint.previousSecretSealed && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > startedAt;
    const headers = signatureHeaders({
      eventId: event.id,
      body,
      at: startedAt,
      secret: this.secrets.open(endpoint.secretSealed, binding),
      previousSecret: previousLive ? this.secrets.open(endpoint.previousSecretSealed!, binding) : null,
    });
    const strict = endpoint.environment === 'production' || !this.localReceivers;
    // Loaded before the clock starts: an attempt's duration is the receiver's.
    const http = await this.httpClient();
    const began = performance.now();
    if (job.signal.aborted) throw new LeaseLostError(job.id);
    const result =
      strict && new URL(endpoint.url).protocol !== 'https:'
        ? { statusCode: null, error: 'Refused: webhook URLs must use https on this server.', snippet: null }
        : await this.post(http, endpoint.url, body, headers, strict ? http.guarded : http.local, job.signal);
    observeWebhookAttempt(result.statusCode, new Date(event.created * 1000), this.clock.now());
    const attempt: Omit<WebhookAttempt, 'attemptNumber'> = {
      startedAt,
      durationMs: Math.round(performance.now() - began),
      statusCode: result.statusCode,
      error: result.error,
      responseSnippet: result.snippet,
      manual,
    };
    return this.record(job, deliveryId, endpoint.id, attempt);
  }

  private async post(
    http: HttpClient,
    url: string,
    body: string,
    headers: Record<string, string>,
    dispatcher: Dispatcher,
    leaseLost: AbortSignal,
  ): Promise<AttemptResult> {
    try {
      const response = await http.request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'PartnerGateway-Webhooks/1.0', ...headers },
        dispatcher,
        signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), leaseLost]),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      if (response.statusCode >= 300 && response.statusCode < 400) {
        // Redirects are never followed (the next hop could be anywhere): a failed attempt, its body unread.
        response.body.on('error', () => undefined).destroy();
        return { statusCode: response.statusCode, error: 'Redirects are not followed.', snippet: null };
      }
      const text = await readSnippet(response.body);
      return { statusCode: response.statusCode, error: null, snippet: text };
    } catch (error) {
      if (leaseLost.aborted) throw leaseLost.reason;
      if (
        error instanceof BlockedAddressError ||
        (error instanceof Error && error.cause instanceof BlockedAddressError)
      )
        return { statusCode: null, error: (error.cause ?? error).toString().replace(/^\w+: /, ''), snippet: null };
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      const message =
        error instanceof Error
          ? error.name === 'TimeoutError'
            ? `No answer within ${this.timeoutMs / 1000} s`
            : `${error.message}${cause}`
          : String(error);
      return { statusCode: null, error: message.slice(0, 500), snippet: null };
    }
  }

  /**
   * Records an attempt and decides what follows. The attempt is numbered under the delivery's row
   * lock, so a re-send by hand racing a scheduled retry gets a number of its own; only scheduled
   * attempts advance the retry schedule, so a re-send by hand never shortens or lengthens it.
   */
  private async record(
    job: Job,
    deliveryId: string,
    endpointId: string,
    attempt: Omit<WebhookAttempt, 'attemptNumber'>,
  ): Promise<JobOutcome> {
    const now = this.clock.now();
    const succeeded = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
    const gone = attempt.statusCode === 410;
    // The common case, a success, is one statement: no transaction holds row locks and a
    // transaction id across round trips (each would hold back vacuum and lock waiters).
    if (succeeded) {
      if (!(await webhookStore.recordSuccessfulAttempt(this.db, job, deliveryId, endpointId, attempt, now)))
        throw new LeaseLostError(job.id);
      return { status: 'done' };
    }
    let circuitOpenUntil: Date | null = null;
    // A worker whose lease was taken over records nothing: the new holder's attempt counts. The
    // runner fences this transaction at its BEGIN (job-fence.ts: the job's row locked, the lease
    // token checked), so no second check here: this transaction holds the delivery's row lock and a
    // transaction id, so it makes no round trip it does not need.
    const retryAt = await this.db.transaction(async (tx) => {
      const { attemptNumber, scheduledBefore } = await webhookStore.takeAttemptNumber(tx, deliveryId, now);
      await webhookStore.insertAttempt(tx, deliveryId, { ...attempt, attemptNumber });
      const scheduledAttempts = scheduledBefore + 1;
      const retryAt =
        !succeeded && !gone && !attempt.manual && scheduledAttempts <= RETRY_DELAYS_MS.length
          ? new Date(attempt.startedAt.getTime() + RETRY_DELAYS_MS[scheduledAttempts - 1]!)
          : null;
      if (succeeded) {
        await webhookStore.updateDelivery(tx, deliveryId, { status: 'succeeded', nextAttemptAt: null, updatedAt: now });
      } else if (retryAt) {
        await webhookStore.updateDelivery(tx, deliveryId, { nextAttemptAt: retryAt, updatedAt: now });
      } else if (!attempt.manual) {
        // Schedule exhausted or 410. (A failed re-send by hand leaves the delivery where the schedule had it.)
        await webhookStore.updateDelivery(tx, deliveryId, { status: 'failed', nextAttemptAt: null, updatedAt: now });
      }
      if (!attempt.manual || succeeded)
        circuitOpenUntil = await recordEndpointHealth(tx, endpointId, succeeded, now, this.disableAfterMs);
      if (gone) {
        await webhookStore.updateEndpoint(tx, endpointId, {
          enabled: false,
          disabledReason: 'The receiver answered 410 Gone.',
          updatedAt: now,
        });
      }
      return retryAt;
    });
    // Best effort, after the attempt has committed: a failure here must not fail the job, whose
    // retry would post the same event again ahead of its schedule.
    if (circuitOpenUntil) await deferWhileOpen(this.db, endpointId, circuitOpenUntil, now).catch(() => undefined);
    return retryAt
      ? { status: 'retry', at: retryAt, error: attempt.error ?? `HTTP ${attempt.statusCode}` }
      : { status: 'done' };
  }
}

async function readSnippet(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= SNIPPET_BYTES) break;
  }
  body.destroy?.();
  return Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8');
}

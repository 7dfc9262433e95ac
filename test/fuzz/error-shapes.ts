/** The seed's error bodies; every error the fuzzer provokes must be one of them. */
export function errorShapeProblem(status: number, body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return 'not a JSON object';
  const b = body as Record<string, unknown>;
  const general =
    b.statusCode === status &&
    typeof b.message === 'string' &&
    typeof b.error === 'string' &&
    (b.details === undefined ||
      (Array.isArray(b.details) &&
        b.details.every((d) => typeof d?.field === 'string' && typeof d?.message === 'string')));
  const rateLimit = status === 429 && b.statusCode === 429 && typeof b.retryAfter === 'number';
  const billNotFound = status === 404 && b.success === false && b.errorCode === 'BILL_NOT_FOUND';
  if (!general && !rateLimit && !billNotFound) return 'not one of the seed error shapes';
  if (status === 400 && general && (typeof b.message !== 'string' || /Variable "\$|cannot represent/.test(b.message)))
    return 'GraphQL text in a REST 400';
  return undefined;
}

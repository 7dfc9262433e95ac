import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../domain/auth/opaque-token.js';

/**
 * The operator pages' guard: `Authorization: Bearer <OPERATOR_TOKEN>`, never a partner's session
 * or API key. Answers 401 itself and returns false when the request does not carry the token.
 */
export function isOperator(request: FastifyRequest, reply: FastifyReply, token: string): boolean {
  const given = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  if (given !== undefined && safeEqual(given, token)) return true;
  void reply
    .code(401)
    .header('www-authenticate', 'Bearer')
    .send({ statusCode: 401, error: 'Unauthorized', message: 'An operator token is required.' });
  return false;
}

import { Type } from '@sinclair/typebox';
import { answerShape, Maybe, Timestamp } from '../upstream/answer-shape.js';

/**
 * `GET /api/v1/user/me` as the spec gives it: the envelope with the user as `data`. Only what the
 * graph's User reads is required; the rest may be absent or null (a NestJS service writes null for
 * an unset column), and extra fields are allowed.
 */
export const UserAnswer = answerShape(
  Type.Object({
    data: Type.Object({
      id: Type.String({ minLength: 1 }),
      createdAt: Timestamp,
      updatedAt: Timestamp,
      deletedDate: Maybe(Timestamp),
      email: Type.String(),
      phone: Maybe(Type.String()),
      firstName: Maybe(Type.String()),
      lastName: Maybe(Type.String()),
      name: Maybe(Type.String()),
      haveTransactionPin: Type.Boolean(),
      verified: Type.Boolean(),
      dob: Maybe(Type.String()),
      isAdmin: Type.Boolean(),
      deviceId: Maybe(Type.String()),
      deviceIp: Maybe(Type.String()),
      deviceModel: Maybe(Type.String()),
      platform: Maybe(Type.String()),
      lastLoggedIn: Maybe(Timestamp),
    }),
  }),
);

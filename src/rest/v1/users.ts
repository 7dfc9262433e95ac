import { Type } from '@sinclair/typebox';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

const USER_FIELDS = `id createdAt updatedAt deletedDate email phone firstName lastName name haveTransactionPin verified
  resetToken resetTokenExpiry dob isAdmin deviceId deviceIp deviceModel platform lastLoggedIn`;

export const UserSchema = Type.Object(
  {
    id: Type.String(),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
    deletedDate: Nullable(DateTimeString),
    email: Type.String(),
    phone: Nullable(Type.String()),
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    name: Type.String(),
    haveTransactionPin: Type.Boolean(),
    verified: Type.Boolean(),
    resetToken: Type.Null({ description: 'Always null: reset tokens are never returned.' }),
    resetTokenExpiry: Type.Null({ description: 'Always null.' }),
    dob: Nullable(Type.String()),
    isAdmin: Type.Boolean(),
    deviceId: Nullable(Type.String()),
    deviceIp: Nullable(Type.String()),
    deviceModel: Nullable(Type.String()),
    platform: Nullable(Type.String()),
    lastLoggedIn: Nullable(DateTimeString),
  },
  { title: 'User' },
);

export const userRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/user/me',
    tag: 'Account',
    summary: 'Retrieve the current user',
    description: 'The user the API key or access token acts for.',
    operation: `query Me { me { ${USER_FIELDS} } }`,
    message: 'User retrieved successfully',
    response: UserSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/users/:id',
    tag: 'Account',
    summary: 'Retrieve a user',
    description: 'A user the credential may act for. Any other id answers 404, exactly like a missing user.',
    operation: `query User($id: ID!) { user(id: $id) { ${USER_FIELDS} } }`,
    params: Type.Object({ id: Type.String({ description: 'User id' }) }),
    message: 'User retrieved successfully',
    response: UserSchema,
  },
]);

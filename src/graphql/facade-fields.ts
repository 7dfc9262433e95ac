import { type GraphQLField, type GraphQLSchema, isObjectType } from 'graphql';
import { notInFacade } from '../domain/facade/not-in-facade.js';

/**
 * What the graph answers in facade mode, by type. Every other root field (queries, mutations,
 * subscriptions) and every other field of a type listed here answers NOT_IN_FACADE before any
 * resolver or guard runs, so nothing is read from the facade's own database, which holds none of
 * the upstream's users, keys or money. docs/facade.md lists the same fields.
 */
export const FACADE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Query: ['apiInfo', 'me', '_service'],
  Mutation: [],
  Subscription: [],
  // The user record as `GET /api/v1/user/me` gives it; its relationships (businesses, wallet,
  // transactions, …) are not asked of the upstream yet.
  User: [
    'id',
    'nodeId',
    'createdAt',
    'updatedAt',
    'deletedDate',
    'email',
    'phone',
    'firstName',
    'lastName',
    'name',
    'haveTransactionPin',
    'verified',
    'resetToken',
    'resetTokenExpiry',
    'dob',
    'isAdmin',
    'deviceId',
    'deviceIp',
    'deviceModel',
    'platform',
    'lastLoggedIn',
  ],
};

/** Wraps every field facade mode does not serve so that it answers NOT_IN_FACADE (called after the guards are applied). */
export function refuseFieldsOutsideFacade(schema: GraphQLSchema): GraphQLSchema {
  for (const [typeName, served] of Object.entries(FACADE_FIELDS)) {
    const type = schema.getType(typeName);
    if (!isObjectType(type)) continue;
    const keep = new Set(served);
    for (const field of Object.values(type.getFields())) {
      if (!keep.has(field.name)) refuse(field as GraphQLField<unknown, unknown>, `${typeName}.${field.name}`);
    }
  }
  return schema;
}

function refuse(field: GraphQLField<unknown, unknown>, name: string): void {
  field.resolve = () => {
    throw notInFacade(name);
  };
  if (field.subscribe)
    field.subscribe = () => {
      throw notInFacade(name);
    };
}

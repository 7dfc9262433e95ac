import {
  defaultFieldResolver,
  type GraphQLFieldResolver,
  type GraphQLSchema,
  isIntrospectionType,
  isObjectType,
} from 'graphql';
import { DomainError } from '../../domain/errors.js';
import type { GraphQLContext } from '../context.js';
import { type AccessRule, accessRuleOf, checkAccess } from './auth.js';
import { COUNTED, countedBefore, registerRootGuard } from './operation-limits.js';
import { consumeLimits, fieldLimitOf } from './rate-limit.js';

/** Root fields the federation library adds; `_entities` also checks each entity in its reference resolver. */
const FEDERATION_FIELDS = new Set(['_service', '_entities']);

export interface GuardOptions {
  /** When true, _service and _entities answer only requests that carry the router's secret. */
  federationRouterOnly: boolean;
}

/**
 * Wraps every root field so that, before its resolver runs, the caller's access is checked and
 * its rate limits are counted. Access is declared in one place (the SDL); a root field without a
 * rule stops start-up, because an undeclared field is a bug. Relationship fields declare their
 * own rule and are checked the same way (guardNestedFields).
 */
export function guardRootFields(schema: GraphQLSchema, options: GuardOptions): GraphQLSchema {
  const mutationType = schema.getMutationType();
  for (const root of [schema.getQueryType(), mutationType, schema.getSubscriptionType()]) {
    if (!root) continue;
    for (const field of Object.values(root.getFields())) {
      if (FEDERATION_FIELDS.has(field.name)) {
        if (options.federationRouterOnly) field.resolve = routerOnly(field.resolve ?? defaultFieldResolver);
        continue;
      }
      const rule: AccessRule | undefined = accessRuleOf(field);
      if (!rule) throw new Error(`${root.name}.${field.name} declares neither @auth(ability:) nor @public in schema/.`);
      const fieldLimit = fieldLimitOf(field);
      const isMutation = root === mutationType;
      // Access (synchronous for a valid credential), the rate limits, and for a mutation the
      // tenant's backlog: a tenant over its cap on pending background work may read, not queue more.
      const guard = (args: unknown, context: GraphQLContext): Promise<void> => {
        const pending = checkAccess(context, rule);
        const counted = pending
          ? pending.then(() => consumeLimits(context, field.name, fieldLimit, args))
          : consumeLimits(context, field.name, fieldLimit, args);
        return isMutation && context.principal
          ? counted.then(() => context.services.backlog.check(context.principal!.userId))
          : counted;
      };
      const resolve = field.resolve ?? defaultFieldResolver;
      const renews = field.subscribe !== undefined;
      const isQuery = root === schema.getQueryType();
      if (isQuery) registerRootGuard(field, { rule, fieldLimit });
      field.resolve = (source, args, context: GraphQLContext, info) => {
        // Counted with the rest of its query before execution (operation-limits.ts): no promise here.
        const before = isQuery ? countedBefore(context, info.operation, info.path.key) : undefined;
        if (before === COUNTED) return resolve(source, args, context, info);
        if (before) throw before;
        return guard(args, context).then(() => {
          // A subscription resolves once per event: each event reads records afresh.
          if (renews) context.renewLoaders?.();
          return resolve(source, args, context, info);
        });
      };
      if (field.subscribe) {
        const subscribe = field.subscribe;
        field.subscribe = async (source, args, context: GraphQLContext, info) => {
          await guard(args, context);
          return subscribe(source, args, context, info);
        };
      }
    }
  }
  guardNestedFields(schema);
  return schema;
}

/**
 * Relationship fields reach data their parent does not hold (a user's transactions, a business's
 * customers), and a parent can be reached several ways (a root field, `node`, `_entities`, a
 * subscription). So each such field declares its own @auth in the SDL and is checked exactly as a
 * root field is, whichever way its parent came. Rate limits stay per operation, on root fields.
 */
function guardNestedFields(schema: GraphQLSchema): void {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || isIntrospectionType(type) || roots.has(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const rule = accessRuleOf(field);
      if (!rule) continue;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: GraphQLContext, info) => {
        const pending = checkAccess(context, rule);
        return pending
          ? pending.then(() => resolve(source, args, context, info))
          : resolve(source, args, context, info);
      };
    }
  }
}

function routerOnly(
  resolve: GraphQLFieldResolver<unknown, GraphQLContext>,
): GraphQLFieldResolver<unknown, GraphQLContext> {
  return (source, args, context, info) => {
    if (!context.fromRouter) {
      throw new DomainError('FORBIDDEN', `${info.fieldName} is reserved for the federation router.`);
    }
    return resolve(source, args, context, info);
  };
}

import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { DomainError } from '../../domain/errors.js';
import type { GraphQLContext } from '../context.js';
import { type AccessRule, accessRuleOf, checkAccess } from './auth.js';
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
 * rule stops start-up, because an undeclared field is a bug. Nested fields are reached only
 * through a root field, so they inherit its checks.
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
      const guard = async (args: unknown, context: GraphQLContext) => {
        const pending = checkAccess(context, rule);
        if (pending) await pending;
        await consumeLimits(context, field.name, fieldLimit, args);
        // A tenant over its cap on pending background work may read, not queue more.
        if (root === mutationType && context.principal) await context.services.backlog.check(context.principal.userId);
      };
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = async (source, args, context: GraphQLContext, info) => {
        await guard(args, context);
        return resolve(source, args, context, info);
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
  return schema;
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

import { getNamedType, isCompositeType, isObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abilitiesOf, PERMISSION_LEVELS } from '../../src/domain/auth/permissions.js';
import { abilitiesOfScopes, type Scope } from '../../src/domain/connect/scopes.js';
import { accessRuleOf } from '../../src/graphql/directives/auth.js';
import { buildSchema } from '../../src/graphql/schema.js';
import { graphql, seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { REDIRECT_URI, registerApp } from '../helpers/oauth-flow.js';
import { seedEveryKind } from './seed.js';

const schema = buildSchema();

/** How a query reaches an object of each type that has guarded relationship fields (from `me`). */
const PATHS: Record<string, (inner: string) => string> = {
  User: (inner) => `me { ${inner} }`,
  SolanaWallet: (inner) => `me { solanaWallet { ${inner} } }`,
  Business: (inner) => `me { businesses { ${inner} } }`,
  BusinessCustomer: (inner) => `me { businesses { customers(first: 1) { nodes { ${inner} } } } }`,
  Transaction: (inner) => `me { transactions(first: 1) { nodes { ${inner} } } }`,
  WalletTransaction: (inner) => `me { walletTransactions(first: 1) { nodes { ${inner} } } }`,
  BillRecord: (inner) => `me { billRecords(first: 1) { nodes { ${inner} } } }`,
  Deposit: (inner) => `me { deposits(first: 1) { nodes { ${inner} } } }`,
  Payout: (inner) => `me { payouts(first: 1) { nodes { ${inner} } } }`,
  SolanaTransfer: (inner) => `me { solanaTransfers(first: 1) { nodes { ${inner} } } }`,
  OfframpOrder: (inner) => `me { offrampOrders(first: 1) { nodes { ${inner} } } }`,
};
/** Reached only through subscriptions: test/graph/subscriptions.test.ts selects each of their edges (all need READ). */
const SUBSCRIPTION_PAYLOADS = new Set(['WalletUpdate', 'BillUpdate', 'OfframpOrderUpdate']);

/** Every field below the root types that declares its own @auth: the relationship edges. */
const edges = Object.values(schema.getTypeMap())
  .filter((type) => isObjectType(type) && !type.name.startsWith('__'))
  .filter(
    (type) => ![schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].includes(type as never),
  )
  .flatMap((type) =>
    Object.values((type as import('graphql').GraphQLObjectType).getFields()).flatMap((field) => {
      const rule = accessRuleOf(field);
      if (!rule || rule.public) return [];
      const selection = isCompositeType(getNamedType(field.type)) ? `${field.name} { __typename }` : field.name;
      return [{ type: type.name, field: field.name, ability: rule.ability, selection }];
    }),
  );

describe('every relationship edge checks its own permission, for keys and Connect tokens alike', () => {
  let t: TestApp;
  let tenant: Tenant;
  const tokens: Partial<Record<Scope, string>> = {};
  beforeAll(async () => {
    ({ t, tenant } = await startTestApp({ config: { RATE_LIMIT_PER_MINUTE: 100_000 } }));
    await seedEveryKind(t, tenant, await seedTenant(t.services), 'perm');
    const business = await t.services.users.createBusiness(tenant.user.id, 'Perm Ltd');
    await graphql(
      t.app,
      tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation { createBusinessCustomer(businessId: "${business.id}", input: { name: "Kemi" }) { id } }`,
    );
    const { client } = await registerApp(t.services, tenant.user.id);
    for (const scope of ['read', 'transact', 'manage'] as const) {
      const code = await t.services.authorizationServer.issueCode(
        { client, redirectUri: REDIRECT_URI, scopes: [scope], state: undefined, codeChallenge: undefined },
        tenant.user.id,
      );
      tokens[scope] = (
        await t.services.authorizationServer.redeemCode(client, { code, redirectUri: REDIRECT_URI })
      ).access_token;
    }
  });
  afterAll(() => t.close());

  it('knows how to reach every guarded edge', () => {
    const unreachable = edges.filter((e) => !PATHS[e.type] && !SUBSCRIPTION_PAYLOADS.has(e.type));
    expect(unreachable).toEqual([]);
    expect(edges.length).toBeGreaterThan(30);
  });

  const credentials = () => [
    ...PERMISSION_LEVELS.map((level) => ({ name: level, key: tenant.keys[level], abilities: abilitiesOf(level) })),
    ...(['read', 'transact', 'manage'] as const).map((scope) => ({
      name: `Connect scope ${scope}`,
      key: tokens[scope]!,
      abilities: abilitiesOfScopes([scope]),
    })),
  ];

  it.each(edges.filter((e) => PATHS[e.type]))('$type $field needs $ability', async (edge) => {
    for (const credential of credentials()) {
      const query = `{ ${PATHS[edge.type]!(edge.selection)} }`;
      const { body } = await graphql(t.app, credential.key, query);
      const denied = (body.errors ?? []).filter((e) => e.extensions.code === 'FORBIDDEN');
      if (credential.abilities.has(edge.ability)) {
        expect(body.errors, `${credential.name}: ${query}`).toBeUndefined();
        expect(JSON.stringify(body.data), `${credential.name}: ${query}`).toContain(`"${edge.field}"`);
      } else {
        expect(denied.length, `${credential.name}: ${query}`).toBeGreaterThan(0);
        expect((denied[0] as unknown as { path: string[] }).path.at(-1)).toBe(edge.field);
      }
    }
  });
});

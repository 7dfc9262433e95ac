import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abilitiesOf, PERMISSION_LEVELS, type PermissionLevel } from '../../src/domain/auth/permissions.js';
import { buildSchema } from '../../src/graphql/schema.js';
import { compileRoutes } from '../../src/rest/engine.js';
import { accessRuleOf } from '../../src/graphql/directives/auth.js';
import { restV1Routes } from '../../src/rest/v1/index.js';
import { graphql, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { sampleVariables } from '../helpers/sample-variables.js';

const schema = buildSchema();
const routes = compileRoutes(schema, restV1Routes);
const SAMPLE_ID = '00000000-0000-4000-8000-000000000000';
/** Root fields with no REST path by design: global object identification (test/graph covers their access). */
const GRAPH_ONLY = new Set(['node', 'nodes']);
/**
 * Root fields whose REST routes exist only in facade mode (src/rest/facade-inbound-routes.ts), where
 * the upstream holds the keys this matrix makes: their ability is checked here from the schema.
 */
const FACADE_ONLY = { upstreamWebhookReceiver: 'MANAGE', registerUpstreamWebhookSecret: 'MANAGE' } as const;

function allowed(level: PermissionLevel, route: (typeof routes)[number]): boolean {
  const granted = abilitiesOf(level);
  return route.access.every((rule) => rule.public || granted.has(rule.ability));
}

describe('the 401/403 matrix over every REST route and its GraphQL operation', () => {
  let t: TestApp;
  let tenant: Tenant;
  // Every route is called without a key too: the per-IP anonymous budget is raised for that.
  beforeAll(
    async () =>
      ({ t, tenant } = await startTestApp({
        config: { RATE_LIMIT_ANONYMOUS_PER_MINUTE: 100_000, RATE_LIMIT_PER_MINUTE: 100_000 },
      })),
  );
  afterAll(() => t.close());

  it('covers every root field of the graph', () => {
    const covered = new Set(routes.map((r) => r.rootField));
    const rootFields = [schema.getQueryType()!, schema.getMutationType()!]
      .flatMap((type) => Object.keys(type.getFields()))
      .filter((name) => !name.startsWith('_') && !GRAPH_ONLY.has(name) && !(name in FACADE_ONLY));
    expect(rootFields.filter((f) => !covered.has(f))).toEqual([]);
    const fields = { ...schema.getQueryType()!.getFields(), ...schema.getMutationType()!.getFields() };
    for (const [name, ability] of Object.entries(FACADE_ONLY))
      expect(accessRuleOf(fields[name]!), name).toEqual({ public: false, ability });
  });

  it('declares the ability DESIGN §4 gives each operation', () => {
    const declared = Object.fromEntries(
      routes.map((r) => [r.rootField, r.access.map((a) => (a.public ? 'public' : a.ability)).join()]),
    );
    expect(declared).toEqual({
      apiInfo: 'public',
      me: 'READ',
      user: 'READ',
      events: 'READ',
      event: 'READ',
      triggerSandboxEvent: 'TRANSACT',
      apiKeys: 'MANAGE',
      createApiKey: 'MANAGE',
      revokeApiKey: 'MANAGE',
      webhookEndpoints: 'MANAGE',
      webhookEndpoint: 'MANAGE',
      createWebhookEndpoint: 'MANAGE',
      updateWebhookEndpoint: 'MANAGE',
      deleteWebhookEndpoint: 'MANAGE',
      rotateWebhookSecret: 'MANAGE',
      resendWebhookDelivery: 'MANAGE',
      sendTestWebhook: 'MANAGE',
      offrampAssets: 'READ',
      offrampQuote: 'READ',
      offrampPayoutBanks: 'READ',
      offrampOrders: 'READ',
      offrampOrder: 'READ',
      verifyOfframpBankAccount: 'READ',
      initiateOfframpOrder: 'TRANSACT',
      simulateOfframpDeposit: 'TRANSACT',
      walletBalance: 'READ',
      walletLedger: 'READ',
      walletBalances: 'READ',
      walletStatement: 'READ',
      auditRecords: 'MANAGE',
      walletTransactions: 'READ',
      walletTransaction: 'READ',
      walletTransactionByReference: 'READ',
      paymentMethods: 'READ',
      paymentMethod: 'READ',
      deposit: 'READ',
      payout: 'READ',
      banks: 'READ',
      resolveBankAccount: 'READ',
      depositWithPaymentMethod: 'TRANSACT',
      depositByBankTransfer: 'TRANSACT',
      depositByUssd: 'TRANSACT',
      createPaymentLink: 'TRANSACT',
      fundWallet: 'TRANSACT',
      authorizeDeposit: 'TRANSACT',
      createVirtualAccount: 'TRANSACT',
      simulateVirtualAccountTransfer: 'TRANSACT',
      withdraw: 'TRANSACT',
      transfer: 'TRANSACT',
      createPaymentMethod: 'MANAGE',
      deletePaymentMethod: 'MANAGE',
      setDefaultPaymentMethod: 'MANAGE',
      billCategories: 'READ',
      billers: 'READ',
      billerItems: 'READ',
      electricityBillers: 'READ',
      discos: 'READ',
      providerItems: 'READ',
      billRecords: 'READ',
      billRecord: 'READ',
      billBeneficiaries: 'READ',
      billSchedules: 'READ',
      validateBillCustomer: 'READ',
      buyAirtime: 'TRANSACT',
      buyMobileData: 'TRANSACT',
      subscribeCableTv: 'TRANSACT',
      payElectricity: 'TRANSACT',
      deleteBillBeneficiary: 'MANAGE',
      cancelBillSchedule: 'TRANSACT',
      solanaWallet: 'READ',
      solanaBalance: 'READ',
      solanaTokenBalance: 'READ',
      solanaPortfolio: 'READ',
      walletPortfolio: 'READ',
      swapQuote: 'READ',
      solanaTransfer: 'READ',
      solanaTransfers: 'READ',
      transferSolanaToken: 'TRANSACT',
      transferSol: 'TRANSACT',
      swapTokens: 'TRANSACT',
      sandboxSolanaFaucet: 'TRANSACT',
      evmNetworks: 'READ',
      evmWallet: 'READ',
      evmBalance: 'READ',
      evmTokenBalance: 'READ',
      evmPortfolio: 'READ',
      evmTransfer: 'READ',
      evmTransfers: 'READ',
      sendEvmNative: 'TRANSACT',
      sendEvmToken: 'TRANSACT',
      sandboxEvmFaucet: 'TRANSACT',
      evmSwapQuote: 'READ',
      swapEvmTokens: 'TRANSACT',
      portfolio: 'READ',
      businessCustomers: 'READ',
      businessCustomer: 'READ',
      createBusinessCustomer: 'MANAGE',
      updateBusinessCustomer: 'MANAGE',
      disableBusinessCustomer: 'MANAGE',
      graphqlAccess: 'MANAGE',
      setGraphQLAccess: 'MANAGE',
      registerTrustedDocuments: 'MANAGE',
      removeTrustedDocuments: 'MANAGE',
      testClocks: 'READ',
      testClock: 'READ',
      createTestClock: 'TRANSACT',
      attachTestClock: 'TRANSACT',
      detachTestClock: 'TRANSACT',
      advanceTestClock: 'TRANSACT',
      deleteTestClock: 'TRANSACT',
    });
    expect(accessRuleOf(schema.getSubscriptionType()!.getFields().billUpdates!)).toEqual({
      public: false,
      ability: 'READ',
    });
    for (const field of ['depositUpdates', 'payoutUpdates', 'transactionUpdates']) {
      expect(accessRuleOf(schema.getSubscriptionType()!.getFields()[field]!)).toEqual({
        public: false,
        ability: 'READ',
      });
    }
    expect(accessRuleOf(schema.getSubscriptionType()!.getFields().events!)).toEqual({ public: false, ability: 'READ' });
    expect(accessRuleOf(schema.getSubscriptionType()!.getFields().offrampOrderUpdates!)).toEqual({
      public: false,
      ability: 'READ',
    });
  });

  for (const route of routes) {
    const url = route.path.replace(/:\w+/g, SAMPLE_ID);
    const isPublic = route.access.every((a) => a.public);

    it(`${route.method} ${route.path}`, async () => {
      const call = (headers: Record<string, string>) =>
        t.app.inject({ method: route.method, url, headers, ...(route.method === 'POST' ? { payload: {} } : {}) });

      const anonymous = await call({});
      const forged = await call({ 'x-api-key': 'pgw_sbx_' + 'A'.repeat(43) });
      if (isPublic) {
        expect(anonymous.statusCode).toBe(200);
        return;
      }
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(forged.statusCode).toBe(401);

      for (const level of PERMISSION_LEVELS) {
        const response = await call({ 'x-api-key': tenant.keys[level] });
        if (allowed(level, route)) {
          expect([401, 403], `${level} should pass ${route.method} ${route.path}`).not.toContain(response.statusCode);
        } else {
          expect(response.statusCode, `${level} must be refused`).toBe(403);
          expect(response.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
        }
      }

      const variables = sampleVariables(schema, route.document);
      const noKey = await graphql(t.app, undefined, route.operation, variables);
      expect(noKey.body.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
      for (const level of PERMISSION_LEVELS) {
        const { body } = await graphql(t.app, tenant.keys[level], route.operation, variables);
        const codes = (body.errors ?? []).map((e) => e.extensions.code);
        if (allowed(level, route)) {
          expect(codes).not.toContain('FORBIDDEN');
          expect(codes).not.toContain('UNAUTHENTICATED');
        } else {
          expect(codes).toContain('FORBIDDEN');
        }
      }
    });
  }
});

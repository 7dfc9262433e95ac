import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { HOME_SCREEN } from '../../src/graphql/home-screen.js';
import { seedEveryKind } from './seed.js';

describe('the connected graph: the home screen and each relationship both ways', () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  let quoteId: string;
  beforeAll(async () => {
    ({ t, tenant } = await startTestApp());
    other = await seedTenant(t.services);
    ({ quoteId } = await seedEveryKind(t, tenant, other, 'home'));
  });
  afterAll(() => t.close());

  const read = async (query: string, variables?: Record<string, unknown>, key = tenant.keys.READ_ONLY) => {
    const { body } = await graphql(t.app, key, query, variables);
    expect(body.errors).toBeUndefined();
    return body.data!;
  };

  it('answers the home screen in one request with what each transaction was', async () => {
    const { me } = await read(HOME_SCREEN);
    expect(me.name).toBe('Ada Obi');
    // 5000 in, 200 airtime + fee, 300 payout + fee held, 25 transferred.
    expect(me.wallet.availableKobo).toBeLessThan(5000_00);
    const kinds = me.transactions.nodes.map((n: { kind: string }) => n.kind);
    expect(kinds).toEqual(['OFFRAMP', 'SWAP', 'TRANSFER_OUT', 'PAYOUT', 'BILL', 'DEPOSIT']);
    expect(me.transactions.totalCount).toBe(6);
    const records = Object.fromEntries(
      me.transactions.nodes.map((n: { kind: string; record: unknown }) => [n.kind, n.record]),
    );
    expect(records['DEPOSIT']).toMatchObject({ __typename: 'Deposit', amount: 5000, method: 'virtual_account' });
    expect(records['BILL']).toMatchObject({ __typename: 'BillRecord', amount: 200, customer: '08031234567' });
    expect(records['PAYOUT']).toMatchObject({ __typename: 'Payout', amount: 300 });
    expect(records['TRANSFER_OUT']).toMatchObject({
      __typename: 'WalletTransaction',
      type: 'TRANSFER_OUT',
      amount: 25,
    });
    expect(records['SWAP']).toMatchObject({
      __typename: 'SolanaTransfer',
      kind: 'swap',
      tokenAmount: '2',
      quote: { quoteId, toToken: { symbol: 'USDT' } },
    });
    expect(records['OFFRAMP']).toMatchObject({
      __typename: 'OfframpOrder',
      tokenAmount: '12',
      token: 'USDC',
      orderStatus: 'initiated',
    });
    expect(me.openOfframpOrders.nodes.map((o: { reference: string }) => o.reference)).toEqual(['OFF-home']);
    expect(me.solanaWallet.portfolio.tokens.map((x: { symbol: string }) => x.symbol)).toContain('USDT');
  });

  it('leads from each record back to its transaction, and from the transaction to the record', async () => {
    const { me } = await read(`{ me {
      deposits(first: 5) { nodes { id reference transaction { id kind record { ... on Deposit { id } } } } }
      payouts(first: 5) { nodes { id transaction { kind walletTransaction { type } record { ... on Payout { id } } } } }
      billRecords(first: 5) { nodes { id transaction { kind record { ... on BillRecord { id } } } } }
      offrampOrders(first: 5) { nodes { id transaction { kind record { ... on OfframpOrder { id } } } } }
      solanaTransfers(first: 5) { nodes { id kind transaction { kind record { ... on SolanaTransfer { id } } } } }
      walletTransactions(first: 10) { nodes { type transaction { kind } record { __typename } } }
    } }`);
    const [deposit] = me.deposits.nodes;
    expect(deposit.transaction).toEqual({
      id: expect.stringMatching(/^wallet:/),
      kind: 'DEPOSIT',
      record: { id: deposit.id },
    });
    expect(me.payouts.nodes[0].transaction).toEqual({
      kind: 'PAYOUT',
      walletTransaction: { type: 'WITHDRAWAL' },
      record: { id: me.payouts.nodes[0].id },
    });
    expect(me.billRecords.nodes[0].transaction).toEqual({ kind: 'BILL', record: { id: me.billRecords.nodes[0].id } });
    expect(me.offrampOrders.nodes[0].transaction).toEqual({
      kind: 'OFFRAMP',
      record: { id: me.offrampOrders.nodes[0].id },
    });
    const swap = me.solanaTransfers.nodes.find((n: { kind: string }) => n.kind === 'swap');
    expect(swap.transaction).toEqual({ kind: 'SWAP', record: { id: swap.id } });
    expect(
      me.walletTransactions.nodes.map(
        (n: { type: string; transaction: { kind: string }; record: { __typename: string } }) => [
          n.type,
          n.transaction.kind,
          n.record.__typename,
        ],
      ),
    ).toEqual([
      ['TRANSFER_OUT', 'TRANSFER_OUT', 'WalletTransaction'],
      ['WITHDRAWAL', 'PAYOUT', 'Payout'],
      ['BILL', 'BILL', 'BillRecord'],
      ['DEPOSIT', 'DEPOSIT', 'Deposit'],
    ]);
  });

  it('leads from a deposit to its payment method, and from a business to its customers and back', async () => {
    const method = await graphql(
      t.app,
      tenant.keys.FULL_ACCESS,
      `mutation { createPaymentMethod(input: { type: card, card: { number: "4242424242424242", expMonth: 12, expYear: 2031, cvv: "123" } }) { id } }`,
    );
    expect(method.body.errors).toBeUndefined();
    const methodId = method.body.data!.createPaymentMethod.id;
    const deposit = await graphql(
      t.app,
      tenant.keys.TRANSACTIONS,
      `mutation { depositWithPaymentMethod(input: { amount: 100, paymentMethodId: "${methodId}" }) { reference paymentMethod { id last4 } } }`,
    );
    expect(deposit.body.errors).toBeUndefined();
    expect(deposit.body.data!.depositWithPaymentMethod.paymentMethod).toEqual({ id: methodId, last4: '4242' });
    const { me } = await read('{ me { paymentMethods { id } } }');
    expect(me.paymentMethods.map((m: { id: string }) => m.id)).toContain(methodId);

    const business = await t.services.users.createBusiness(tenant.user.id, 'Ada Stores');
    for (const name of ['Chidi', 'Bola', 'Emeka'])
      await graphql(
        t.app,
        tenant.keys.ACCOUNT_MANAGEMENT,
        `mutation { createBusinessCustomer(businessId: "${business.id}", input: { name: "${name}" }) { id } }`,
      );
    const { me: withBusinesses } = await read(
      '{ me { businesses { id customers(first: 2) { totalCount nodes { name business { id name } } pageInfo { hasNextPage } } } } }',
    );
    const [found] = withBusinesses.businesses;
    expect(found.customers.totalCount).toBe(3);
    expect(found.customers.nodes.map((c: { name: string }) => c.name)).toEqual(['Emeka', 'Bola']);
    expect(found.customers.nodes[0].business).toEqual({ id: business.id, name: 'Ada Stores' });
    expect(found.customers.pageInfo.hasNextPage).toBe(true);
  });

  it('filters long lists with the root fields’ rules', async () => {
    const { me } = await read(
      '{ me { transactions(filter: { kinds: [SWAP, OFFRAMP] }) { totalCount nodes { kind } } walletTransactions(filter: { type: BILL }) { nodes { type } } } }',
    );
    expect(me.transactions.nodes.map((n: { kind: string }) => n.kind)).toEqual(['OFFRAMP', 'SWAP']);
    expect(me.transactions.totalCount).toBe(2);
    expect(me.walletTransactions.nodes).toEqual([{ type: 'BILL' }]);
    for (const [query, field] of [
      ['{ me { transactions(first: 101) { totalCount } } }', 'first'],
      ['{ me { deposits(first: 0) { totalCount } } }', 'first'],
      ['{ me { payouts(last: 500) { totalCount } } }', 'last'],
      ['{ me { billRecords(after: "nonsense") { totalCount } } }', 'after'],
      ['{ me { walletTransactions(filter: { minAmount: 10, maxAmount: 5 }) { totalCount } } }', 'maxAmount'],
      [
        '{ me { transactions(filter: { from: "2026-02-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }) { totalCount } } }',
        'to',
      ],
    ] as const) {
      const { body } = await graphql(t.app, tenant.keys.READ_ONLY, query);
      expect(body.errors?.[0]?.extensions.code, query).toBe('BAD_USER_INPUT');
      expect(body.errors?.[0]?.message, query).toContain(field);
    }
  });

  it('shows another user none of it', async () => {
    const { me } = await read(
      '{ me { transactions { totalCount } deposits { totalCount } billRecords { totalCount } offrampOrders { totalCount } } }',
      undefined,
      other.keys.READ_ONLY,
    );
    // The other tenant only received the transfer.
    expect(me).toEqual({
      transactions: { totalCount: 1 },
      deposits: { totalCount: 0 },
      billRecords: { totalCount: 0 },
      offrampOrders: { totalCount: 0 },
    });
  });
});

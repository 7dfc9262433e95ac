import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalId } from '../../src/graphql/global-id.js';
import { graphql, seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';
import { principalOf } from './seed.js';

describe('cursor connections and global object identification', () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  const transfer = (reference: string) =>
    t.services.wallet.transfer(principalOf(tenant), { amount: 1, recipient: other.user.email, reference }, undefined);
  beforeAll(async () => {
    ({ t, tenant } = await startTestApp());
    other = await seedTenant(t.services);
    await fund(t, tenant, 1000);
    for (let i = 1; i <= 7; i += 1) await transfer(`T-${i}`);
  });
  afterAll(() => t.close());

  const page = async (args: string) => {
    const { body } = await graphql(
      t.app,
      tenant.keys.READ_ONLY,
      `{ me { transactions(filter: { kinds: [TRANSFER_OUT] }, ${args}) {
        edges { cursor node { reference } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`,
    );
    expect(body.errors).toBeUndefined();
    const connection = body.data!.me.transactions;
    return {
      refs: connection.edges.map((e: { node: { reference: string } }) => e.node.reference) as string[],
      pageInfo: connection.pageInfo,
    };
  };

  it('pages forward and backward, newest first, and cursors stay put when rows are added', async () => {
    const first = await page('first: 3');
    expect(first.refs).toEqual(['T-7', 'T-6', 'T-5']);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    // New movements arrive between two page reads: the next page continues where the first ended.
    await transfer('T-8');
    await transfer('T-9');
    const second = await page(`first: 3, after: "${first.pageInfo.endCursor}"`);
    expect(second.refs).toEqual(['T-4', 'T-3', 'T-2']);
    expect(second.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const last = await page(`first: 3, after: "${second.pageInfo.endCursor}"`);
    expect(last.refs).toEqual(['T-1']);
    expect(last.pageInfo.hasNextPage).toBe(false);
    // Backward from the end of the second page: the rows just newer than it, still in feed order.
    const back = await page(`last: 2, before: "${second.pageInfo.startCursor}"`);
    expect(back.refs).toEqual(['T-6', 'T-5']);
    expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const newest = await page(`last: 5, before: "${first.pageInfo.startCursor}"`);
    expect(newest.refs).toEqual(['T-9', 'T-8']);
    expect(newest.pageInfo.hasPreviousPage).toBe(false);
    // The last page of all, from no cursor.
    expect((await page('last: 2')).refs).toEqual(['T-2', 'T-1']);
  });

  it('pages the single-table connections the same way', async () => {
    const read = async (args: string) => {
      const { body } = await graphql(
        t.app,
        tenant.keys.READ_ONLY,
        `{ me { walletTransactions(filter: { type: TRANSFER_OUT }, ${args}) { totalCount edges { cursor node { reference } } pageInfo { endCursor startCursor } } } }`,
      );
      expect(body.errors).toBeUndefined();
      return body.data!.me.walletTransactions;
    };
    const first = await read('first: 4');
    expect(first.edges.map((e: { node: { reference: string } }) => e.node.reference)).toEqual([
      'T-9',
      'T-8',
      'T-7',
      'T-6',
    ]);
    await transfer('T-10');
    const next = await read(`first: 4, after: "${first.pageInfo.endCursor}"`);
    expect(next.edges.map((e: { node: { reference: string } }) => e.node.reference)).toEqual([
      'T-5',
      'T-4',
      'T-3',
      'T-2',
    ]);
    expect(next.totalCount).toBe(10);
    const back = await read(`last: 3, before: "${next.pageInfo.startCursor}"`);
    expect(back.edges.map((e: { node: { reference: string } }) => e.node.reference)).toEqual(['T-8', 'T-7', 'T-6']);
  });

  it('answers node and nodes by opaque id, and another tenant’s or environment’s id exactly like a missing one', async () => {
    const { body } = await graphql(
      t.app,
      tenant.keys.READ_ONLY,
      '{ me { nodeId transactions(first: 1) { nodes { id nodeId } } walletTransactions(first: 1) { nodes { id nodeId reference } } } }',
    );
    const me = body.data!.me;
    const transaction = me.transactions.nodes[0];
    const walletTransaction = me.walletTransactions.nodes[0];
    const query = `query ($ids: [ID!]!, $id: ID!) {
      node(id: $id) { __typename nodeId ... on Transaction { id kind } }
      nodes(ids: $ids) { __typename nodeId ... on WalletTransaction { id reference } ... on User { id } ... on Transaction { id } }
    }`;
    const missing = globalId('WalletTransaction', '00000000-0000-4000-8000-000000000000');
    const mine = await graphql(t.app, tenant.keys.READ_ONLY, query, {
      id: transaction.nodeId,
      ids: [walletTransaction.nodeId, me.nodeId, transaction.nodeId, missing, 'not-an-id', globalId('Nope', 'x')],
    });
    expect(mine.body.errors).toBeUndefined();
    expect(mine.body.data!.node).toEqual({
      __typename: 'Transaction',
      nodeId: transaction.nodeId,
      id: transaction.id,
      kind: 'TRANSFER_OUT',
    });
    expect(mine.body.data!.nodes).toEqual([
      {
        __typename: 'WalletTransaction',
        nodeId: walletTransaction.nodeId,
        id: walletTransaction.id,
        reference: walletTransaction.reference,
      },
      { __typename: 'User', nodeId: me.nodeId, id: tenant.user.id },
      { __typename: 'Transaction', nodeId: transaction.nodeId, id: transaction.id },
      null,
      null,
      null,
    ]);
    // The same ids asked by another tenant: all missing. By the same user's production key: the
    // user is the same person in both environments, but no sandbox record is there.
    const ids = [walletTransaction.nodeId, me.nodeId, transaction.nodeId, missing];
    const theirs = await graphql(t.app, other.keys.FULL_ACCESS, query, { id: transaction.nodeId, ids });
    expect(theirs.body).toEqual({ data: { node: null, nodes: [null, null, null, null] } });
    const production = await graphql(t.app, tenant.productionKey, query, { id: transaction.nodeId, ids });
    expect(production.body).toEqual({
      data: { node: null, nodes: [null, { __typename: 'User', nodeId: me.nodeId, id: tenant.user.id }, null, null] },
    });
    const tooMany = await graphql(t.app, tenant.keys.READ_ONLY, query, { id: missing, ids: Array(101).fill(missing) });
    expect(tooMany.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });
});

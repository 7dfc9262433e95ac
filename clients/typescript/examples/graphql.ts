import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { createGraphQLClient, graphql } from '../src/index.js';

// Typed documents: `npm run clients` gives each `graphql(...)` below its result and variables types.
const FundInSandbox = graphql(`
  mutation FundInSandbox($amount: Float!) {
    simulateVirtualAccountTransfer(amount: $amount) { reference status amount }
  }
`);
const PayAirtime = graphql(`
  mutation PayAirtime($input: AirtimeInput!) {
    buyAirtime(input: $input) { reference status amount fee billerName }
  }
`);
const LatestBills = graphql(`
  query LatestBills($limit: Int) {
    billRecords(limit: $limit) { total bills { reference type status amount createdAt } }
  }
`);
const LiveEvents = graphql(`
  subscription LiveEvents($after: SafeInt, $types: [String!]) {
    events(after: $after, types: $types) { seq type created data }
  }
`);

const baseUrl = process.env.GATEWAY_URL ?? 'http://localhost:4000';
const apiKey = process.env.GATEWAY_API_KEY ?? 'pgw_sbx_…';
// Node 22 and browsers have a WebSocket of their own; on Node 20 pass ws's.
export const client = (key = apiKey, url = baseUrl) =>
  createGraphQLClient({ baseUrl: url, apiKey: key, webSocketImpl: WebSocket });

/** Fund the wallet (sandbox), under an Idempotency-Key. */
export async function fund(gql = client(), amount = 5000) {
  const { simulateVirtualAccountTransfer } = await gql.request(
    FundInSandbox,
    { amount },
    { 'Idempotency-Key': randomUUID() },
  );
  return simulateVirtualAccountTransfer; // { reference, status: 'COMPLETED', amount }
}

/** Pay a bill: ₦500 of MTN airtime. */
export async function payBill(gql = client()) {
  const { buyAirtime } = await gql.request(
    PayAirtime,
    { input: { phoneNumber: '08031234567', biller: 'MTN', amount: 500 } },
    { 'Idempotency-Key': randomUUID() },
  );
  return buyAirtime;
}

/** List records: the latest bill payments. */
export async function listRecords(gql = client()) {
  const { billRecords } = await gql.request(LatestBills, { limit: 10 });
  return billRecords.bills;
}

/** Subscribe to events of some kinds: replays what came after `after`, then goes on live; stops after `count`. */
export async function subscribeToEvents(
  gql = client(),
  { after = 0, types = ['deposit.completed', 'bill.payment.successful'], count = 1 } = {},
) {
  const seen = [];
  for await (const { events } of gql.subscribe(LiveEvents, { after, types })) {
    seen.push(events); // { seq, type: 'deposit.completed', created, data }
    if (seen.length >= count) break; // ends the subscription
  }
  await gql.close();
  return seen;
}

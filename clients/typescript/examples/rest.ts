import { randomUUID } from 'node:crypto';
import { createRestClient, type RestSchemas } from '../src/index.js';

// A client for one API key. Every answer is typed from the OpenAPI document: `data` on success
// (the envelope {statusCode, message, data, errors}), `error` (the error body) otherwise.
const baseUrl = process.env.GATEWAY_URL ?? 'http://localhost:4000';
const apiKey = process.env.GATEWAY_API_KEY ?? 'pgw_sbx_…';
export const client = (key = apiKey, url = baseUrl) => createRestClient({ baseUrl: url, apiKey: key });

/** Fund the wallet: in the sandbox a transfer into the virtual account arrives at once. */
export async function fund(rest = client(), amount = 5000): Promise<RestSchemas['WalletBalance']> {
  await rest.POST('/api/v1/wallet/virtual-account'); // the permanent account; the same one every time
  const deposit = await rest.POST('/api/v1/wallet/sandbox/virtual-account/transfer', {
    params: { header: { 'Idempotency-Key': randomUUID() } }, // a retry with this key replays, never pays twice
    body: { amount },
  });
  if (deposit.error) throw new Error(deposit.error.message);
  const balance = await rest.GET('/api/v1/wallet/balance');
  if (balance.error) throw new Error(balance.error.message);
  return balance.data.data; // { currency: 'NGN', available, availableKobo, held, … }
}

/** Pay a bill: ₦500 of MTN airtime. */
export async function payBill(rest = client()): Promise<RestSchemas['BillPaymentRecord']> {
  const paid = await rest.POST('/api/v1/bills/buy-airtime', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: { phoneNumber: '08031234567', biller: 'MTN', amount: 500 },
  });
  if (paid.error) throw new Error(`${paid.response.status}: ${paid.error.message}`);
  return paid.data.data; // status SUCCESS, FAILED or PENDING (settled later)
}

/** List records: the latest airtime payments, newest first. */
export async function listRecords(rest = client()): Promise<RestSchemas['BillRecord'][]> {
  const page = await rest.GET('/api/v1/bills/records', {
    params: { query: { type: 'AIRTIME', page: 1, limit: 10, sortBy: 'createdAt', sortOrder: 'DESC' } },
  });
  if (page.error) throw new Error(page.error.message);
  return page.data.data.bills; // with page, total, hasNext… beside it
}

/** Read the event feed from a position: what webhooks and the GraphQL subscription deliver too. */
export async function readEvents(rest = client(), after = 0): Promise<RestSchemas['EventPage']> {
  const feed = await rest.GET('/api/v1/events', { params: { query: { after, limit: 50 } } });
  if (feed.error) throw new Error(feed.error.message);
  return feed.data.data; // pass endSeq as `after` next time
}

import { describe, expect, it } from 'vitest';
import { SandboxBillsProvider } from '../../src/domain/bills/sandbox-bills-provider.js';

const payment = (reference: string) => ({
  billerCode: 'BIL099',
  itemCode: 'AT099',
  customer: '08031234567',
  amount: 10_000n,
  reference,
});

describe('the sandbox bills provider remembers a bounded number of payments', () => {
  it('forgets the least recently used payment past its bound, and answers the rest as before', async () => {
    const bills = new SandboxBillsProvider({ remember: 3 });
    for (const reference of ['m-1', 'm-2', 'm-3', 'm-4']) await bills.pay(payment(reference));
    expect(await bills.status('m-1')).toEqual({ status: 'NOT_FOUND' });
    expect((await bills.status('m-4')).status).toBe('SUCCESS');
    // A repeated reference still within memory is the same payment.
    const again = await bills.pay(payment('m-2'));
    expect(again).toEqual(await bills.status('m-2'));
    const window = { from: new Date(0), to: new Date(Date.now() + 60_000) };
    expect((await bills.listPayments(window)).map((p) => p.reference).sort()).toEqual(['m-2', 'm-3', 'm-4']);
  });
});

import { describe, expect, it } from 'vitest';
import { redactChanges } from '../../src/domain/audit/audit-redaction.js';

describe('audit records keep no whole bank account number', () => {
  it('keeps a changed account number as its last four digits, and masks one nested in a value', () => {
    const redacted = redactChanges({
      accountNumber: { from: '0123456789', to: '0690000031' },
      recipient: { to: { bankCode: '044', accountNumber: '0690000040', accounts: [{ accountNumber: 2233445566 }] } },
      secret: { changed: true },
      name: { from: 'a', to: 'b' },
    });
    expect(redacted).toEqual({
      accountLast4: { from: '6789', to: '0031' },
      recipient: { to: { bankCode: '044', accountNumber: '****0040', accounts: [{ accountNumber: '****5566' }] } },
      secret: { changed: true },
      name: { from: 'a', to: 'b' },
    });
    const text = JSON.stringify(redacted);
    for (const whole of ['0123456789', '0690000031', '0690000040', '2233445566']) expect(text).not.toContain(whole);
  });
});

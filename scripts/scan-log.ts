import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Reads a JSON log (one object per line) and reports anything that must never be logged: API keys
 * and OAuth tokens, webhook secrets, key hashes, card numbers, CVVs, PINs, passwords, bearer
 * credentials and SQL parameters. Used by CI on the log of the whole test suite run at debug
 * level; exits 1 with the findings (each shown masked) when there are any.
 *
 *   tsx scripts/scan-log.ts test-results/test-log.jsonl
 */
export interface Finding {
  line: number;
  rule: string;
  excerpt: string;
}

const RULES: Array<{ rule: string; pattern: RegExp; check?: (match: string) => boolean }> = [
  { rule: 'API key or OAuth token', pattern: /pgw_(?:sbx|live|at|rt|ac|cs)_[A-Za-z0-9_-]{16,}/g },
  { rule: 'webhook signing secret', pattern: /whsec_[A-Za-z0-9+/=]{20,}/g },
  {
    rule: 'key or token hash (64 hex digits)',
    pattern: /(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/g,
    // A SHA-256 in hex has letters and digits; 64 decimal digits are something else (the all-ones
    // Solana signature of a transaction that never ran).
    check: (match) => /[a-f]/.test(match) && /[0-9]/.test(match),
  },
  { rule: 'card number', pattern: /(?<!\d)\d{15,19}(?!\d)/g, check: luhn },
  { rule: 'card field (number, CVV, expiry)', pattern: /"(?:cvv|cvv2|cvc|card_?number|cardNumber|pan)"\s*:/gi },
  { rule: 'PIN', pattern: /"(?:pin|transactionPin|transaction_pin)"\s*:/gi },
  { rule: 'password', pattern: /"(?:password|newPassword|currentPassword|client_secret|clientSecret)"\s*:\s*"[^"*]/gi },
  { rule: 'bearer credential', pattern: /Bearer\s+[A-Za-z0-9._~+/=-]{12,}/g },
  { rule: 'SQL parameters', pattern: /params:\s|"params"\s*:|"parameters"\s*:/g },
  { rule: 'PostgreSQL row values', pattern: /Key \([^)]*\)=\([^)…]/g },
];

export function scanLog(text: string): Finding[] {
  const findings: Finding[] = [];
  text.split('\n').forEach((line, index) => {
    for (const { rule, pattern, check } of RULES) {
      for (const match of line.matchAll(pattern)) {
        if (check && !check(match[0])) continue;
        findings.push({ line: index + 1, rule, excerpt: mask(match[0]) });
      }
    }
  });
  return findings;
}

/** The Luhn check every payment card number passes (and most other digit runs fail). */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const mask = (value: string) => (value.length <= 8 ? value : `${value.slice(0, 6)}…(${value.length} chars)`);

function main(path: string | undefined): number {
  if (!path) {
    console.error('usage: scan-log <log file>');
    return 2;
  }
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n').filter(Boolean);
  if (lines.length === 0) {
    console.error(`${path} is empty: nothing was logged, so nothing was checked.`);
    return 1;
  }
  const findings = scanLog(text);
  if (findings.length === 0) {
    console.log(`${path}: ${lines.length} log lines, no secrets found.`);
    return 0;
  }
  console.error(`${path}: ${findings.length} secrets in ${lines.length} log lines:`);
  for (const f of findings.slice(0, 50)) console.error(`  line ${f.line}: ${f.rule}: ${f.excerpt}`);
  return 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(main(process.argv[2]));

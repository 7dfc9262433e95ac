/** Bad configuration values that look like what they stand for, and how to find one echoed. */

/** Every substring of `value` at least `length` characters long that `text` contains. */
export function sharedSubstrings(text: string, value: string, length = 6): string[] {
  const found = new Set<string>();
  for (let start = 0; start + length <= value.length; start++) {
    const piece = value.slice(start, start + length);
    if (text.includes(piece)) found.add(piece);
  }
  return [...found];
}

/** Values that look like what they stand for: secrets, and an SMTP URL with its password. */
export const SECRET_LOOKING = {
  // Base64, but 24 bytes where 32 are needed.
  SECRETS_KEY: 'q7Vd9XkR2mPzT4wLb8NcY1sHjF0uGaE6',
  // 24 characters where 32 are needed.
  IDEMPOTENCY_SECRET: 'Zr8#kQ2vLp9!xWm4Tn6$bHc3',
  // A port past 65535, and a password.
  SMTP_URL: 'smtp://mailer:Vq8pL2xZr7Kd@smtp.example.com:70000',
  METRICS_TOKEN: 'mT5-yq0Wd',
  OPERATOR_TOKEN: 'oP3_hv8Ks',
  ROUTER_SECRET: 'rS9kd2Lq',
  DATABASE_URL: 'postgres://gateway:Hx4nBq7Wp2Ve@db host/gateway',
  REDIS_URL: 'redis://:Fj3kL9wQz1Tn@cache:99999',
} as const;

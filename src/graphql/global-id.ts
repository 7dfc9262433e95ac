/**
 * Opaque global ids for `node(id:)`: the type name and the record's own id, base64url-encoded.
 * Opaque means clients must not build them; it does not mean secret: who may see the record is
 * decided when it is loaded, by the caller's user and environment.
 */
export function globalId(typeName: string, id: string): string {
  return Buffer.from(`${typeName}:${id}`, 'utf8').toString('base64url');
}

/** The type and record id inside a global id, or undefined for anything this API did not give out. */
export function parseGlobalId(value: string): { typeName: string; id: string } | undefined {
  if (value.length > 200 || !/^[A-Za-z0-9_-]+$/.test(value)) return undefined;
  const decoded = Buffer.from(value, 'base64url').toString('utf8');
  const match = /^([A-Za-z]+):(.+)$/.exec(decoded);
  return match ? { typeName: match[1]!, id: match[2]! } : undefined;
}

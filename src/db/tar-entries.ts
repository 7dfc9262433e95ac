/**
 * The entries of a tar archive (ustar, as PGlite's dumpDataDir writes it): folders and files, each
 * path relative, without a leading slash. Anything else (links, long-name or pax records), a header
 * whose checksum is wrong, a path that climbs out with `..`, or an archive cut short is an error:
 * the caller falls back to a way that needs no archive.
 */
export interface TarEntry {
  path: string;
  kind: 'folder' | 'file';
  mode: number;
  data: Buffer;
}

const BLOCK = 512;

const text = (header: Buffer, from: number, to: number) => {
  const field = header.subarray(from, to);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
};
const octal = (header: Buffer, from: number, to: number) => Number.parseInt(text(header, from, to).trim() || '0', 8);

export function* tarEntries(tar: Buffer): Generator<TarEntry> {
  for (let offset = 0; offset + BLOCK <= tar.length; ) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) return; // the end-of-archive blocks
    // The checksum counts its own 8 bytes as spaces.
    let sum = 0;
    for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
    if (sum !== octal(header, 148, 156)) throw new Error(`tar: bad header checksum at byte ${offset}`);
    const prefix = text(header, 345, 500);
    const path = `${prefix ? `${prefix}/` : ''}${text(header, 0, 100)}`.replace(/^\/+|\/+$/g, '');
    if (!path || path.split('/').includes('..')) throw new Error(`tar: refusing the path ${JSON.stringify(path)}`);
    const size = octal(header, 124, 136);
    const type = String.fromCharCode(header[156]!);
    const start = offset + BLOCK;
    if (start + size > tar.length) throw new Error(`tar: ${path} is cut short`);
    const mode = octal(header, 100, 108);
    if (type === '5') yield { path, kind: 'folder', mode, data: Buffer.alloc(0) };
    else if (type === '0' || type === '\0') yield { path, kind: 'file', mode, data: tar.subarray(start, start + size) };
    else throw new Error(`tar: ${path} is of a kind not expected here (${JSON.stringify(type)})`);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new Error('tar: no end-of-archive blocks');
}

import { randomUUID } from 'node:crypto';

/**
 * JSON as an upstream wrote it, with the text of every number kept beside its value: an NGN amount
 * is read from its digits ("1500.50"), never from the binary float JSON.parse would make of it.
 * Node 20 has no JSON.parse source access, so this is a small parser of RFC 8259 JSON; what is not
 * JSON (a trailing comma, a comment, NaN) throws a SyntaxError, as JSON.parse does.
 */
export interface ParsedJson {
  value: unknown;
  /** The number's text at a JSON pointer (`/data/bills/0/amount`), as the answer wrote it. */
  numberText(pointer: string): string | undefined;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING_RUN = /[^"\\\u0000-\u001f]*/y;
const WHITESPACE = /[ \t\n\r]*/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

export function parseJsonKeepingNumbers(text: string): ParsedJson {
  const numbers = new Map<string, string>();
  let at = 0;

  const fail = (): never => {
    throw new SyntaxError(`Unexpected JSON at position ${at}`);
  };
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const readString = (): string => {
    at++; // the opening quote
    let out = '';
    for (;;) {
      STRING_RUN.lastIndex = at;
      out += STRING_RUN.exec(text)![0];
      at = STRING_RUN.lastIndex;
      const c = text[at];
      if (c === '"') {
        at++;
        return out;
      }
      if (c !== '\\') return fail();
      const e = text[at + 1] ?? '';
      if (e === 'u') {
        const hex = text.slice(at + 2, at + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return fail();
        out += String.fromCharCode(Number.parseInt(hex, 16));
        at += 6;
      } else {
        const escaped = ESCAPES[e];
        if (escaped === undefined) return fail();
        out += escaped;
        at += 2;
      }
    }
  };
  const readValue = (pointer: string, depth: number): unknown => {
    if (depth > 64) return fail();
    skip();
    const c = text[at];
    if (c === '{') {
      at++;
      const object: Record<string, unknown> = {};
      skip();
      if (text[at] === '}') {
        at++;
        return object;
      }
      for (;;) {
        skip();
        if (text[at] !== '"') return fail();
        const key = readString();
        skip();
        if (text[at] !== ':') return fail();
        at++;
        const value = readValue(`${pointer}/${escapePointer(key)}`, depth + 1);
        // A key named like a prototype member is data here, as JSON.parse makes it.
        Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
        skip();
        if (text[at] === ',') {
          at++;
          continue;
        }
        if (text[at] === '}') {
          at++;
          return object;
        }
        return fail();
      }
    }
    if (c === '[') {
      at++;
      const array: unknown[] = [];
      skip();
      if (text[at] === ']') {
        at++;
        return array;
      }
      for (;;) {
        array.push(readValue(`${pointer}/${array.length}`, depth + 1));
        skip();
        if (text[at] === ',') {
          at++;
          continue;
        }
        if (text[at] === ']') {
          at++;
          return array;
        }
        return fail();
      }
    }
    if (c === '"') return readString();
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (!number) return fail();
    at = NUMBER.lastIndex;
    numbers.set(pointer, number[0]);
    return Number(number[0]);
  };

  const value = readValue('', 0);
  skip();
  if (at !== text.length) fail();
  return { value, numberText: (pointer) => numbers.get(pointer) };
}

/** A key as a JSON pointer segment (RFC 6901): `~` and `/` escaped. */
function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * A JSON number written with exactly these digits: a decimal the caller gave as text ("0.123456789")
 * that a request documents as a JSON number is sent as written, never through a binary float.
 * Only a plain non-negative decimal is taken (no sign, exponent or leading zeros: those are
 * trimmed), so the JSON sent is always valid.
 */
export class JsonNumberText {
  readonly text: string;

  private constructor(text: string) {
    this.text = text;
  }

  /** The decimal as a JSON number, or undefined when the text is not a plain decimal. */
  static of(text: string): JsonNumberText | undefined {
    const match = /^(\d{1,30})(\.\d{1,30})?$/.exec(text.trim());
    if (!match) return undefined;
    return new JsonNumberText(`${match[1]!.replace(/^0+(?=\d)/, '')}${match[2] ?? ''}`);
  }
}

/**
 * JSON.stringify, with each JsonNumberText written as its digits. Each is first written as a
 * string no caller can forge (it holds a fresh random nonce), then that string is replaced.
 */
export function stringifyKeepingNumbers(value: unknown): string {
  const nonce = randomUUID();
  const numbers: string[] = [];
  const text = JSON.stringify(value, (_key, part: unknown) => {
    if (!(part instanceof JsonNumberText)) return part;
    numbers.push(part.text);
    return `${nonce}:${numbers.length - 1}`;
  });
  if (numbers.length === 0) return text;
  return text.replace(new RegExp(`"${nonce}:(\\d+)"`, 'g'), (_all, index: string) => numbers[Number(index)]!);
}

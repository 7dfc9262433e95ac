import { describe, expect, it } from 'vitest';
import {
  JsonNumberText,
  parseJsonKeepingNumbers,
  stringifyKeepingNumbers,
} from '../../src/domain/facade/json-number-text.js';

describe('JSON read with the text of its numbers', () => {
  it.each([
    '{"statusCode":200,"message":"OK","data":{"amount":1500.5,"bills":[{"amount":4.35},{"amount":1e3}]},"errors":{}}',
    '[1,-0.5,true,false,null,"a\\"b\\\\c\\/d\\n\\u00e9\\ud83d\\ude00",{},[],{"__proto__":1}]',
    ' \n\t{ "a" : [ 1 , 2 ] } ',
    '"plain"',
    '-12.25e-2',
  ])('reads %s as JSON.parse does', (text) => {
    expect(parseJsonKeepingNumbers(text).value).toEqual(JSON.parse(text));
  });

  it('keeps each number as written, at its JSON pointer', () => {
    const parsed = parseJsonKeepingNumbers('{"data":{"amount":1.15,"a/b":{"~x":100000.50},"bills":[{"amount":4.35}]}}');
    expect(parsed.numberText('/data/amount')).toBe('1.15');
    expect(parsed.numberText('/data/a~1b/~0x')).toBe('100000.50');
    expect(parsed.numberText('/data/bills/0/amount')).toBe('4.35');
    expect(parsed.numberText('/data')).toBeUndefined();
  });

  it('refuses what is not JSON', () => {
    for (const text of ['', '{', '{"a":1,}', '[1 2]', 'NaN', '01', '{"a":1} x', "{'a':1}", '"\\x"', '"a\nb"']) {
      expect(() => parseJsonKeepingNumbers(text), text).toThrow(SyntaxError);
    }
  });
});

describe('writing a decimal as a JSON number with its own digits', () => {
  it('writes the digits past what a float holds, trims leading zeros, and leaves the rest as JSON.stringify does', () => {
    const amount = JsonNumberText.of('007.123456789012345678')!;
    const value = { mint: 'M', amount, nested: [amount], note: undefined, when: new Date(0) };
    expect(stringifyKeepingNumbers(value)).toBe(
      '{"mint":"M","amount":7.123456789012345678,"nested":[7.123456789012345678],"when":"1970-01-01T00:00:00.000Z"}',
    );
    expect(stringifyKeepingNumbers({ a: 1.5 })).toBe(JSON.stringify({ a: 1.5 }));
  });

  it('takes only a plain non-negative decimal, so the JSON sent is always valid', () => {
    for (const text of ['-1', '1e3', '1.', '.5', 'NaN', '0x10', '1 2', ''])
      expect(JsonNumberText.of(text), text).toBeUndefined();
    expect(JsonNumberText.of('0.50')!.text).toBe('0.50');
    expect(JsonNumberText.of('000')!.text).toBe('0');
  });

  it('cannot be forged by a string that looks like its placeholder', () => {
    const text = stringifyKeepingNumbers({
      note: '00000000-0000-4000-8000-000000000000:0',
      amount: JsonNumberText.of('2')!,
    });
    expect(JSON.parse(text)).toEqual({ note: '00000000-0000-4000-8000-000000000000:0', amount: 2 });
  });
});

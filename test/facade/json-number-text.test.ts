import { describe, expect, it } from 'vitest';
import { parseJsonKeepingNumbers } from '../../src/domain/facade/json-number-text.js';

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

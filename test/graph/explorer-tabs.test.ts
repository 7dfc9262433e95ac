import { readFileSync } from 'node:fs';
import { parse, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOME_SCREEN } from '../../src/graphql/home-screen.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('the explorer opens with the home-screen query as a tab', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()));
  afterAll(() => t.close());

  it('serves a script that parses, with the me query first and the home screen second', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/graphql/explorer/start.js' });
    expect(response.statusCode).toBe(200);
    // A syntax error would leave the page blank: compile the script without running it.
    expect(() => new Function(response.body)).not.toThrow();
    const tabs = /const DEFAULT_TABS = (\[.*\]);/.exec(response.body)?.[1];
    const queries = new Function('DEFAULT_QUERY', `return ${tabs};`)('{ me { id } }') as Array<{ query: string }>;
    expect(queries).toHaveLength(2);
    expect(queries[1]!.query).toContain('query HomeScreen');
    expect(() => parse(queries[1]!.query)).not.toThrow();
    expect(parse(queries[1]!.query).definitions).toHaveLength(parse(HOME_SCREEN).definitions.length);
  });

  it('is the example the GraphQL docs show', () => {
    const docs = readFileSync(new URL('../../docs/graphql.md', import.meta.url), 'utf8');
    const shown = /```graphql\n(query HomeScreen[\s\S]*?)```/.exec(docs)?.[1];
    expect(shown && print(parse(shown))).toBe(print(parse(HOME_SCREEN)));
  });
});

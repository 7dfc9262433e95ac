import { afterAll, beforeAll } from 'vitest';
import type { Config } from '../../src/config.js';
import { SpecUpstream } from '../fakes/spec-upstream.js';
import { createTestApp, type TestApp } from './app.js';

/** A GraphQL answer of a facade, as the tests read it. */
export interface FacadeAnswer {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; path?: string[]; extensions: { code: string; field?: string } }>;
}

export interface FacadeOnSpecUpstream {
  upstream: SpecUpstream;
  facade: TestApp;
  /** Asks the facade's graph with an upstream key. */
  graphql(key: string, query: string): Promise<FacadeAnswer>;
}

/**
 * For the enclosing describe block, a facade in front of an upstream written from the spec: before
 * its tests the fake is started and a facade (with `config` besides) in front of it; after them,
 * the facade is closed, then the fake. Its fields are set once the block's tests start.
 */
export function facadeOnSpecUpstream(config: Partial<Config> = {}): FacadeOnSpecUpstream {
  const fixture = {
    graphql: async (key: string, query: string) =>
      (
        await fixture.facade.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          payload: JSON.stringify({ query }),
        })
      ).json() as FacadeAnswer,
  } as FacadeOnSpecUpstream;
  beforeAll(async () => {
    fixture.upstream = await new SpecUpstream().start();
    fixture.facade = await createTestApp({
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: fixture.upstream.url, ...config },
    });
  });
  afterAll(async () => {
    await fixture.facade?.close();
    await fixture.upstream?.stop();
  });
  return fixture;
}

import { afterAll, beforeAll } from 'vitest';
import type { Config } from '../../src/config.js';
import type { Clock } from '../../src/domain/clock.js';
import { startTestApp, type StartedTestApp } from './app.js';
import type { LocalHttpServer } from './local-server.js';

/**
 * For the enclosing describe block, an app against a fake provider: before its tests, a `Fake` is
 * started and an app on a database of its own is started with the configuration `config` gives
 * for it; after them, the app is closed, then the fake. What it returns is the started app with
 * the fake under `name`; its fields are set once the block's tests start.
 */
export function appOnFake<Name extends string, Fake extends LocalHttpServer>(
  name: Name,
  Fake: new () => Fake,
  options: { clock?: Clock; listen?: boolean },
  config: (fake: Fake) => Partial<Config>,
): StartedTestApp & Record<Name, Fake> {
  const fixture = {} as StartedTestApp & Record<Name, Fake>;
  beforeAll(async () => {
    const fake = await new Fake().start();
    const started = await startTestApp({ ...options, isolated: true, config: config(fake) });
    Object.assign(fixture, started, { [name]: fake });
  });
  afterAll(async () => {
    await fixture.t.close();
    await fixture[name].stop();
  });
  return fixture;
}

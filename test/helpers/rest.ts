import type { TestApp } from './app.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** REST calls with one key: `call(method, url, body?, headers?)` → the injected response. */
export const rest =
  (t: TestApp, key: string) =>
  (method: Method, url: string, body?: object, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, headers: { 'x-api-key': key, ...headers }, ...(body ? { payload: body } : {}) });

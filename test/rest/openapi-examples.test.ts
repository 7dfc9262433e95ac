import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import recorded from '../../src/rest/openapi-examples.json' with { type: 'json' };
import { ERROR_RESPONSES } from '../../src/rest/openapi-document.js';
import { operationIdOf } from '../../src/rest/route.js';
import { restV1Routes } from '../../src/rest/v1/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// ajv and ajv-formats are CommonJS; their default export is one level down under NodeNext.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

type Json = Record<string, any>;

/**
 * The examples of the OpenAPI document, recorded from a sandbox run by
 * scripts/openapi/record-examples.ts, stay true: each operation has a request example (every
 * parameter and body) and an answer example, and each is valid against the schema beside it in
 * the served document (OpenAPI 3.1 schemas are JSON Schema 2020-12), $refs and formats included.
 * A change to a route's schema that its recorded example no longer fits fails here: record again
 * (npm run openapi:examples).
 */
describe('the OpenAPI examples', () => {
  let t: TestApp;
  let document: Json;
  let ajv: InstanceType<typeof Ajv2020>;
  beforeAll(async () => {
    t = await createTestApp();
    document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema(document, 'openapi.json');
  });
  afterAll(() => t.close());

  const pointer = (...segments: string[]) =>
    segments.map((s) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');
  /** Problems of `value` against the schema at `path` in the served document (none: []). */
  const problems = (value: unknown, ...path: string[]) => {
    const validate = ajv.compile({ $ref: `openapi.json#/${pointer(...path)}` });
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
  };
  const operations = () =>
    Object.entries<Json>(document.paths).flatMap(([path, item]) =>
      Object.entries<Json>(item).map(([method, operation]) => ({ path, method, operation })),
    );

  it('were recorded for every operation of the route table, and no other', () => {
    expect(Object.keys(recorded.operations).sort()).toEqual(restV1Routes.map(operationIdOf).sort());
  });

  it('every operation shows a request: each parameter and body has an example, and a curl sample', () => {
    const missing: string[] = [];
    for (const { operation } of operations()) {
      for (const parameter of operation.parameters ?? [])
        if (parameter.example === undefined && parameter.required)
          missing.push(`${operation.operationId} ${parameter.name}`);
      const body = operation.requestBody?.content?.['application/json'];
      if (body && !body.examples?.sandbox) missing.push(`${operation.operationId} body`);
      if (!operation['x-codeSamples']?.[0]?.source?.startsWith('curl')) missing.push(`${operation.operationId} curl`);
    }
    expect(missing).toEqual([]);
  });

  it('every operation shows its success answer, valid against its schema', () => {
    const found: string[] = [];
    for (const { path, method, operation } of operations()) {
      const [status, response] = Object.entries<Json>(operation.responses).find(([s]) => s.startsWith('2'))!;
      const [contentType, media] = Object.entries<Json>(response.content)[0]!;
      const example = media.examples?.sandbox?.value;
      expect(example, `${operation.operationId}: no answer example`).toBeDefined();
      found.push(operation.operationId);
      expect(
        problems(example, 'paths', path, method, 'responses', status, 'content', contentType, 'schema'),
        operation.operationId,
      ).toEqual([]);
    }
    expect(found).toHaveLength(restV1Routes.length);
  });

  it('every request example is valid against its schema', () => {
    for (const { path, method, operation } of operations()) {
      (operation.parameters ?? []).forEach((parameter: Json, index: number) => {
        if (parameter.example === undefined) return;
        // Query and path values travel as text; the recording keeps them as sent.
        const value =
          parameter.schema?.type === 'integer' || parameter.schema?.type === 'number'
            ? Number(parameter.example)
            : parameter.example;
        expect(
          problems(value, 'paths', path, method, 'parameters', String(index), 'schema'),
          `${operation.operationId} ${parameter.name}`,
        ).toEqual([]);
      });
      const body = operation.requestBody?.content?.['application/json'];
      if (body)
        expect(
          problems(
            body.examples.sandbox.value,
            'paths',
            path,
            method,
            'requestBody',
            'content',
            'application/json',
            'schema',
          ),
          `${operation.operationId} body`,
        ).toEqual([]);
    }
  });

  it('the error answers recorded are valid against their error bodies', () => {
    const shown = Object.entries<Json>(document.components.responses).filter(
      ([, response]) => response.content['application/json'].examples,
    );
    expect(shown.map(([name]) => name).sort()).toEqual(Object.keys(recorded.errors).sort());
    for (const [name, response] of shown) {
      expect(response.content['application/json'].examples.sandbox.value).toEqual(
        (recorded.errors as Json)[name].response.body,
      );
      expect((recorded.errors as Json)[name].response.status).toBe(ERROR_RESPONSES[name]!.status);
      expect(
        problems(
          response.content['application/json'].examples.sandbox.value,
          'components',
          'responses',
          name,
          'content',
          'application/json',
          'schema',
        ),
        name,
      ).toEqual([]);
    }
  });

  it('ids, times, keys and secrets are normalised', () => {
    const text = JSON.stringify(recorded);
    const uuids = text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi) ?? [];
    expect(uuids.length).toBeGreaterThan(0);
    expect(uuids.filter((u) => !u.startsWith('00000000-0000-4000-8000-'))).toEqual([]);
    const times = text.match(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/g) ?? [];
    expect(times.filter((time) => !time.startsWith('2026-01-'))).toEqual([]);
    expect(text.match(/pgw_(sbx|live)_[A-Za-z0-9_-]+/g)?.filter((k) => !k.includes('EXAM')) ?? []).toEqual([]);
    // Events' `created` (Unix seconds) from 2026-01-15T09:00:00Z on, as the date-times.
    const created = [...text.matchAll(/"created":(\d+)/g)].map((m) => Number(m[1]));
    expect(created.length).toBeGreaterThan(0);
    expect(created.filter((s) => s < 1_768_467_600 || s > 1_768_467_600 + 86_400)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { withSessionOptions } from '../../src/db/session-options.js';

const SERIAL = '-c max_parallel_workers_per_gather=0';
const LEVEL = '-c default_transaction_isolation=read\\ committed';

describe('session options (READ COMMITTED at connect)', () => {
  it('leaves a connection string without options as it is and sends serial plans and the level', () => {
    for (const url of [
      'postgres://postgres@127.0.0.1:5432/test',
      'postgres:///test?host=%2Fvar%2Frun%2Fpostgresql',
      'postgres://u:p%40ss@[::1]:5432/db?sslmode=disable',
    ])
      expect(withSessionOptions(url, {})).toEqual({ connectionString: url, options: `${SERIAL} ${LEVEL}` });
  });

  it('moves the URL’s own options into the parameter, the last one as node-postgres reads it, before the level', () => {
    expect(
      withSessionOptions('postgres://u:p%40ss@h/db?sslmode=disable&options=-c%20a%3D1&options=-c%20b%3D2', {}),
    ).toEqual({ connectionString: 'postgres://u:p%40ss@h/db?sslmode=disable', options: `${SERIAL} -c b=2 ${LEVEL}` });
  });

  it('keeps PGOPTIONS, which node-postgres would drop once the config sets options, unless the URL has its own', () => {
    const env = { PGOPTIONS: '-c search_path=app' };
    expect(withSessionOptions('postgres://h/db', env).options).toBe(`${SERIAL} -c search_path=app ${LEVEL}`);
    expect(withSessionOptions('postgres://h/db?options=-c%20a%3D1', env).options).toBe(`${SERIAL} -c a=1 ${LEVEL}`);
  });
});

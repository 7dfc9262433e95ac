import { describe, expect, it } from 'vitest';
import { parseHosts } from '../../src/db/multi-host.js';

describe('a multi-host DATABASE_URL (libpq style)', () => {
  it('names every host with its port and keeps the rest for the driver', () => {
    expect(
      parseHosts(
        'postgres://app:s3cret@db1:5432,db2:5433,[::1]/gateway?target_session_attrs=read-write&sslmode=require',
      ),
    ).toEqual({
      hosts: [
        { host: 'db1', port: 5432 },
        { host: 'db2', port: 5433 },
        { host: '::1', port: 5432 },
      ],
      url: 'postgres://app:s3cret@db1:5432/gateway?sslmode=require',
    });
  });

  it('leaves a one-host URL as it is', () => {
    expect(parseHosts('postgres://u@127.0.0.1:5432/test')).toEqual({
      hosts: [{ host: '127.0.0.1', port: 5432 }],
      url: 'postgres://u@127.0.0.1:5432/test',
    });
  });

  it('refuses a target the gateway cannot work with (it writes)', () => {
    expect(() => parseHosts('postgres://u@a,b/db?target_session_attrs=read-only')).toThrow(/not supported/);
  });
});

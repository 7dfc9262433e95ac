import pg from 'pg';

/**
 * A fresh PostgreSQL database for one benchmark run, on the server DATABASE_URL names, so runs
 * never see each other's rows; `drop` removes it. For PGlite the URL is empty (embedded).
 */
export async function benchDatabase(kind: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (kind !== 'postgres') return { url: '', drop: async () => undefined };
  if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is needed for the PostgreSQL run');
  const name = `pgw_bench_${Date.now()}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

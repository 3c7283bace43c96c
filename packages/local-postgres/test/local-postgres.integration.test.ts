import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { startLocalPostgres } from '../src/index.ts';

test('starts a real PostgreSQL server on a free loopback port, answers SQL, and stops with its data gone', {
  timeout: 300_000,
}, async () => {
  const pg = await startLocalPostgres();
  try {
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    const [row] = await sql`select current_setting('server_version_num')::int as version, current_user as who`;
    assert.ok(row!.version >= 170_000);
    assert.equal(row!.who, 'postgres');
    await sql.end();
  } finally {
    await pg.stop();
  }
  await assert.rejects(async () => {
    const sql = postgres(pg.url, { max: 1, connect_timeout: 2 });
    try {
      await sql`select 1`;
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});

// The kept image of a new, migrated embedded database (server/store/image-cache.ts): a new DATA_DIR
// is laid out from it, it is kept only in a folder of the user's own, and the folder's files are the
// owner's only as a database laid out by initdb is.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../server/store/db.ts';

const root = mkdtempSync(path.join(tmpdir(), 'humantask-image-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const tables = async (store: Awaited<ReturnType<typeof openStore>>) =>
  (
    await store.execute<{ name: string }>({
      name: 'image_cache_tables',
      text: `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'`,
      values: [],
    })
  ).map((r) => r.name);

/** Opens a store on a new DATA_DIR (under the test's folder) with `cache` as the image cache. */
async function freshStore(name: string, cache: string) {
  const dataDir = path.join(root, name, 'data');
  const store = await openStore({ dataDir, imageCache: cache, secretsKey: 'a'.repeat(64) });
  return { store, dataDir };
}

describe('the image of a new database, kept between processes', () => {
  it('is kept after the first new DATA_DIR, and the next new one is laid out from it', async () => {
    const cache = path.join(root, 'cache');
    const first = await freshStore('first', cache);
    expect(await tables(first.store)).toContain('tasks');
    await first.store.close();
    const kept = readdirSync(cache);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(/^pglite-[0-9a-f]{32}\.tar$/);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(cache, kept[0]!)).mode & 0o777).toBe(0o600);

    // The kept image, with a table of its own: a DATA_DIR that holds it was laid out from the image.
    const file = path.join(cache, kept[0]!);
    const marked = new PGlite({ loadDataDir: new Blob([readFileSync(file)]) });
    await marked.exec('CREATE TABLE laid_out_from_the_kept_image (x int)');
    writeFileSync(file, Buffer.from(await (await marked.dumpDataDir('none')).arrayBuffer()));
    await marked.close();

    const second = await freshStore('second', cache);
    try {
      expect(await tables(second.store)).toEqual(expect.arrayContaining(['tasks', 'laid_out_from_the_kept_image']));
      // Laid out from an archive, the files are still the owner's only.
      const open = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
          const p = path.join(dir, e.name);
          if (e.isDirectory()) return open(p);
          return e.isFile() && (statSync(p).mode & 0o077) !== 0 ? [p] : [];
        });
      expect(open(second.dataDir)).toEqual([]);
    } finally {
      await second.store.close();
    }
  });

  it('keeps nothing in a folder others may write to, and lays out the database itself', async () => {
    const cache = path.join(root, 'shared-cache');
    mkdirSync(cache);
    chmodSync(cache, 0o777);
    const second = await freshStore('shared-second', cache);
    try {
      expect(await tables(second.store)).toContain('tasks');
      expect(readdirSync(cache)).toEqual([]);
    } finally {
      await second.store.close();
    }
  });
});

// The image of a new, migrated embedded database, kept between processes (DATABASE_IMAGE_CACHE,
// default ~/.cache/humantask): a new DATA_DIR, and every in-memory one, is laid out from it instead
// of running PGlite's initdb and every migration again (about 10 s of a first start). The image's
// name says what made it (PGlite's version, its start settings, the migrations' text), so that an
// upgrade never starts from an image of older migrations. The folder is the user's own (0700): a
// folder others may write to is not used, since an image planted there would become the database.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the image depends on: PGlite's version, its start settings and every migration's text. */
function imageName(migrationsFolder: string, startParams: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(pgliteVersion());
  hash.update(JSON.stringify(startParams));
  for (const file of readdirSync(migrationsFolder, { recursive: true, encoding: 'utf8' }).sort()) {
    const full = path.join(migrationsFolder, file);
    if (statSync(full).isFile()) hash.update(file).update(readFileSync(full));
  }
  return `pglite-${hash.digest('hex').slice(0, 32)}.tar`;
}

function pgliteVersion(): string {
  // The package exports no package.json: it is found beside the module it resolves to.
  let dir = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The folder, made the user's own; null when it cannot be used safely (then nothing is kept). */
function ownFolder(folder: string): string | null {
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const st = statSync(folder);
    const mine = process.getuid === undefined || st.uid === process.getuid();
    return mine && (st.mode & 0o022) === 0 ? folder : null;
  } catch {
    return null;
  }
}

export interface ImageCache {
  /** The file of the image kept for these migrations, or null. */
  file(): string | null;
  /** Keeps `image` (written beside, then renamed: a reader never sees half of it). */
  write(image: Blob): Promise<void>;
}

export function imageCache(folder: string, migrationsFolder: string, startParams: readonly string[]): ImageCache | null {
  const own = ownFolder(folder);
  if (!own) return null;
  const file = path.join(own, imageName(migrationsFolder, startParams));
  return {
    file() {
      return existsSync(file) ? file : null;
    },
    async write(image) {
      const partial = `${file}.${process.pid}.partial`;
      try {
        writeFileSync(partial, Buffer.from(await image.arrayBuffer()), { mode: 0o600 });
        renameSync(partial, file);
      } catch {
        // A cache only: a folder that fills up or vanishes costs the next start its initdb, no more.
        rmSync(partial, { force: true });
      }
    },
  };
}

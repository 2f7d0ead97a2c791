// Writes the migrated PGlite image that the test run's in-memory servers start from (global-setup.ts
// runs it as a child process: vitest's setup module runner has no import.meta.resolve, which laying
// out a database needs), from the image kept between runs when there is one (DATABASE_IMAGE_CACHE).
// Usage: node --import tsx test/support/memory-image.ts <file>
import { readConfig } from '../../server/config.ts';
import { writeMemoryImage } from '../../server/store/db.ts';

await writeMemoryImage(process.argv[2]!, readConfig().imageCache);

// drizzle-kit: `npm run db:generate` writes a migration for every change of the tables server/store/schema.ts exports.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './server/store/schema.ts',
  out: './server/store/migrations',
});

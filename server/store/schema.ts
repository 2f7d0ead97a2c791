// The database schema (drizzle-orm, PostgreSQL dialect: the same SQL runs on PGlite and PostgreSQL),
// one file a concept in ./schema/. Migrations in ./migrations are generated from the tables
// exported here by `npm run db:generate`.
export * from './schema/tasks.ts';
export * from './schema/projects.ts';
export * from './schema/outbox.ts';
export * from './schema/workforce.ts';
export * from './schema/transfer.ts';
export * from './schema/identity.ts';

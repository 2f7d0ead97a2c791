// The layering rules of the house, checked by `npm run lint:deps`, which `npm test` runs (test/static/layering.test.ts, with a planted violation of
// each rule). Type-only imports count: a layer that must not know a library must not know its types.
/** @type {import('dependency-cruiser').IConfiguration} */

// Database drivers and the web framework, as they resolve under a node_modules (with their types).
const framework = '(^|/)node_modules/(@types/)?(express|express-[^/]+|express-serve-static-core)/';
const database = '(^|/)node_modules/(@types/)?(pg|pg-[^/]+|@electric-sql/pglite|drizzle-orm)/';

module.exports = {
  forbidden: [
    {
      name: 'domain-no-framework-or-driver',
      comment: 'server/domain holds the rules: no Express, no database driver or ORM (those belong in http/ and store/).',
      severity: 'error',
      from: { path: '^server/domain/' },
      to: { path: [framework, database] },
    },
    {
      name: 'domain-no-http-or-store',
      comment:
        'server/domain reaches the database only through its ports (domain/ports.ts), and knows no HTTP layer: not even ' +
        'the views for the callback payloads it queues (it asks for them through the port CallbackPayloads).',
      severity: 'error',
      from: { path: '^server/domain/' },
      to: { path: '^server/(http|store)/' },
    },
    {
      name: 'store-no-http',
      comment: 'server/store knows no HTTP: neither the HTTP layer nor Express.',
      severity: 'error',
      from: { path: '^server/store/' },
      to: { path: ['^server/http/', framework] },
    },
    {
      name: 'client-not-server',
      comment: '@humantask/client is its own package and ships without the server.',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: '^(server|conformance|scripts|test|bench)/' },
    },
    {
      name: 'console-browser-only',
      comment:
        "The console (console/) runs in the browser and talks to the API over HTTP: it may use the contract's generated " +
        "types and the labeling app's players, never the server's modules (decision 23).",
      severity: 'error',
      from: { path: '^console/' },
      to: { path: '^(server|conformance|scripts|test|bench)/' },
    },
    {
      name: 'conformance-standalone',
      comment:
        'The conformance suite is shipped and tests any implementation: it uses the contract and the client, not our server or our tests.',
      severity: 'error',
      from: { path: '^conformance/' },
      to: { path: '^(server|scripts|test|bench)/' },
    },
    {
      name: 'server-not-scripts-or-test',
      comment: 'What the package ships (server/) must not need build scripts or tests, which it does not ship.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^(scripts|test|bench)/' },
    },
    {
      name: 'nothing-imports-test',
      comment:
        'Tests are leaves. KNOWN EXCEPTION "benchmark harness": bench/ (development only, not shipped) ' +
        'uses test/support/ for a throwaway PostgreSQL cluster, free ports and server processes.',
      severity: 'error',
      from: { pathNot: '^(test|bench)/' },
      to: { path: '^test/' },
    },
    {
      name: 'nothing-imports-test-but-bench-support',
      comment: 'bench/ may use test/support/ only (the known exception of nothing-imports-test).',
      severity: 'error',
      from: { path: '^bench/' },
      to: { path: '^test/', pathNot: '^test/support/' },
    },
    {
      name: 'no-circular-in-server',
      comment: 'No import cycle in server/.',
      severity: 'error',
      from: { path: '^server/' },
      to: {
        circular: true,
        // KNOWN EXCEPTION "Json type": http/coerce.ts takes the type Json from http/contract.ts,
        // which calls coerce at run time (a type-only cycle; move Json to its own module to end it).
        viaOnly: { pathNot: '^server/http/coerce\\.ts$' },
      },
    },
  ],
  options: {
    doNotFollow: { path: '(^|/)node_modules/' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

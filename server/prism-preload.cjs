// Loaded into each Prism process of the mock (node --require, server/mock.ts) before Prism's CLI:
// two costs of Prism's that give our contracts nothing, taken away (without them a mock's Prism
// used three times the CPU, while a client or the conformance suite walked the contract).
const { readFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const path = require('node:path');

const cliMain = require.resolve('@stoplight/prism-cli/dist/index.js');
const cli = createRequire(cliMain);

// 1. At start, Prism's CLI dereferences the whole contract once more and walks all of it
//    (@stoplight/json's decycle), only to read the document's top-level `x-json-schema-faker`
//    options: half of a Prism start. A contract without them (ours) is read as one without them.
const extensions = cli(path.join(path.dirname(cliMain), 'extensions.js'));
const configure = extensions.configureExtensionsUserProvided;
extensions.configureExtensionsUserProvided = (document, options) =>
  configure(typeof document === 'string' && !readFileSync(document, 'utf8').includes('x-json-schema-faker') ? {} : document, options);

// 2. Prism compiles an ajv validator the first time it sees each request and answer schema, each
//    with the contract's referenced components inlined; ajv's code optimizer (a pass over the
//    generated code) took half of that. Off, as ajv advises where schemas are compiled at run time:
//    the validators give the same results, their code is larger.
const Ajv = createRequire(cli.resolve('@stoplight/prism-http'))('ajv/dist/core').default;
const compile = Ajv.prototype.compile;
Ajv.prototype.compile = function (...args) {
  this.opts.code.optimize = 0;
  return compile.apply(this, args);
};

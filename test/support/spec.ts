// The bundled contracts as data, and ajv validators over them (JSON Schema 2020-12, as OpenAPI 3.1).
// The code lives with the conformance suite (which ships with the CLI); the tests use it from here.
export { root, generations, loadBundle, operations, deref, makeValidator, pointerOf } from '../../conformance/contract.ts';
export type { Generation, Json } from '../../conformance/contract.ts';

// The bundled contracts as data, and ajv validators over them (JSON Schema 2020-12, as OpenAPI 3.1).
// The code lives with the conformance suite (which ships with the CLI); the tests use it from here.
export { root, generations, loadBundle, operations, deref, makeValidator, pointerOf } from '../../conformance/contract.ts';
export type { Generation, Json } from '../../conformance/contract.ts';

import { generations as customerGenerations } from '../../conformance/contract.ts';
import type { Generation as CustomerGeneration } from '../../conformance/types.ts';

/** Every bundled contract: the two generations of the customer API and the worker API (/worker/v1). */
export const apis = [...customerGenerations, 'workforce'] as const;
export type Api = (typeof apis)[number];
/**
 * conformance/ names the two generations only, but its helpers (loadBundle, operations,
 * makeValidator) read any bundled contract by its file name: the worker API goes through them so.
 */
export const asGeneration = (api: Api) => api as CustomerGeneration;

// The request validator of one bundled contract (express-openapi-validator), made once per process:
// compiling it is most of a server's start (about 0.8 s of 1.9 s), and the tests and the mutation run
// start many servers in one process. It holds no state of an app. Answers are checked by the
// contract's own compiled schemas (contract.ts, checkAnswer; typed.ts, dispatch): the validator's
// response check compiles every schema an answer reaches again for each operation and status.
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { cacheValidatorRoutes } from '../validator-routes.ts';
import { type ContractName, loadContract } from './contract.ts';

cacheValidatorRoutes();

type ValidatorOptions = Parameters<typeof OpenApiValidator.middleware>[0];

const validators = new Map<string, RequestHandler[]>();

/** The validator of `name`'s contract served at `baseUrl` (`/`, `/legacy`, `/worker`). */
export function contractValidator(name: ContractName, baseUrl: string): RequestHandler[] {
  const key = `${name} ${baseUrl}`;
  let validator = validators.get(key);
  if (!validator) {
    // The validator gets its own copy of the bundled contract (it fills in and rewrites parts).
    // (The bundle was checked against the OpenAPI schema: its required parts are named to type it.)
    const { openapi, info, paths, ...rest } = structuredClone(loadContract(name).doc);
    const apiSpec: ValidatorOptions['apiSpec'] = { ...rest, openapi, info, paths, servers: [{ url: baseUrl }] };
    validator = OpenApiValidator.middleware({
      apiSpec,
      validateRequests: { coerceTypes: false, allowUnknownQueryParameters: false, allErrors: true },
      validateResponses: false,
      validateSecurity: false,
      validateFormats: true,
      // The bundle is checked by `npm run lint:spec` and the tests; checking it again at every start
      // against the OpenAPI schema only made garbage that the heap kept as room.
      validateApiSpec: false,
    });
    validators.set(key, validator);
  }
  return validator;
}

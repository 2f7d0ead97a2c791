// An import's line, checked as its single creation's request would be: the same steps in the same
// order as the app's middleware (server/app.ts) and the same messages: what cannot be stored, a
// private callback or attachment address, numbers given as text, then the contract's body schema
// with express-openapi-validator's Ajv settings, its errors said in the same words (http/validation-words.ts). The domain's
// rules come after, in the transaction (domain/task-bulk-creation.ts).
// test/server/imports.test.ts sends the same bad bodies both ways and compares the answers.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Json } from '../domain/model.ts';
import { sha256 } from '../domain/ids.ts';
import { unstorable } from '../http/body-limits.ts';
import { coerceBody } from '../http/coerce.ts';
import { loadContract, type CreationOperation } from '../http/contract.ts';
import { describeProblems, fromAjv } from '../http/validation-words.ts';
import { privateTargetProblem } from '../http/targets.ts';

/** What a line is made into: a creation of `type`, or the error its single creation would get. */
export type CheckedLine =
  | { ok: true; type: string; operation: CreationOperation; body: Json; key: string | null }
  | { ok: false; statusCode: number; error: string };

const refuse = (statusCode: number, error: string): CheckedLine => ({ ok: false, statusCode, error });

/** JSON with object keys sorted (http/idempotency.ts fingerprints a body the same way). */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/**
 * The validator of the creation bodies, as express-openapi-validator builds its request validator
 * (framework/ajv/options.js): Ajv 2020, all errors, no coercion, defaults filled in (into a copy),
 * formats in its "fast" mode, and the body validated as the `body` property of the request.
 */
function bodyValidators() {
  const contract = loadContract('current');
  const ajv = new Ajv2020({
    strict: false,
    strictNumbers: true,
    strictTuples: true,
    allowUnionTypes: false,
    validateSchema: false,
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
  });
  addFormats.default(ajv, { mode: 'fast' });
  ajv.addFormat('media-range', true);
  ajv.addSchema({ ...contract.doc, $id: 'import' });
  const compiled = new Map<string, ValidateFunction>();
  return (operation: CreationOperation): ValidateFunction => {
    let validate = compiled.get(operation.path);
    if (!validate) {
      const pointer = `import#/paths/${operation.path.replaceAll('/', '~1')}/post/requestBody/content/application~1json/schema`;
      validate = ajv.compile({ type: 'object', required: ['body'], properties: { body: { $ref: pointer } } });
      compiled.set(operation.path, validate);
    }
    return validate;
  };
}

export interface LineChecker {
  /**
   * A line's creation, from its parsed JSON (a CSV row's already made an object): the file's
   * settings applied under it, checked as its single creation would be.
   */
  check(parsed: unknown): CheckedLine;
}

export function lineChecker(
  settings: { type?: string | undefined; project?: string | undefined; batch?: string | undefined; params?: Json | undefined },
  allowPrivateNetworks: readonly string[],
): LineChecker {
  const contract = loadContract('current');
  const validatorOf = bodyValidators();
  return {
    check(parsed) {
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return refuse(400, 'body must be object');
      const { type: ownType, ...own } = parsed as Json;
      const type = ownType ?? settings.type;
      if (type === undefined) return refuse(400, 'type is required: name the task type in the line or give type for the file.');
      const operation = typeof type === 'string' ? contract.creations.get(`/v1/task/${type}`) : undefined;
      if (!operation)
        return refuse(400, `type ${JSON.stringify(type)} is not a task type (POST /v1/task/<type> creates the types there are).`);
      const body: Json = {
        ...settings.params,
        ...(settings.project !== undefined ? { project: settings.project } : {}),
        ...(settings.batch !== undefined ? { batch: settings.batch } : {}),
        ...own,
      };
      const unfit = unstorable(body) ?? privateTargetProblem(body, 'task', allowPrivateNetworks);
      if (unfit) return refuse(400, unfit);
      const coerced = coerceBody(body, operation.bodySchema, contract.resolve, false) as Json;
      const validate = validatorOf(operation);
      if (!validate({ body: structuredClone(coerced) }))
        return refuse(400, describeProblems(fromAjv(validate.errors ?? []), { contract, bodySchema: operation.bodySchema, body: coerced }));
      const key = coerced.unique_id === undefined ? sha256(`${operation.type}\n${canonical(coerced)}`) : null;
      return { ok: true, type: operation.type, operation, body: coerced, key };
    },
  };
}

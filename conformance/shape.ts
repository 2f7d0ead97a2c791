// Shape checks of one answer against the contract: the status is documented for the operation, the
// content type is documented, the body validates against the bundled contract, error bodies are
// `{status_code, error}`, a 401 carries `WWW-Authenticate` and a 429 `Retry-After`, documented
// headers that are present fit their schemas.
import { ajvErrors, pointerOf, type Contract, type ContractOperation, type Json } from './contract.ts';
import type { Exchange } from './types.ts';

export type ShapeRule =
  | 'status-documented'
  | 'content-type'
  | 'body-schema'
  | 'error-body'
  | 'www-authenticate'
  | 'retry-after'
  | 'header-schema'
  | 'callback-body';

export const shapeRuleText: Record<ShapeRule, string> = {
  'status-documented': 'The status of every answer is one the contract documents for the operation.',
  'content-type': 'The content type of every answer is one the contract documents for that status.',
  'body-schema': 'Every answer body validates against the schema the contract gives for the operation and status.',
  'error-body': 'Every error answer (4xx, 5xx) is a JSON body {status_code, error} whose status_code is the HTTP status.',
  'www-authenticate': 'A 401 answer carries a WWW-Authenticate header (HTTP Basic; Bearer at the worker API).',
  'retry-after': 'A 429 answer carries a Retry-After header.',
  'header-schema': 'Documented headers that are present fit their schemas.',
  'callback-body':
    'Every callback the server posts is JSON whose body validates against the schema of its webhook (task completed, attachment error or batch completed).',
};

export interface ShapeProblem {
  rule: ShapeRule;
  message: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

const mediaType = (contentType: string | null) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

/** Whether a documented media type range (`application/json`, `application/*`, `*\/*`) covers `actual`. */
function covers(range: string, actual: string): boolean {
  const [rt, rs] = range.toLowerCase().split('/');
  const [at, as] = actual.split('/');
  return (rt === '*' || rt === at) && (rs === '*' || rs === as);
}

const isJsonMedia = (m: string) => m === 'application/json' || m.endsWith('+json');

/** A header's text as its schema wants it (integers and numbers parsed). */
function headerValue(text: string, schema: Json | undefined): unknown {
  const t = schema?.type;
  if ((t === 'integer' || t === 'number') && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text.trim());
  if (t === 'boolean' && /^(true|false)$/i.test(text.trim())) return text.trim().toLowerCase() === 'true';
  return text;
}

/** The problems of one answer; `op` undefined when the request path is no operation of the contract. */
export function shapeProblems(contract: Contract, op: ContractOperation | undefined, answer: Answer): ShapeProblem[] {
  const problems: ShapeProblem[] = [];
  const { status, headers } = answer;
  const actualType = mediaType(headers.get('content-type'));

  if (status >= 400) {
    const b = answer.body as Json | undefined;
    const ok =
      isJsonMedia(actualType) &&
      b !== null &&
      typeof b === 'object' &&
      !Array.isArray(b) &&
      b.status_code === status &&
      typeof b.error === 'string' &&
      b.error.length > 0;
    if (!ok) {
      problems.push({
        rule: 'error-body',
        message: `expected a JSON body {status_code: ${status}, error: "<message>"}, got ${actualType || 'no content type'}: ${answer.text.slice(0, 200) || '(empty)'}`,
      });
    }
  }
  // The API keys are HTTP Basic; the worker API's tokens are Bearer.
  const scheme = contract.generation === 'workforce' ? 'Bearer' : 'Basic';
  if (status === 401 && !new RegExp(`^${scheme}\\b`, 'i').test(headers.get('www-authenticate') ?? '')) {
    problems.push({
      rule: 'www-authenticate',
      message: `401 without a WWW-Authenticate: ${scheme} header (got ${JSON.stringify(headers.get('www-authenticate'))})`,
    });
  }
  if (status === 429 && !headers.get('retry-after')) {
    problems.push({ rule: 'retry-after', message: '429 without a Retry-After header' });
  }
  if (!op) return problems;

  const documented = contract.response(op, status);
  if (!documented) {
    problems.push({
      rule: 'status-documented',
      message: `${status} is not documented for ${op.operationId} (documented: ${op.statuses.join(', ')})`,
    });
    return problems;
  }
  const content: Json = documented.response.content ?? {};
  const ranges = Object.keys(content);
  if (ranges.length === 0) {
    if (answer.text.length > 0)
      problems.push({ rule: 'content-type', message: `a body (${actualType || 'no content type'}) where the contract documents none` });
  } else {
    const range = ranges.find((r) => covers(r, actualType));
    if (!range) {
      problems.push({
        rule: 'content-type',
        message: `content type ${JSON.stringify(headers.get('content-type'))} is not documented (documented: ${ranges.join(', ')})`,
      });
    } else if (isJsonMedia(actualType) && content[range]?.schema) {
      if (answer.body === undefined) {
        problems.push({ rule: 'body-schema', message: `the body is not JSON: ${answer.text.slice(0, 200) || '(empty)'}` });
      } else {
        const validate = contract.validator(`${documented.pointer}${pointerOf('content', range, 'schema').slice(1)}`);
        if (!validate(answer.body)) problems.push({ rule: 'body-schema', message: ajvErrors(validate) });
      }
    }
  }
  for (const [name, header] of Object.entries<Json>(documented.response.headers ?? {})) {
    const h = contract.resolve(header);
    const text = headers.get(name);
    if (text === null) continue;
    if (!h?.schema) continue;
    const validate = contract.validator(headerPointer(contract, documented.pointer, name, header));
    if (!validate(headerValue(text, contract.resolve(h.schema)))) {
      problems.push({ rule: 'header-schema', message: `header ${name}: ${JSON.stringify(text)} ${ajvErrors(validate)}` });
    }
  }
  return problems;
}

/**
 * The webhook a callback body is (by its keys: `batch` for a batch completion, `attachments` for an
 * attachment error, else a task completion) and its problems against that webhook's body schema.
 */
export function callbackProblems(contract: Contract, text: string, body: unknown): { operationId: string; problems: ShapeProblem[] } {
  const b = body as Json | undefined;
  const operationId =
    b && typeof b === 'object' && 'batch' in b
      ? 'notifyBatchCompleted'
      : b && typeof b === 'object' && 'attachments' in b
        ? 'notifyAttachmentError'
        : 'notifyTaskCompleted';
  const pointer = contract.webhookBodies.get(operationId);
  if (body === undefined)
    return {
      operationId,
      problems: [{ rule: 'callback-body', message: `the callback body is not JSON: ${text.slice(0, 200) || '(empty)'}` }],
    };
  if (!pointer) return { operationId, problems: [] };
  const validate = contract.validator(pointer);
  return { operationId, problems: validate(body) ? [] : [{ rule: 'callback-body', message: `${operationId}: ${ajvErrors(validate)}` }] };
}

/** Pointer of a documented header's schema (through the header's own `$ref`, if any). */
function headerPointer(_contract: Contract, responsePointer: string, name: string, header: Json): string {
  const base = typeof header.$ref === 'string' ? header.$ref : `${responsePointer}${pointerOf('headers', name).slice(1)}`;
  return `${base}/schema`;
}

/** A short text of a request and its answer, for failure messages. */
export function describeExchange(ex: Exchange): string {
  const lines = [`${ex.method} ${ex.url ?? ex.path} (${ex.generation} generation)`];
  for (const [name, value] of Object.entries(ex.requestHeaders ?? {})) lines.push(`${name}: ${truncate(value, 200)}`);
  if (ex.requestText) lines.push(`request body: ${truncate(ex.requestText, 600)}`);
  lines.push(`answer: ${ex.status} ${ex.headers.get('content-type') ?? ''} ${truncate(ex.text, 600)}`);
  return lines.join('\n');
}

export const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} characters)` : s);

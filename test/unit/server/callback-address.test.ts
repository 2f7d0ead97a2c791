// The callback address rule has one text (issue 32, item 23): the contract's `CallbackAddress`
// pattern, which the validator enforces on `callback_url` and a batch's `callback`, is the
// server's own `callbackAddressPattern`, and the server's check (which also parses the address)
// and the schema agree on every sample below.
import { describe, expect, it } from 'vitest';
import { callbackAddressPattern, callbackAddressProblem } from '../../../server/domain/callback-address.ts';
import { deref, generations, loadBundle, makeValidator, pointerOf } from '../../support/spec.ts';

const accepted = [
  'https://example.com/humantask/callback',
  'http://example.com',
  'HTTPS://EXAMPLE.COM/cb?x=1#part',
  'http://127.0.0.1:8080/cb',
  'http://[::1]:3000/hook',
  'https://bücher.example/cb',
  'https://example.com/a b',
  'ops@example.com',
  'a@localhost',
  'mailto:ops@example.com',
  'MAILTO:ops@example.com?subject=done',
];
const refused = [
  '',
  'not a url',
  'ftp://example.com/x',
  'javascript:alert(1)',
  's3://bucket/key',
  'https://user:secret@example.com/cb',
  'https://@example.com/cb',
  'http://',
  'https:///cb',
  'http:example.com',
  'https://exa mple.com/',
  ' https://example.com/cb',
  'https://example.com/cb\n',
  'a@b@example.com',
  'Ops <ops@example.com>',
  'ops@example.com, dev@example.com',
  'mailto:',
  'ops@',
  'https://example.com/\u0000',
];

describe.each(generations)('the %s contract', (gen) => {
  const doc = loadBundle(gen);
  const validate = makeValidator(gen, doc);

  it('takes the server’s pattern as CallbackAddress, for callback_url and a batch’s callback', () => {
    expect(doc.components.schemas.CallbackAddress.pattern).toBe(callbackAddressPattern);
    expect(deref(doc, doc.components.schemas.TaskCreateCommon.properties.callback_url).pattern).toBe(callbackAddressPattern);
    expect(deref(doc, doc.components.schemas.BatchCreateRequest.properties.callback).pattern).toBe(callbackAddressPattern);
  });

  const schema = validate(pointerOf('components', 'schemas', 'CallbackAddress'));
  it.each(accepted)('accepts %j, as the server does', (sample) => {
    expect(schema(sample)).toBe(true);
    expect(callbackAddressProblem(sample)).toBeNull();
  });
  it.each(refused)('refuses %j, as the server does', (sample) => {
    expect(schema(sample)).toBe(false);
    expect(callbackAddressProblem(sample)).not.toBeNull();
  });
});

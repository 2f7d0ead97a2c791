// What a callback address may be, checked the same way wherever one is given (a task's
// `callback_url`, an account's default callback URL through the CLI or the admin interface): an
// http(s) URL with a host, or exactly one plain e-mail address (`ops@example.com`, `mailto:...`).

/** A callback address that is an e-mail address: `mailto:...`, or anything with an `@` and no scheme. */
export function isEmailTarget(target: string): boolean {
  return /^mailto:/i.test(target) || (target.includes('@') && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

// One plain address: no display name, no list, no quoting, no comments, no control characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what an address may not hold
const plainAddress = /^[^\s\x00-\x1f\x7f@<>()[\]\\,;:"]+@[^\s\x00-\x1f\x7f@<>()[\]\\,;:"]+$/;

/**
 * The one recipient of an e-mail callback address (`ops@example.com`, `mailto:ops@example.com`),
 * or null when it is not exactly one plain address. The header fields of a `mailto:` URL
 * (`?cc=...&subject=...`) are ignored: the customer chooses the recipient, nothing else.
 */
export function mailRecipient(target: string): string | null {
  let address = target.trim();
  if (/^mailto:/i.test(address)) {
    address = address.slice('mailto:'.length).split('?')[0] ?? '';
    try {
      address = decodeURIComponent(address);
    } catch {
      return null;
    }
  }
  return plainAddress.test(address) ? address : null;
}

/**
 * The rule as a pattern: the contract's `CallbackAddress` schema carries the same text (the
 * validator refuses what it refuses; test/unit/server/callback-address.test.ts keeps them equal), and the
 * server's own check starts with it, then looks at what a pattern cannot (the port, a `mailto:`'s
 * escapes).
 */
export const callbackAddressPattern = String.raw`^(?:[Hh][Tt][Tt][Pp][Ss]?://(?:\[[0-9A-Fa-f:.]+\]|[^\u0000-\u0020#%/:<>?@[\\\]^|]+)(?::[0-9]*)?(?:[/?#][^\u0000-\u001F\u007F]*)?|(?:[Mm][Aa][Ii][Ll][Tt][Oo]:)?[^\s\u0000-\u001F\u007F@<>()[\]\\,;:"]+@[^\s\u0000-\u001F\u007F@<>()[\]\\,;:"?]+(?:\?[^\u0000-\u001F\u007F]*)?)$`;
const callbackAddressRegExp = new RegExp(callbackAddressPattern, 'u');

/** Why `target` is no callback address ("must be ..."), or null when it is one. */
export function callbackAddressProblem(target: string): string | null {
  const problem = parsedProblem(target);
  if (problem) return problem;
  return callbackAddressRegExp.test(target) ? null : 'must be an http(s) URL or an e-mail address';
}

/** What parsing `target` finds wrong with it (a scheme, a user name, more than one address), or null. */
function parsedProblem(target: string): string | null {
  if (isEmailTarget(target)) return mailRecipient(target) ? null : 'must be one plain e-mail address (name@example.com)';
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'must be an http(s) URL or an e-mail address';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http(s) URL or an e-mail address, not ${url.protocol}`;
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not carry a user name or password (use the callback auth key)';
  return null;
}

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

/** Why `target` is no callback address ("must be ..."), or null when it is one. */
export function callbackAddressProblem(target: string): string | null {
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

// The client address that the per-address limits count by: the connection's peer, or, when that
// peer is a reverse proxy the operator trusts (TRUSTED_PROXIES), the address the proxies report:
// the right-most hop of X-Forwarded-For (or Forwarded, TRUSTED_PROXY_HEADER) that is not itself a
// trusted proxy. Without TRUSTED_PROXIES the headers are never read: anyone can write them.
// proxy-addr (what Express's 'trust proxy' uses) parses the addresses and CIDRs.
import type { IncomingMessage } from 'node:http';
import parseForwarded from 'forwarded-parse';
import proxyaddr from 'proxy-addr';

export type ClientAddress = (req: IncomingMessage) => string;

/** The connection's peer: the client address without trusted proxies. */
export const peerAddress: ClientAddress = (req) => req.socket.remoteAddress ?? '';

/**
 * The address of a Forwarded `for=` node: `192.0.2.43`, `192.0.2.43:47011`, `[2001:db8::17]:4711`
 * (RFC 7239, section 6); an obfuscated (`_hidden`) or `unknown` node as it is: no trusted proxy.
 */
function nodeAddress(node: string | undefined): string {
  if (!node) return 'unknown';
  if (node.startsWith('[')) return node.slice(1, node.indexOf(']') === -1 ? undefined : node.indexOf(']'));
  const colons = node.split(':').length - 1;
  return colons === 1 ? node.slice(0, node.indexOf(':')) : node;
}

/**
 * How a request's client address is found. `trusted`: CIDRs or addresses of the proxies (an
 * invalid one throws here, at start); empty: the connection's peer, always.
 */
export function clientAddressOf(trusted: readonly string[], header: 'x-forwarded-for' | 'forwarded' = 'x-forwarded-for'): ClientAddress {
  if (trusted.length === 0) return peerAddress;
  const trust = proxyaddr.compile([...trusted]);
  if (header === 'x-forwarded-for') return (req) => proxyaddr(req, trust);
  return (req) => {
    let address = peerAddress(req);
    const value = req.headers.forwarded;
    if (!value || !trust(address, 0)) return address;
    let hops: string[];
    try {
      // Each proxy appends its element: the nearest hop is the last.
      hops = parseForwarded(value)
        .map((element) => nodeAddress(element.for))
        .reverse();
    } catch {
      // A header the proxies did not write well: the nearest proxy is all we know.
      return address;
    }
    for (const [i, hop] of hops.entries()) {
      address = hop;
      if (!trust(address, i + 1)) break;
    }
    return address;
  };
}

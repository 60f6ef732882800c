/**
 * Which webhook targets a PRODUCTION platform may reach (unless the operator sets
 * CORRIDOR_WEBHOOK_ALLOW_PRIVATE=true): only globally routable addresses. Loopback, private,
 * link-local, multicast and other special-purpose addresses are refused, in IPv4 and IPv6, including
 * IPv6 forms that embed an IPv4 address (`::ffff:127.0.0.1`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`).
 *
 * Two places check: `PATCH /config` (`endpointRefusal`: the URL's host, and what a name resolves to
 * then, best effort) and every delivery (`guardedLookup` on the connection itself, plus
 * `literalRefusal` for IP-literal hosts, which never go through a lookup). The delivery-time check is
 * the one that holds: the address a connection is made to is the address that was checked, so a name
 * that resolves differently later (DNS rebinding) is caught there.
 *
 * `localhost` and `*.localhost` are refused by name, without asking DNS (RFC 6761).
 */
import { promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Resolves a host name to every address it has (the delivery path's DNS; injectable for tests). */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolveAll: ResolveAll = (hostname) => dnsPromises.lookup(hostname, { all: true });

/** Thrown (as a connection error) when a target is refused; its message is the attempt's error. */
export class TargetRefusedError extends Error {
  readonly code = 'ERR_WEBHOOK_TARGET_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

type Kind = 'a loopback' | 'a private' | 'a link-local' | 'a multicast' | 'a non-routable';

function blockList(rules: [string, number][], type: 'ipv4' | 'ipv6'): BlockList {
  const b = new BlockList();
  for (const [net, prefix] of rules) b.addSubnet(net, prefix, type);
  return b;
}

const V4: [Kind, BlockList][] = [
  ['a loopback', blockList([['127.0.0.0', 8]], 'ipv4')],
  // RFC 1918, and the shared address space of carrier-grade NAT (RFC 6598).
  [
    'a private',
    blockList(
      [
        ['10.0.0.0', 8],
        ['172.16.0.0', 12],
        ['192.168.0.0', 16],
        ['100.64.0.0', 10],
      ],
      'ipv4',
    ),
  ],
  ['a link-local', blockList([['169.254.0.0', 16]], 'ipv4')],
  ['a multicast', blockList([['224.0.0.0', 4]], 'ipv4')],
  [
    'a non-routable',
    blockList(
      [
        ['0.0.0.0', 8], // "this network" (0.0.0.0 reaches the local host on Linux)
        ['192.0.0.0', 24], // IETF protocol assignments
        ['192.0.2.0', 24], // documentation (TEST-NET-1)
        ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
        ['198.18.0.0', 15], // benchmarking
        ['198.51.100.0', 24], // documentation (TEST-NET-2)
        ['203.0.113.0', 24], // documentation (TEST-NET-3)
        ['240.0.0.0', 4], // reserved, and 255.255.255.255 (broadcast)
      ],
      'ipv4',
    ),
  ],
];

const V6: [Kind, BlockList][] = [
  ['a loopback', blockList([['::1', 128]], 'ipv6')],
  // Unique local (fc00::/7), and the deprecated site-local fec0::/10.
  [
    'a private',
    blockList(
      [
        ['fc00::', 7],
        ['fec0::', 10],
      ],
      'ipv6',
    ),
  ],
  ['a link-local', blockList([['fe80::', 10]], 'ipv6')],
  ['a multicast', blockList([['ff00::', 8]], 'ipv6')],
  [
    'a non-routable',
    blockList(
      [
        ['::', 8], // unspecified, IPv4-compatible and other reserved forms (mapped ones are checked as IPv4 first)
        ['64:ff9b:1::', 48], // local-use NAT64
        ['100::', 64], // discard-only
        ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID …)
        ['2001:db8::', 32], // documentation
        ['3fff::', 20], // documentation
        ['5f00::', 16], // SRv6 SIDs
      ],
      'ipv6',
    ),
  ],
];

/** The eight 16-bit groups of an IPv6 address (zone id dropped); undefined if it is not one. */
export function ipv6Groups(address: string): number[] | undefined {
  const a = address.replace(/%.*$/, '');
  if (isIP(a) !== 6) return undefined;
  let text = a;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const h = parse(head);
  if (tail === undefined) return h;
  const t = parse(tail);
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

function ipv4Of(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/**
 * The IPv4 address an IPv6 address stands for, where it embeds one that a connection would reach:
 * IPv4-mapped (::ffff:a.b.c.d), NAT64 well-known prefix (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::).
 */
function embeddedIpv4(g: number[]): string | undefined {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!);
  return undefined;
}

/**
 * Why a webhook may not go to `address`: e.g. "a private address"; undefined when the address is
 * globally routable. Anything that is not an IP address is refused.
 */
export function addressRefusal(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) {
    for (const [kind, list] of V4) if (list.check(address, 'ipv4')) return `${kind} address`;
    return undefined;
  }
  const g = ipv6Groups(address);
  if (!g) return 'not an IP address';
  const v4 = embeddedIpv4(g);
  if (v4 !== undefined) {
    const why = addressRefusal(v4);
    return why ? `${why} (${v4})` : undefined;
  }
  const bare = address.replace(/%.*$/, '');
  for (const [kind, list] of V6) if (list.check(bare, 'ipv6')) return `${kind} address`;
  return undefined;
}

/** The URL's host as a connection sees it: no IPv6 brackets, no trailing dot, lower case. */
export function bareHost(url: URL): string {
  const h = url.hostname.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) return h.slice(1, -1);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

export function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * The refusal (`refused: …`) of a URL decided without DNS: a localhost name, or an IP-literal host
 * (the WHATWG parser has already turned `2130706433`, `0x7f.1`, `017700000001` into 127.0.0.1) that
 * is not globally routable. Undefined when the host is a name for DNS, or an acceptable address.
 */
export function literalRefusal(url: URL): string | undefined {
  const host = bareHost(url);
  if (isLocalhostName(host)) return `refused: ${host} is a loopback name`;
  if (isIP(host) === 0) return undefined;
  const why = addressRefusal(host);
  return why ? `refused: ${host} is ${why}` : undefined;
}

/** The refusal of a name whose addresses are all refused (the first one's reason). */
function resolvedRefusal(host: string, addresses: LookupAddress[]): string {
  const first = addresses[0];
  if (!first) return `refused: ${host} has no address`;
  return `refused: ${first.address} (${host}) is ${addressRefusal(first.address)}`;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:net / node:http that resolves with `resolveAll` and hands the connection only
 * the globally routable addresses; when there are none the connection fails with a
 * TargetRefusedError. (A name with both kinds connects to the routable ones only.)
 */
export function guardedLookup(resolveAll: ResolveAll) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    if (isLocalhostName(hostname)) {
      callback(new TargetRefusedError(`refused: ${hostname} is a loopback name`), '');
      return;
    }
    resolveAll(hostname).then(
      (all) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const found = family === 0 ? all : all.filter((a) => a.family === family);
        const allowed = found.filter((a) => addressRefusal(a.address) === undefined);
        const first = allowed[0];
        if (!first) callback(new TargetRefusedError(resolvedRefusal(hostname, found)), '');
        else if (options.all) callback(null, allowed);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/** A `lookup` over `resolveAll` that checks nothing (unguarded requests with a resolver of their own). */
export function plainLookup(resolveAll: ResolveAll) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveAll(hostname).then(
      (all) => {
        const first = all[0];
        if (!first) callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
        else if (options.all) callback(null, all);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/** How long `PATCH /config` waits for DNS before it accepts a name unchecked (delivery checks it anyway). */
const PATCH_LOOKUP_TIMEOUT_MS = 2_000;

/**
 * The refusal of a webhook endpoint for a platform whose targets are guarded, as `PATCH /config`
 * decides it: a localhost name or a refused IP literal; or a name that resolves, now, only to
 * refused addresses. A name that does not resolve (or not within 2 s) is accepted: this check is a
 * courtesy, and every delivery checks the address it connects to.
 */
export async function endpointRefusal(raw: string, resolveAll: ResolveAll): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  const literal = literalRefusal(url);
  if (literal !== undefined || isIP(bareHost(url)) !== 0) return literal;
  const host = bareHost(url);
  let timer: NodeJS.Timeout | undefined;
  try {
    const addresses = await Promise.race([
      resolveAll(host),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), PATCH_LOOKUP_TIMEOUT_MS);
        timer.unref();
      }),
    ]);
    if (!addresses || addresses.length === 0) return undefined;
    return addresses.some((a) => addressRefusal(a.address) === undefined) ? undefined : resolvedRefusal(host, addresses);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

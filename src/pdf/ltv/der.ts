/**
 * A small DER reader and writer for the structures long-term validation handles (X.509 certificates, OCSP, CRLs,
 * CMS): every node keeps its exact encoded bytes, so signatures can be checked over what was signed.
 *
 * Input comes from the network (OCSP responders, CRL distribution points): lengths are checked against the buffer
 * and nesting is bounded, so a hostile answer fails with a DerError instead of reading out of bounds.
 */

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

export interface DerNode {
  /** 0 universal, 1 application, 2 context-specific, 3 private. */
  cls: number;
  constructed: boolean;
  /** The tag number (low-tag form only, which is all these structures use). */
  tag: number;
  /** The whole encoding: identifier, length and contents. */
  raw: Buffer;
  contents: Buffer;
}

export const TAG = {
  BOOLEAN: 1,
  INTEGER: 2,
  BIT_STRING: 3,
  OCTET_STRING: 4,
  NULL: 5,
  OID: 6,
  ENUMERATED: 10,
  UTF8String: 12,
  SEQUENCE: 16,
  SET: 17,
  IA5String: 22,
  UTCTime: 23,
  GeneralizedTime: 24,
} as const;

/** Reads one node at `offset`. */
export function readNode(buf: Buffer, offset = 0): DerNode {
  if (offset + 2 > buf.length) throw new DerError('truncated DER');
  const id = buf[offset]!;
  const tag = id & 0x1f;
  if (tag === 0x1f) throw new DerError('high tag numbers are not supported');
  let len = buf[offset + 1]!;
  let header = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new DerError('unsupported DER length');
    if (offset + 2 + n > buf.length) throw new DerError('truncated DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[offset + 2 + i]!;
    header += n;
  }
  const end = offset + header + len;
  if (end > buf.length) throw new DerError('DER length runs past the data');
  return {
    cls: id >> 6,
    constructed: (id & 0x20) !== 0,
    tag,
    raw: buf.subarray(offset, end),
    contents: buf.subarray(offset + header, end),
  };
}

/** The whole buffer as one node (trailing bytes refused). */
export function parse(buf: Buffer): DerNode {
  const node = readNode(buf, 0);
  if (node.raw.length !== buf.length) throw new DerError('trailing bytes after DER');
  return node;
}

/** The children of a constructed node. */
export function children(node: DerNode): DerNode[] {
  if (!node.constructed) throw new DerError('expected a constructed DER node');
  const out: DerNode[] = [];
  let at = 0;
  while (at < node.contents.length) {
    const child = readNode(node.contents, at);
    out.push(child);
    at += child.raw.length;
    if (out.length > 100_000) throw new DerError('too many DER elements');
  }
  return out;
}

/** The n-th child, or a DerError naming what was expected. */
export function child(node: DerNode, n: number, what = 'element'): DerNode {
  const c = children(node)[n];
  if (!c) throw new DerError(`missing ${what}`);
  return c;
}

/** The first context-specific child with this tag number. */
export function tagged(node: DerNode, tag: number): DerNode | undefined {
  return children(node).find((c) => c.cls === 2 && c.tag === tag);
}

export function isUniversal(node: DerNode, tag: number): boolean {
  return node.cls === 0 && node.tag === tag;
}

export function oidString(node: DerNode): string {
  if (!isUniversal(node, TAG.OID)) throw new DerError('expected an OBJECT IDENTIFIER');
  const b = node.contents;
  if (b.length === 0) throw new DerError('empty OBJECT IDENTIFIER');
  const parts: number[] = [];
  let value = 0;
  for (const byte of b) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  const first = parts.shift() ?? 0;
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...parts].join('.');
}

export function timeValue(node: DerNode): Date {
  const s = node.contents.toString('latin1');
  let m: RegExpExecArray | null;
  if (isUniversal(node, TAG.UTCTime)) {
    m = /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/.exec(s);
    if (!m) throw new DerError('malformed UTCTime');
    const yy = Number(m[1]);
    return new Date(Date.UTC(yy < 50 ? 2000 + yy : 1900 + yy, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  }
  if (isUniversal(node, TAG.GeneralizedTime)) {
    m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.(\d+))?Z$/.exec(s);
    if (!m) throw new DerError('malformed GeneralizedTime');
    const ms = m[7] ? Math.round(Number(`0.${m[7]}`) * 1000) : 0;
    return new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, ms));
  }
  throw new DerError('expected a time');
}

/** An INTEGER's magnitude as uppercase hex without leading zero bytes (as X509Certificate.serialNumber gives). */
export function integerHex(node: DerNode): string {
  if (!isUniversal(node, TAG.INTEGER)) throw new DerError('expected an INTEGER');
  let b = node.contents;
  while (b.length > 1 && b[0] === 0) b = b.subarray(1);
  return b.toString('hex').toUpperCase();
}

/** A BIT STRING's bits (whole bytes only). */
export function bitStringBytes(node: DerNode): Buffer {
  if (!isUniversal(node, TAG.BIT_STRING) || node.contents.length < 1)
    throw new DerError('expected a BIT STRING');
  return node.contents.subarray(1);
}

// Writing.

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A node from its identifier byte and contents. */
export function encode(identifier: number, contents: Buffer | Buffer[]): Buffer {
  const body = Array.isArray(contents) ? Buffer.concat(contents) : contents;
  return Buffer.concat([Buffer.from([identifier]), lengthBytes(body.length), body]);
}

export const seq = (items: Buffer[]) => encode(0x30, items);
export const octetString = (b: Buffer) => encode(0x04, b);
export const nullValue = () => Buffer.from([0x05, 0x00]);
/** [n] EXPLICIT (constructed, context-specific). */
export const explicit = (n: number, inner: Buffer) => encode(0xa0 | n, inner);

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const group: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) group.unshift((v & 0x7f) | 0x80);
    bytes.push(...group);
  }
  return encode(0x06, Buffer.from(bytes));
}

/** A positive INTEGER from its magnitude bytes. */
export function integer(magnitude: Buffer): Buffer {
  let b = magnitude;
  while (b.length > 1 && b[0] === 0 && !(b[1]! & 0x80)) b = b.subarray(1);
  if (b.length === 0) b = Buffer.from([0]);
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return encode(0x02, b);
}

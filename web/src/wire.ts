// The termkeep frame protocol as a browser speaks it (internal/wire and
// docs/protocol.md are the reference). Over the WebSocket each binary
// message is exactly one frame: type uint8, payload length uint32 (big
// endian), payload. Offsets are uint64 on the wire; a JS number holds them
// exactly up to 2^53 bytes (8 PiB), far beyond any session.

export const T = {
  // toward the pty
  Input: 0x02,
  Resize: 0x03,
  Signal: 0x04,
  Ack: 0x06,
  Ping: 0x07,
  Answer: 0x08,
  Fit: 0x0c,
  // away from it
  Welcome: 0x41,
  Output: 0x42,
  Resized: 0x43,
  Exit: 0x44,
  Error: 0x45,
  Pong: 0x46,
  Gap: 0x47,
  Snapshot: 0x48,
  Viewers: 0x49,
  ServerPing: 0x4a,
  Log: 0x4b,
  TermMode: 0x4f,
} as const;

export const HEADER = 5;

// Error frame codes.
export const Code = { Malformed: 1, Version: 2, NotFound: 3, Unavailable: 4, Forbidden: 5, Internal: 6, TooFast: 7 } as const;

export interface Welcome {
  version: number;
  session?: string;
  name?: string;
  pid: number;
  first: number;
  end: number;
  start: number;
  cols: number;
  rows: number;
  exited?: boolean;
  resume?: 'bytes' | 'snapshot' | 'live';
}

export interface Exit {
  state: 'exited' | 'closed' | 'interrupted';
  exit_code: number | null;
  signal?: number;
  end: number;
  reason?: string;
}

export interface ViewerInfo {
  id: number;
  /** cli, web or share (a share link's page). */
  kind: string;
  /** What it calls itself: "attach /dev/pts/3", "Chrome on Linux", a share link's name. */
  name?: string;
  read_only?: boolean;
  ignore_size?: boolean;
  cols?: number;
  rows?: number;
}

export interface Viewers {
  viewers: ViewerInfo[];
  /** The viewer whose size the session has (0: none; the policies other than latest have none). */
  size_owner: number;
  size_policy?: 'latest' | 'smallest' | 'largest' | 'fixed';
  /** The session's size: every viewer draws at it. */
  cols: number;
  rows: number;
  you: number;
  /** The session's holder does not answer the server: input waits, and may fail. */
  holder_unresponsive?: boolean;
}

/** LogState: whether the session's output is being saved (a full disk stops it). */
export interface LogState {
  stopped: boolean;
  at?: number;
  reason?: string;
}

export interface Frame {
  type: number;
  payload: Uint8Array;
}

/** frame encodes one frame: header and payload in one buffer. */
export function frame(type: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const b = new Uint8Array(HEADER + payload.length);
  const dv = new DataView(b.buffer);
  dv.setUint8(0, type);
  dv.setUint32(1, payload.length);
  b.set(payload, HEADER);
  return b;
}

/** u64 encodes a non-negative integer as 8 big-endian bytes. */
export function u64(v: number): Uint8Array {
  const b = new Uint8Array(8);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, Math.floor(v / 2 ** 32));
  dv.setUint32(4, v >>> 0);
  return b;
}

export function readU64(p: Uint8Array, at = 0): number {
  const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
  return dv.getUint32(at) * 2 ** 32 + dv.getUint32(at + 4);
}

/** resize reports this page's window size (version 6: it takes nothing). */
export function resize(cols: number, rows: number): Uint8Array {
  return sized(T.Resize, cols, rows);
}

/** fit asks for the session to take this page's window size ("fit to this window"). */
export function fit(cols: number, rows: number): Uint8Array {
  return sized(T.Fit, cols, rows);
}

function sized(type: number, cols: number, rows: number): Uint8Array {
  const p = new Uint8Array(4);
  const dv = new DataView(p.buffer);
  dv.setUint16(0, cols);
  dv.setUint16(2, rows);
  return frame(type, p);
}

/** parse decodes one WebSocket message; null when it is not a whole frame. */
export function parse(buf: ArrayBuffer): Frame | null {
  if (buf.byteLength < HEADER) return null;
  const dv = new DataView(buf);
  const n = dv.getUint32(1);
  if (n !== buf.byteLength - HEADER) return null;
  return { type: dv.getUint8(0), payload: new Uint8Array(buf, HEADER, n) };
}

const decoder = new TextDecoder();

export function json<V>(p: Uint8Array): V {
  return JSON.parse(decoder.decode(p)) as V;
}

export function parseError(p: Uint8Array): { code: number; message: string } {
  if (p.length < 2) return { code: 0, message: '' };
  return { code: (p[0] << 8) | p[1], message: decoder.decode(p.subarray(2)) };
}

/** TermMode is the pty's input mode from a term-mode frame (version 7). */
export interface TermMode {
  /** The log's end when the mode was read. */
  at: number;
  echo: boolean;
  canonical: boolean;
}

/** parseTermMode decodes a term-mode payload; null when it is malformed (short, long, or reserved bits set). */
export function parseTermMode(p: Uint8Array): TermMode | null {
  if (p.length !== 9 || (p[8] & ~0x03) !== 0) return null;
  return { at: readU64(p), echo: (p[8] & 0x01) !== 0, canonical: (p[8] & 0x02) !== 0 };
}

/** rttFromPong is the round trip a pong answers (its payload: the ping's send time, ms); null when it cannot be one. */
export function rttFromPong(p: Uint8Array, now: number): number | null {
  if (p.length !== 8) return null;
  const ms = now - readU64(p);
  return ms >= 0 && ms < 60000 ? ms : null;
}

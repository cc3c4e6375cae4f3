// The event stream (GET /api/events, server-sent events) read with fetch,
// since EventSource cannot send the Authorization header the page's
// credential goes in. The stream is read as it comes; each event's data
// is one JSON line (docs/protocol.md, "Events").

import { authHeaders } from './auth';

export interface StreamHooks {
  /** open: the stream answered; what happened while it was down is to be read again. */
  open(): void;
  /** event: one event's kind and data. */
  event(kind: string, data: string): void;
  /** closed: the stream ended; status is the refusal's HTTP status, 0 for a network end. */
  closed(status: number): void;
}

/** parseSSE feeds text to the event parser state and calls emit for each whole event; it returns what is left unparsed. */
export function parseSSE(buf: string, emit: (kind: string, data: string) => void): string {
  for (;;) {
    const m = /\r\n\r\n|\n\n|\r\r/.exec(buf);
    if (!m) return buf;
    const block = buf.slice(0, m.index);
    buf = buf.slice(m.index + m[0].length);
    let kind = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r\n|\n|\r/)) {
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') kind = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) emit(kind, data.join('\n'));
  }
}

/** EventStream is one GET /api/events; close ends it. It does not reconnect: the page decides when. */
export class EventStream {
  private readonly ac = new AbortController();

  constructor(url: string, hooks: StreamHooks) {
    void this.run(url, hooks);
  }

  close(): void {
    this.ac.abort();
  }

  private async run(url: string, hooks: StreamHooks): Promise<void> {
    let status = 0;
    try {
      const r = await fetch(url, { headers: { Accept: 'text/event-stream', ...authHeaders() }, cache: 'no-store', signal: this.ac.signal });
      if (!r.ok || !r.body) {
        status = r.status || 0;
        return;
      }
      hooks.open();
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf = parseSSE(buf + value, (k, d) => hooks.event(k, d));
      }
    } catch {
      // aborted, or the network went: status 0
    } finally {
      if (!this.ac.signal.aborted) hooks.closed(status);
    }
  }
}

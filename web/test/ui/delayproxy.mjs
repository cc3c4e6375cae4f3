// delayProxy: a TCP proxy on 127.0.0.1 that delays each chunk of a
// WebSocket connection by a fixed time each way, in order (a slow
// network); any other connection (the page's HTTP) passes at once.

import net from 'node:net';

/**
 * delayProxy listens on port listen (0: any) and forwards to port on
 * 127.0.0.1, delaying a WebSocket connection's chunks by delay ms each way.
 * It resolves to { port, close }.
 */
export function delayProxy(listen, port, delay) {
  const conns = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    conns.add(client).add(upstream);
    let delayed = null;
    const pipe = (from, to) => {
      // One queue and one timer per direction: timers set for the same
      // moment may fire in any order on a busy event loop, and a chunk
      // must never overtake the one before it.
      const queue = [];
      let timer = null;
      const drain = () => {
        timer = null;
        while (queue.length && queue[0].at <= Date.now()) {
          const { b } = queue.shift();
          if (b === null) to.destroy();
          else if (!to.destroyed) to.write(b);
        }
        if (queue.length) timer = setTimeout(drain, queue[0].at - Date.now());
      };
      const later = (b) => {
        queue.push({ at: Date.now() + delay, b });
        if (timer === null) timer = setTimeout(drain, delay);
      };
      from.on('data', (b) => {
        if (delayed === null) delayed = /^upgrade:\s*websocket/im.test(b.toString('latin1'));
        if (!delayed) return void to.write(b);
        later(b);
      });
      // The end goes after the chunks before it.
      from.on('close', () => (delayed ? later(null) : to.destroy()));
      from.on('error', () => to.destroy());
    };
    pipe(client, upstream);
    pipe(upstream, client);
  });
  return new Promise((resolve) =>
    server.listen(listen, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        close: () => {
          for (const c of conns) c.destroy();
          return new Promise((r) => server.close(r));
        },
      }),
    ),
  );
}

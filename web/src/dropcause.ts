// Why a connection is down, as far as the page can tell: this device is
// offline (the browser says so), the termkeep server does not answer (a
// request to it fails too, with the device online), or the server answers
// but the session's connection dropped (a proxy, the network between).
// Pure: the session records what its last try learned, the overlay says it.

/** What the page learned of a lost connection; null: nothing yet. */
export type DropCause = 'offline' | 'server' | 'link' | null;

/** dropCause is what a retry learned: whether a request to the server was answered (status 0: it failed to reach it). */
export function dropCause(online: boolean, answered: boolean, status = 0): DropCause {
  if (!online) return 'offline';
  if (answered) return 'link';
  return status === 0 ? 'server' : null;
}

/** dropNotice is the overlay's sentence on why the connection is down; lastError when the page cannot tell. */
export function dropNotice(online: boolean, cause: DropCause, lastError: string): string {
  if (!online || cause === 'offline') return 'This device is offline: the connection comes back with the network.';
  if (cause === 'server') return 'The termkeep server does not answer (this device is online): it may have stopped.';
  if (cause === 'link') return 'The termkeep server answers, but the connection to this session dropped on the way.';
  return lastError;
}

import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How long a connection refused for its body stays open after the answer: long enough for
 * a client still writing to read it, short enough not to hold the connection.
 */
const LINGER_MS = 2_000;

/**
 * For an answer sent before the request's body was read (a 413): Node ends such a
 * connection (Connection: close) and destroys the socket as soon as the answer is out,
 * while the client is still writing; the unread bytes make the kernel reset the
 * connection, and a client that writes before it reads (Node's `http`, proxies, SDKs) gets
 * EPIPE or ECONNRESET instead of the answer. Here the socket is kept for LINGER_MS after
 * the answer, half-closed and no longer read: the client's writes stop at the kernels'
 * buffers (nothing more is read into memory), it reads the answer and the end of the
 * connection, and only then is the socket destroyed.
 */
export function lingerAfterAnswer(request: IncomingMessage, response: ServerResponse): void {
  if (request.complete) return;
  // Node's own 'finish' listener runs first: it has ended the socket (destroySoon) and
  // waits for the answer to be flushed to destroy it.
  response.once('finish', () => {
    const { socket } = request;
    if (socket.destroyed) return;
    socket.removeListener('finish', socket.destroy);
    const linger = () => {
      request.pause();
      socket.pause();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    if (socket.writableFinished) linger();
    else socket.once('finish', linger);
  });
}

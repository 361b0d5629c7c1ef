import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * How long a connection refused for its body stays open after the answer: long enough for
 * a client still writing to read it, short enough not to hold the connection.
 */
export const LINGER_MS = 2_000;

/**
 * After a 413, Node ends the connection (Connection: close) and destroys the socket once
 * the answer is out, while the client is still writing its body: the unread bytes make
 * the kernel reset the connection, and a client that writes before it reads (Node's
 * `http`, proxies, SDKs) gets EPIPE or ECONNRESET instead of the answer. Here the socket
 * is kept, half-closed and no longer read, for LINGER_MS: the client's writes stop at
 * its own and our kernel buffers (nothing more is read into memory), it reads the answer
 * and the end of the connection, and only then is the socket destroyed.
 */
export function lingerAfterRefusedBody(
  request: FastifyRequest,
  reply: FastifyReply,
  done: () => void,
): void {
  const { socket } = request.raw;
  if (reply.statusCode === 413 && !request.raw.complete && !socket.destroyed) {
    // Node's destroySoon() is waiting for the answer to be flushed to destroy the socket.
    socket.removeListener('finish', socket.destroy);
    const linger = () => {
      request.raw.pause();
      socket.pause();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    if (socket.writableFinished) linger();
    else socket.once('finish', linger);
  }
  done();
}

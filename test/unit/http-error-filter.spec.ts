import type { ArgumentsHost } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpErrorFilter } from '../../src/common/filters/http-error.filter.js';

/** A request with this id, and a reply that keeps what the filter answers. */
function hostFor(requestId: string) {
  const answered: { status?: number; body?: unknown } = {};
  const reply = {
    status: (status: number) => ((answered.status = status), reply),
    headers: () => reply,
    type: () => reply,
    send: (body: unknown) => ((answered.body = body), reply),
  };
  const host = {
    switchToHttp: () => ({
      getRequest: () => ({ id: requestId, raw: {} }),
      getResponse: () => reply,
    }),
  } as unknown as ArgumentsHost;
  return { host, answered };
}

describe('HttpErrorFilter', () => {
  afterEach(() => vi.restoreAllMocks());

  it("names the request's id on the error it logs for an unexpected failure, and answers 500", () => {
    const error = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { host, answered } = hostFor('req-500');
    new HttpErrorFilter([]).catch(new Error('boom'), host);
    expect(answered).toEqual({
      status: 500,
      body: { error: 500, message: 'internal server error' },
    });
    expect(error).toHaveBeenCalledWith(
      expect.objectContaining({ requestId: 'req-500', err: expect.any(Error) }),
      'boom',
    );
  });

  it("names the request's id on the warning a classified error carries", () => {
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { host, answered } = hostFor('req-503');
    const classify = () => ({ status: 503, message: 'try later', warning: 'database down' });
    new HttpErrorFilter([classify]).catch(new Error('connection refused'), host);
    expect(answered.status).toBe(503);
    expect(warn).toHaveBeenCalledWith({ requestId: 'req-503' }, 'database down');
  });
});

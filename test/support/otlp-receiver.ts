import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/** A span as OTLP/HTTP JSON carries it, with its attributes made a plain object. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

/** OTLP's SpanKind values. */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

/** A W3C traceparent of a sampled span in a new trace, as an upstream service sends it. */
export function upstreamTraceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/** How the collector answers an export: a status, or never ('hang'). */
export type CollectorAnswer = number | 'hang';

interface OtlpKeyValue {
  key: string;
  value: Record<string, unknown>;
}

function plain(attributes: OtlpKeyValue[] = []): Record<string, unknown> {
  return Object.fromEntries(
    attributes.map(({ key, value }) => {
      const [kind, content] = Object.entries(value)[0] ?? [];
      return [key, kind === 'intValue' ? Number(content) : content];
    }),
  );
}

/**
 * An OpenTelemetry collector stand-in on loopback: it accepts OTLP/HTTP exports at
 * /v1/traces and keeps the spans of those sent as JSON (http/json); of protobuf exports
 * (http/protobuf) it keeps the bodies, which a test can search for ids.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly protobufBodies: Buffer[] = [];
  readonly exports: { path: string; contentType: string; headers: Record<string, unknown> }[] = [];
  answer: () => CollectorAnswer = () => 200;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new OtlpReceiver(server, (server.address() as { port: number }).port);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => receiver.receive(request, Buffer.concat(chunks), response));
    });
    return receiver;
  }

  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  /** Resolves with the first span `matches` accepts, once it has arrived; rejects after `timeoutMs`. */
  async waitForSpan(
    matches: (span: ReceivedSpan) => boolean,
    timeoutMs = 15_000,
  ): Promise<ReceivedSpan> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.spans.find(matches);
      if (found) return found;
      if (Date.now() > deadline) {
        const names = [...new Set(this.spans.map(({ name }) => name))].join(', ');
        throw new Error(`no such span arrived within ${timeoutMs} ms; received: ${names}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  private receive(
    request: import('node:http').IncomingMessage,
    body: Buffer,
    response: import('node:http').ServerResponse,
  ): void {
    const contentType = request.headers['content-type'] ?? '';
    this.exports.push({ path: request.url ?? '', contentType, headers: request.headers });
    const answer = this.answer();
    if (answer === 'hang') return;
    if (answer === 200) {
      if (contentType.includes('json')) this.keepJson(body.toString('utf8'));
      else this.protobufBodies.push(body);
    }
    response.writeHead(answer, { 'content-type': contentType || 'application/json' });
    response.end(contentType.includes('json') ? '{}' : '');
  }

  private keepJson(text: string): void {
    const { resourceSpans = [] } = JSON.parse(text) as {
      resourceSpans?: {
        resource?: { attributes?: OtlpKeyValue[] };
        scopeSpans?: {
          scope?: { name?: string };
          spans?: (Omit<ReceivedSpan, 'scope' | 'attributes' | 'resource' | 'links'> & {
            attributes?: OtlpKeyValue[];
            links?: { traceId: string; spanId: string }[];
          })[];
        }[];
      }[];
    };
    for (const { resource, scopeSpans = [] } of resourceSpans) {
      for (const { scope, spans = [] } of scopeSpans) {
        for (const span of spans) {
          this.spans.push({
            ...span,
            scope: scope?.name ?? '',
            attributes: plain(span.attributes),
            links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
            resource: plain(resource?.attributes),
          });
        }
      }
    }
  }
}

import { readFile } from 'node:fs/promises';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

/**
 * The seed ("Plant Store" 1.0.0), copied into the repository so that a lone clone can run
 * the suite; seed-copy.spec.ts checks the copy against `../shared/spec/` where it exists.
 */
export const SEED_DOCUMENT_URL = new URL(
  '../fixtures/plant-store.seed.openapi.yaml',
  import.meta.url,
);

/** One request as a client saw it answered. */
export interface Exchange {
  method: string;
  url: string;
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

// Only the parts of an OpenAPI document the checks read.
type Schema = Record<string, unknown>;
interface Header {
  required?: boolean;
  schema?: Schema;
}
interface Response {
  headers?: Record<string, Header>;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  responses: Record<string, Response>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/**
 * Bodies are parsed with JSON.parse, where int64's largest value reads as 2^63 (the
 * nearest double); the e2e tests compare the exact digits of such bodies.
 */
const INT_FORMATS = {
  int32: (value: number) => value >= -(2 ** 31) && value < 2 ** 31,
  int64: (value: number) => value >= -(2 ** 63) && value <= 2 ** 63,
};
/**
 * Keywords of the OpenAPI 3.1 schema dialect beyond JSON Schema 2020-12, and the fields of
 * an OpenAPI document: the document is given to Ajv whole, so that its `#/components/…`
 * references resolve, and its top-level fields must not read as unknown keywords.
 */
const SCHEMA_DIALECT_KEYWORDS = ['discriminator', 'xml', 'externalDocs', 'example'];
const DOCUMENT_FIELDS = [
  'openapi',
  'info',
  'jsonSchemaDialect',
  'servers',
  'paths',
  'webhooks',
  'components',
  'security',
  'tags',
];
const ERROR_SCHEMA = ['components', 'schemas', 'Error'];
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Checks exchanges against one OpenAPI 3.1 document with a JSON Schema 2020-12 validator:
 * the status must be documented for the operation, the body must match the documented
 * media type and schema (an error on a route the document does not list must still be an
 * Error), and documented headers must be present when required and match their schema.
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: true });
  private readonly validators = new Map<string, ValidateFunction>();

  /**
   * @param lenient the seed documents few statuses: one it leaves out is not a problem,
   *   but its body, when it is an error, must still be the seed's Error.
   */
  constructor(
    readonly name: string,
    readonly document: OpenApiDocument,
    private readonly lenient = false,
  ) {
    addFormats.default(this.ajv);
    for (const [format, inRange] of Object.entries(INT_FORMATS)) {
      this.ajv.addFormat(format, { type: 'number', validate: inRange });
    }
    this.ajv.addVocabulary([...SCHEMA_DIALECT_KEYWORDS, ...DOCUMENT_FIELDS]);
    this.ajv.addSchema(document as object, name);
  }

  /** Every way the exchange breaks this document; empty when it conforms. */
  problemsWith(exchange: Exchange): string[] {
    const where = `${exchange.method} ${exchange.url} → ${exchange.statusCode}`;
    return this.check(exchange).map((problem) => `${this.name}: ${where}: ${problem}`);
  }

  private check({ method, url, statusCode, headers, body }: Exchange): string[] {
    if (method === 'HEAD') return this.checkHead(url, statusCode, headers);
    const operation = this.findOperation(method, url);
    const response = operation?.responses[String(statusCode)];
    if (!operation || !response) {
      if (operation && !this.lenient) return [`status ${statusCode} is not documented`];
      return statusCode >= 400 ? this.checkJson(body, headers, ERROR_SCHEMA) : [];
    }
    const problems = this.checkHeaders(response, headers);
    if (!response.content) {
      return body === '' ? problems : [...problems, `a body where none is documented: ${body}`];
    }
    const mediaType = String(headers['content-type'] ?? '').split(';')[0];
    if (!(mediaType in response.content)) {
      return [...problems, `content type "${mediaType}" is not documented`];
    }
    // Only JSON bodies have a schema to check; text (the metrics) is any string.
    if (mediaType !== 'application/json') return problems;
    const { path } = operation;
    const status = String(statusCode);
    const schema = ['paths', path, method.toLowerCase(), 'responses', status, 'content'];
    return [...problems, ...this.checkJson(body, headers, [...schema, mediaType, 'schema'])];
  }

  /**
   * HEAD is GET without the body (Fastify answers it for every GET route, and Node sends
   * no body for it): the status and headers are checked against the GET operation.
   */
  private checkHead(url: string, statusCode: number, headers: Exchange['headers']): string[] {
    const operation = this.findOperation('GET', url);
    const response = operation?.responses[String(statusCode)];
    if (operation && !response && !this.lenient) return [`status ${statusCode} is not documented`];
    return response ? this.checkHeaders(response, headers) : [];
  }

  private findOperation(method: string, url: string) {
    // Not `new URL`: a path such as `//` reads as a protocol-relative address there.
    const path = url.split('?')[0];
    const templates = Object.keys(this.document.paths).sort(
      (a, b) => a.split('{').length - b.split('{').length,
    );
    const template = templates.find((candidate) =>
      new RegExp(`^${candidate.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
    );
    const operation = template && this.document.paths[template][method.toLowerCase()];
    if (!template || !operation) return undefined;
    return { path: template, responses: operation.responses };
  }

  private checkHeaders(response: Response, headers: Exchange['headers']): string[] {
    return Object.entries(response.headers ?? {}).flatMap(([name, header]) => {
      const value = headers[name.toLowerCase()];
      if (value === undefined) return header.required ? [`header ${name} is missing`] : [];
      const validate = this.ajv.compile(header.schema ?? {});
      const headerValue = header.schema?.type === 'integer' ? Number(value) : value;
      return validate(headerValue)
        ? []
        : [`header ${name}: ${this.ajv.errorsText(validate.errors)}`];
    });
  }

  private checkJson(body: string, headers: Exchange['headers'], pointer: string[]): string[] {
    if (!String(headers['content-type']).startsWith('application/json')) {
      return [`content type is ${headers['content-type']}, not application/json`];
    }
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return [`the body is not JSON: ${body}`];
    }
    const validate = this.validator(pointer);
    return validate(value) ? [] : [`${this.ajv.errorsText(validate.errors)} in ${body}`];
  }

  private validator(pointer: string[]): ValidateFunction {
    const fragment = pointer
      .map((token) => encodeURIComponent(token.replaceAll('~', '~0').replaceAll('/', '~1')))
      .join('/');
    const ref = `${this.name}#/${fragment}`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.getSchema(ref);
      if (!validate) throw new Error(`${ref} is not in the document`);
      this.validators.set(ref, validate);
    }
    return validate;
  }

  /**
   * Whether the document accepts `value` where `pointer` (the path from the document's
   * root to a schema) leads, as a client validating with Ajv would judge it.
   */
  accepts(pointer: string[], value: unknown): boolean {
    return this.validator(pointer)(value) as boolean;
  }

  /** Each operation the document lists, as a method and a path template. */
  operations(): Array<{ method: string; path: string }> {
    return Object.entries(this.document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => HTTP_METHODS.includes(method))
        .map((method) => ({ method: method.toUpperCase(), path })),
    );
  }
}

/** The served document and the seed, each as a contract. */
export async function loadContracts(served: OpenApiDocument): Promise<OpenApiContract[]> {
  const seed = parseYaml(await readFile(SEED_DOCUMENT_URL, 'utf8')) as OpenApiDocument;
  return [new OpenApiContract('served', served), new OpenApiContract('seed', seed, true)];
}

import { Controller, Get, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Public } from '../../src/auth/decorators/public.decorator.js';
import { RequiresScopes } from '../../src/auth/decorators/requires-scopes.decorator.js';

@Controller()
class ExampleController {
  @Get('open')
  @Public()
  open() {}

  @Get('guarded')
  @RequiresScopes('plants:read')
  guarded() {}
}

describe('the auth decorators in the OpenAPI document', () => {
  let app: INestApplication;
  let document: OpenAPIObject;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [ExampleController],
    }).compile();
    app = await moduleRef.createNestApplication(new FastifyAdapter()).init();
    document = SwaggerModule.createDocument(app, {
      openapi: '3.1.0',
      info: { title: 'example', version: '1' },
      security: [{ bearerAuth: [] }],
    });
  });
  afterAll(() => app.close());

  it('@Public() lifts the global bearer requirement', () => {
    expect(document.paths['/open'].get!.security).toEqual([{}]);
  });

  it('@RequiresScopes() documents what the guard and the rate limit answer', () => {
    const { security, responses } = document.paths['/guarded'].get!;
    expect(security).toBeUndefined();
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['401', '403', '429']));
    expect(responses['403']).toMatchObject({
      description: 'The token lacks the scope plants:read',
    });
    expect(responses['401']).toMatchObject({ headers: { 'WWW-Authenticate': { required: true } } });
    expect(responses['429']).toMatchObject({ headers: { 'Retry-After': { required: true } } });
  });
});

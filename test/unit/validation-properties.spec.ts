import { Body, Controller, type INestApplication, Post } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ApiBody, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BooleanProperty } from '../../src/common/validation/boolean-property.decorator.js';
import { DateTimeProperty } from '../../src/common/validation/date-time.decorator.js';
import { Int64Property } from '../../src/common/validation/int64-property.decorator.js';
import { EnumProperty } from '../../src/common/validation/enum-property.decorator.js';
import { IntegerProperty } from '../../src/common/validation/integer-property.decorator.js';
import { TextProperty } from '../../src/common/validation/text-property.decorator.js';
import { RequestValidationPipe } from '../../src/common/validation/validation.pipe.js';

class HarvestBody {
  @IntegerProperty({ min: 1, max: 100000 }, { description: 'grams' })
  weightGrams: number;

  @DateTimeProperty({ description: 'when' })
  harvestedAt: Date;

  @EnumProperty(['a', 'b', 'c'], { description: 'grade' })
  grade: 'a' | 'b' | 'c';

  @BooleanProperty({ description: 'organic' })
  organic: boolean;

  @TextProperty({ min: 1, max: 200 }, { description: 'note', required: false })
  note?: string;

  @DateTimeProperty({ description: 'sold', required: false })
  soldAt?: Date;

  @Int64Property({ description: 'external', required: false })
  externalId?: bigint;
}

@Controller()
class HarvestsController {
  @Post('harvests')
  @ApiBody({ type: HarvestBody })
  create(@Body() body: HarvestBody) {
    return body;
  }
}

const VALID = {
  weightGrams: 5,
  harvestedAt: '2026-07-01T14:30:00+02:00',
  grade: 'b',
  organic: true,
};

/** The body as the validation pipe passes it on, or the message of its 400. */
async function validated(body: object): Promise<HarvestBody | string> {
  try {
    return (await new RequestValidationPipe().transform(body, {
      type: 'body',
      metatype: HarvestBody,
    })) as HarvestBody;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the shared property decorators', () => {
  let app: INestApplication;
  let document: OpenAPIObject;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [HarvestsController],
    }).compile();
    app = await moduleRef.createNestApplication(new FastifyAdapter()).init();
    document = SwaggerModule.createDocument(app, {
      openapi: '3.1.0',
      info: { title: 'example', version: '1' },
    });
  });
  afterAll(() => app.close());

  it('declare in the document exactly what they accept', () => {
    const schema = document.components!.schemas!.HarvestBody;
    expect(schema).toEqual({
      type: 'object',
      properties: {
        weightGrams: {
          type: 'integer',
          format: 'int32',
          minimum: 1,
          maximum: 100000,
          description: 'grams',
        },
        harvestedAt: { type: 'string', format: 'date-time', description: 'when' },
        grade: { type: 'string', enum: ['a', 'b', 'c'], description: 'grade' },
        organic: { type: 'boolean', description: 'organic' },
        note: {
          type: 'string',
          minLength: 1,
          maxLength: 200,
          pattern: '^[^\\x00]*$',
          description: 'note',
        },
        soldAt: { type: 'string', format: 'date-time', description: 'sold' },
        externalId: { type: 'integer', format: 'int64', description: 'external' },
      },
      required: ['weightGrams', 'harvestedAt', 'grade', 'organic'],
    });
  });

  it('pass a valid body on, its date-time as a Date, an absent optional property undefined', async () => {
    const body = await validated(VALID);
    expect(body).toBeInstanceOf(HarvestBody);
    expect(body).toEqual({ ...VALID, harvestedAt: new Date('2026-07-01T12:30:00Z') });
    expect((body as HarvestBody).note).toBeUndefined();
  });

  it.each([
    [{ weightGrams: 0 }, 'weightGrams must be an integer from 1 to 100000'],
    [{ weightGrams: 2147483648 }, 'weightGrams must be an integer from 1 to 100000'],
    [{ weightGrams: 1.5 }, 'weightGrams must be an integer from 1 to 100000'],
    [{ weightGrams: '5' }, 'weightGrams must be an integer from 1 to 100000'],
    [{ harvestedAt: '9999-12-31T23:59:59.999-23:59' }, 'harvestedAt must fall in the years'],
    [{ harvestedAt: '2026-07-01' }, 'harvestedAt must be an RFC 3339 date-time'],
    [{ harvestedAt: '2026-W27-3' }, 'harvestedAt must be an RFC 3339 date-time'],
    [{ harvestedAt: null }, 'harvestedAt must be a string'],
    [{ grade: 'A' }, 'grade must be one of: a, b, c'],
    [{ organic: 'true' }, 'organic must be a boolean value'],
    [{ note: '' }, 'note must be 1 to 200 characters long'],
    [{ note: null }, 'note must be a string'],
    [{ note: 'a\u0000b' }, 'note must not contain the character U+0000'],
    [{ soldAt: '2026-07-01T12:30:00' }, 'soldAt must be an RFC 3339 date-time'],
    [{ externalId: null }, 'externalId must be an integer from'],
    [{ externalId: '5' }, 'externalId must be an integer from'],
  ])('refuse %j, naming the property: %s', async (change, message) => {
    expect(await validated({ ...VALID, ...change })).toContain(message);
  });

  it('refuse bounds an integer column cannot hold', () => {
    expect(() => IntegerProperty({ min: 0, max: 2 ** 31 }, { description: 'x' })).toThrow(
      /exceed an integer column/,
    );
  });
});

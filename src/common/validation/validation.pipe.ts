import {
  type ArgumentMetadata,
  BadRequestException,
  Injectable,
  ValidationPipe,
} from '@nestjs/common';

/**
 * Bodies and parameters become DTO instances checked against their decorators. A body
 * must be a JSON object; unknown properties are dropped (the seed allows them, they are
 * never stored), and the client is told every problem at once.
 */
@Injectable()
export class RequestValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidUnknownValues: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) =>
        new BadRequestException(
          errors.flatMap((error) => Object.values(error.constraints ?? {})).join('; '),
        ),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (metadata.type === 'body' && !isObject) {
      throw new BadRequestException('the request body must be a JSON object');
    }
    return super.transform(value, metadata);
  }

  /** A `bigint` parameter is no DTO: ParseInt64Pipe reads it. */
  protected override toValidate(metadata: ArgumentMetadata): boolean {
    return (metadata.metatype as unknown) !== BigInt && super.toValidate(metadata);
  }
}

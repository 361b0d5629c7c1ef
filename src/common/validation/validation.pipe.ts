import {
  type ArgumentMetadata,
  BadRequestException,
  Injectable,
  ValidationPipe,
} from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';

/** DTOs of bodies that a request may leave out: an absent body is read as `{}`. */
const OPTIONAL_BODIES = new WeakSet<Function>();

/** Marks a body DTO whose every member is optional, so that the body itself may be absent. */
export function OptionalBody(): ClassDecorator {
  return (dto) => {
    OPTIONAL_BODIES.add(dto);
  };
}

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

  override async transform(given: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const absentOptional =
      metadata.type === 'body' &&
      given === undefined &&
      metadata.metatype !== undefined &&
      OPTIONAL_BODIES.has(metadata.metatype);
    const value = absentOptional ? {} : given;
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (metadata.type === 'body' && !isObject) {
      throw new BadRequestException('the request body must be a JSON object');
    }
    return super.transform(
      metadata.type === 'body' && metadata.metatype
        ? declaredMembers(value as object, metadata.metatype)
        : value,
      metadata,
    );
  }

  /** A `bigint` parameter is no DTO: ParseInt64Pipe reads it. */
  protected override toValidate(metadata: ArgumentMetadata): boolean {
    return (metadata.metatype as unknown) !== BigInt && super.toValidate(metadata);
  }
}

/**
 * The members of a body its DTO declares: the others would be dropped after validation
 * anyway, and class-transformer's walk over them is quadratic in their keys (a 64 KiB
 * body of thousands of keys held the event loop for 100 ms).
 */
function declaredMembers(body: object, dto: Function): object {
  const declared = declaredNames(dto);
  const members: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (declared.has(key)) members[key] = (body as Record<string, unknown>)[key];
  }
  return members;
}

/** A DTO's declared members, read from class-validator's metadata once per DTO. */
const namesByDto = new WeakMap<Function, Set<string>>();

function declaredNames(dto: Function): Set<string> {
  let names = namesByDto.get(dto);
  if (!names) {
    names = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(dto, '', true, false)
        .map(({ propertyName }) => propertyName),
    );
    namesByDto.set(dto, names);
  }
  return names;
}

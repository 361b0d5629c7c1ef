import {
  type ArgumentMetadata,
  BadRequestException,
  Injectable,
  ParseUUIDPipe,
} from '@nestjs/common';

export const UUID_RULE = 'must be a UUID';

/**
 * A path or query parameter holding a UUID, accepted as Nest's ParseUUIDPipe accepts it
 * (versions 1 to 8, the nil and the max UUID, any case), refused in the product's words
 * with the parameter's name: `id must be a UUID`, as ParseInt64Pipe words its ids.
 */
@Injectable()
export class ParseUuidPipe extends ParseUUIDPipe {
  override async transform(value: string, { data }: ArgumentMetadata): Promise<string> {
    if (typeof value !== 'string' || !this.isUUID(value)) {
      throw new BadRequestException(`${data ?? 'the value'} ${UUID_RULE}`);
    }
    return value;
  }
}

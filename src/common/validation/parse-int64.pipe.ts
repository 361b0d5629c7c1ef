import {
  type ArgumentMetadata,
  BadRequestException,
  Injectable,
  type PipeTransform,
} from '@nestjs/common';
import { parseJsonNumber } from '../json/json-number.js';
import { INT64_RULE, isInt64 } from './is-int64.decorator.js';

/**
 * A path or query parameter holding an int64, read by the rules a body id follows:
 * `9223372036854775807` and `1e3` are ids; `9223372036854775808`, `1.5` and `abc` are 400.
 */
@Injectable()
export class ParseInt64Pipe implements PipeTransform<string, bigint> {
  transform(value: string, { data }: ArgumentMetadata): bigint {
    const number = parseJsonNumber(value);
    if (!isInt64(number)) throw new BadRequestException(`${data ?? 'the value'} ${INT64_RULE}`);
    return BigInt(number);
  }
}

import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, ValidateIf } from 'class-validator';
import {
  decimalDigitsToNumber,
  IsIntegerBetween,
} from '../validation/is-integer-between.decorator.js';

export const PAGE_SIZE = { min: 1, max: 100, default: 20 };

/** The query of a list read a page at a time (keyset pagination). Unknown parameters are ignored. */
export class PageQueryDto {
  @ApiProperty({
    required: false,
    type: 'integer',
    format: 'int32',
    minimum: PAGE_SIZE.min,
    maximum: PAGE_SIZE.max,
    default: PAGE_SIZE.default,
    description: 'How many items a page holds at most',
  })
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(PAGE_SIZE.min, PAGE_SIZE.max)
  limit: number = PAGE_SIZE.default;

  @ApiProperty({
    required: false,
    minLength: 1,
    description:
      'Where the page starts: copy it from the `Link: <…>; rel="next"` header of the previous page',
  })
  @ValidateIf((query: PageQueryDto) => query.cursor !== undefined)
  @IsString()
  cursor?: string;
}

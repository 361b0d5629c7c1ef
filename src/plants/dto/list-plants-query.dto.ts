import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, ValidateIf } from 'class-validator';
import {
  decimalDigitsToNumber,
  IsIntegerBetween,
} from '../../common/validation/is-integer-between.decorator.js';
import { IsText } from '../../common/validation/is-text.decorator.js';
import { TAG_LIMITS } from './plant.dto.js';

export const PAGE_SIZE = { min: 1, max: 100, default: 20 };

/** The query of GET /plants. Unknown parameters are ignored. */
export class ListPlantsQueryDto {
  @ApiProperty({
    required: false,
    type: 'integer',
    format: 'int32',
    minimum: PAGE_SIZE.min,
    maximum: PAGE_SIZE.max,
    default: PAGE_SIZE.default,
    description: 'How many plants a page holds at most',
  })
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(PAGE_SIZE.min, PAGE_SIZE.max)
  limit: number = PAGE_SIZE.default;

  @ApiProperty({
    required: false,
    maxLength: TAG_LIMITS.max,
    description: 'Only plants with exactly this tag (`tag=` selects the empty tag)',
  })
  @ValidateIf((query: ListPlantsQueryDto) => query.tag !== undefined)
  @IsText(TAG_LIMITS)
  tag?: string;

  @ApiProperty({
    required: false,
    description:
      'Where the page starts: copy it from the `Link: <…>; rel="next"` header of the previous page',
  })
  @ValidateIf((query: ListPlantsQueryDto) => query.cursor !== undefined)
  @IsString()
  cursor?: string;
}

import { ApiProperty } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { IsText } from '../../common/validation/is-text.decorator.js';
import { TAG_LIMITS } from './plant.dto.js';

/** The query of GET /plants. Unknown parameters are ignored. */
export class ListPlantsQueryDto extends PageQueryDto {
  @ApiProperty({
    required: false,
    maxLength: TAG_LIMITS.max,
    description: 'Only plants with exactly this tag (`tag=` selects the empty tag)',
  })
  @ValidateIf((query: ListPlantsQueryDto) => query.tag !== undefined)
  @IsText(TAG_LIMITS)
  tag?: string;
}

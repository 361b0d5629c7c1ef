import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { TextProperty } from '../../common/validation/text-property.decorator.js';
import { TAG_LIMITS } from './plant.dto.js';

/** The query of GET /plants. Unknown parameters are ignored. */
export class ListPlantsQueryDto extends PageQueryDto {
  @TextProperty(TAG_LIMITS, {
    required: false,
    description: 'Only plants with exactly this tag (`tag=` selects the empty tag)',
  })
  tag?: string;
}

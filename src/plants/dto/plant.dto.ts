import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { IsText } from '../../common/validation/is-text.decorator.js';
import type { Plant } from '../entities/plant.entity.js';

export const NAME_LIMITS = { min: 1, max: 255 };
export const TAG_LIMITS = { min: 0, max: 255 };

/**
 * The seed's Plant: `name`, and `tag` only when the plant has one. It is the answer of
 * POST /plants and the fields every plant body shares.
 */
@ApiSchema({ name: 'Plant' })
export class PlantDto {
  @ApiProperty({
    description: 'The name of the plant (no U+0000)',
    minLength: NAME_LIMITS.min,
    maxLength: NAME_LIMITS.max,
  })
  @IsText(NAME_LIMITS)
  name: string;

  /** Absent means no tag; `null` is not a string and is refused. */
  @ApiProperty({
    required: false,
    description: 'Tag to specify the type; "" is a tag, distinct from none (no U+0000)',
    minLength: TAG_LIMITS.min,
    maxLength: TAG_LIMITS.max,
  })
  @ValidateIf((plant: PlantDto) => plant.tag !== undefined)
  @IsText(TAG_LIMITS)
  tag?: string;
}

export function toPlantDto({ name, tag }: Plant): PlantDto {
  return tag === null ? { name } : { name, tag };
}

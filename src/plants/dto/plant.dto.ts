import { ApiSchema } from '@nestjs/swagger';
import { TextProperty } from '../../common/validation/text-property.decorator.js';
import type { Plant } from '../entities/plant.entity.js';

export const NAME_LIMITS = { min: 1, max: 255 };
export const TAG_LIMITS = { min: 0, max: 255 };

/**
 * The seed's Plant: `name`, and `tag` only when the plant has one. It is the answer of
 * POST /plants and the fields every plant body shares.
 */
@ApiSchema({ name: 'Plant' })
export class PlantDto {
  @TextProperty(NAME_LIMITS, { description: 'The name of the plant (no U+0000)' })
  name: string;

  /** Absent means no tag; `null` is not a string and is refused. */
  @TextProperty(TAG_LIMITS, {
    required: false,
    description: 'Tag to specify the type; "" is a tag, distinct from none (no U+0000)',
  })
  tag?: string;
}

export function toPlantDto({ name, tag }: Plant): PlantDto {
  return tag === null ? { name } : { name, tag };
}

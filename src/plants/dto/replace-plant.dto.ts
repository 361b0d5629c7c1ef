import { ApiSchema } from '@nestjs/swagger';
import { Int64Property } from '../../common/validation/int64-property.decorator.js';
import { PlantDto } from './plant.dto.js';

/** The body of PUT /plants/{id}: the plant's new name and tag (no tag clears it). */
@ApiSchema({ name: 'PlantReplacement' })
export class ReplacePlantDto extends PlantDto {
  /** Allowed so that a plant read with GET can be sent back as it is. */
  @Int64Property({
    required: false,
    description: 'The id of the path, repeated; any other id is refused',
  })
  id?: bigint;
}

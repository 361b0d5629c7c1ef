import { ApiSchema } from '@nestjs/swagger';
import { Int64Property } from '../../common/validation/int64-property.decorator.js';
import { PlantDto } from './plant.dto.js';

/** The seed's NewPlant. Unknown properties are dropped by the validation pipe. */
@ApiSchema({ name: 'NewPlant' })
export class CreatePlantDto extends PlantDto {
  @Int64Property({ description: 'Identification number of the plant' })
  id: bigint;
}

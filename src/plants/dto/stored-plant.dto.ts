import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { INT64_SCHEMA } from '../../common/openapi/int64.schema.js';
import type { Plant } from '../entities/plant.entity.js';
import { PlantDto, toPlantDto } from './plant.dto.js';

/** A plant as the reads answer it: the seed's Plant with its id. */
@ApiSchema({ name: 'StoredPlant' })
export class StoredPlantDto extends PlantDto {
  @ApiProperty({ ...INT64_SCHEMA, description: 'Identification number of the plant' })
  id: bigint;
}

export function toStoredPlantDto(plant: Plant): StoredPlantDto {
  return { id: plant.id, ...toPlantDto(plant) };
}

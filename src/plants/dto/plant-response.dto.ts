import type { Plant } from '../entities/plant.entity.js';

/** The seed's Plant: `name`, and `tag` only when the plant has one. */
export interface PlantResponse {
  name: string;
  tag?: string;
}

export function toPlantResponse({ name, tag }: Plant): PlantResponse {
  return tag === null ? { name } : { name, tag };
}

import { Injectable } from '@nestjs/common';
import { PlantsRepository } from './plants.repository.js';

/** A plant as other modules see it: its data, not the entity that stores it. */
export interface PlantView {
  id: bigint;
  name: string;
  /** null: no tag. */
  tag: string | null;
}

/**
 * What PlantsModule lets other modules read: a module that needs a plant (a note about
 * one, say) asks here instead of reading the plants table, so it depends on this
 * interface, not on the plants' schema. Reads by id go through the batched statements.
 */
@Injectable()
export class PlantsReader {
  constructor(private readonly plants: PlantsRepository) {}

  async find(id: bigint): Promise<PlantView | null> {
    const plant = await this.plants.findById(id);
    return plant && { id: plant.id, name: plant.name, tag: plant.tag };
  }

  async exists(id: bigint): Promise<boolean> {
    return (await this.plants.findById(id)) !== null;
  }
}

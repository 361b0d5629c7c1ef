import { ConflictException, Injectable } from '@nestjs/common';
import type { CreatePlantDto } from './dto/create-plant.dto.js';
import type { Plant } from './entities/plant.entity.js';
import { PlantsRepository } from './plants.repository.js';

@Injectable()
export class PlantsService {
  constructor(private readonly plants: PlantsRepository) {}

  /**
   * Creates a plant. Creating it again with identical content is a replay and succeeds
   * (so a client may retry safely); the same id with other content is a conflict.
   */
  async create({ id, name, tag }: CreatePlantDto): Promise<Plant> {
    const plant: Plant = { id, name, tag: tag ?? null };
    for (;;) {
      if (await this.plants.insertIfAbsent(plant)) return plant;
      const existing = await this.plants.findById(id);
      // Gone again between the two statements (deleted meanwhile): try the insert again.
      if (!existing) continue;
      if (existing.name === plant.name && existing.tag === plant.tag) return existing;
      throw new ConflictException(`a plant with id ${id} already exists with other content`);
    }
  }
}

import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Plant } from './entities/plant.entity.js';

/** The plants table. Every statement here is one round trip. */
@Injectable()
export class PlantsRepository {
  constructor(@InjectRepository(Plant) private readonly plants: Repository<Plant>) {}

  /**
   * Inserts the plant unless a plant with its id exists (`ON CONFLICT DO NOTHING`, so
   * concurrent inserts of one id wait for each other instead of failing).
   * @returns true when this call stored the plant.
   */
  async insertIfAbsent(plant: Plant): Promise<boolean> {
    const result = await this.plants
      .createQueryBuilder()
      .insert()
      .into(Plant)
      .values(plant)
      .orIgnore()
      .returning('id')
      .execute();
    return result.raw.length === 1;
  }

  findById(id: bigint): Promise<Plant | null> {
    return this.plants.findOneBy({ id });
  }
}

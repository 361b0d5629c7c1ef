import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Plant } from './entities/plant.entity.js';

export interface PlantsPageQuery {
  /** Only plants with a greater id; undefined: from the first plant. */
  afterId?: bigint;
  /** Only plants with exactly this tag. */
  tag?: string;
  count: number;
}

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

  /** Up to `count` plants by ascending id: keyset pagination, stable under inserts and deletes. */
  findPage({ afterId, tag, count }: PlantsPageQuery): Promise<Plant[]> {
    const query = this.plants.createQueryBuilder('plant').orderBy('plant.id', 'ASC').limit(count);
    if (afterId !== undefined)
      query.andWhere('plant.id > :afterId', { afterId: afterId.toString() });
    if (tag !== undefined) query.andWhere('plant.tag = :tag', { tag });
    return query.getMany();
  }

  /** @returns false when there is no plant with this id. */
  async replace({ id, name, tag }: Plant): Promise<boolean> {
    const result = await this.plants.update({ id }, { name, tag });
    return result.affected === 1;
  }

  /** @returns false when there is no plant with this id. */
  async delete(id: bigint): Promise<boolean> {
    const result = await this.plants.delete({ id });
    return result.affected === 1;
  }
}

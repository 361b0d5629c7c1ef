import {
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import type { Page } from '../common/pagination/keyset.js';
import type { CreatePlantDto } from './dto/create-plant.dto.js';
import type { ListPlantsQueryDto } from './dto/list-plants-query.dto.js';
import type { ReplacePlantDto } from './dto/replace-plant.dto.js';
import type { Plant } from './entities/plant.entity.js';
import { PLANTS_BY_ID } from './plants-keyset.js';
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

  /**
   * One page of plants by ascending id. A page starts after the last id of the previous
   * one, so paging while plants come and go never repeats a plant and never skips one
   * that existed throughout.
   */
  async list({ limit, tag, cursor }: ListPlantsQueryDto): Promise<Page<Plant>> {
    const after = PLANTS_BY_ID.startAfter(cursor);
    const plants = await this.plants.findPage({ after, tag, count: limit + 1 });
    return PLANTS_BY_ID.pageOf(plants, limit);
  }

  async findOne(id: bigint): Promise<Plant> {
    const plant = await this.plants.findById(id);
    if (!plant) throw plantNotFound(id);
    return plant;
  }

  /** Replaces the name and tag of an existing plant (an absent tag clears it); never creates. */
  async replace(id: bigint, { id: bodyId, name, tag }: ReplacePlantDto): Promise<Plant> {
    if (bodyId !== undefined && bodyId !== id) {
      throw new BadRequestException(`the body's id ${bodyId} differs from the path's id ${id}`);
    }
    const plant: Plant = { id, name, tag: tag ?? null };
    if (!(await this.plants.replace(plant))) throw plantNotFound(id);
    return plant;
  }

  async delete(id: bigint): Promise<void> {
    if (!(await this.plants.delete(id))) throw plantNotFound(id);
  }
}

function plantNotFound(id: bigint): NotFoundException {
  return new NotFoundException(`there is no plant with id ${id}`);
}

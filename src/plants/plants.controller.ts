import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { RequiresScopes } from '../auth/decorators/requires-scopes.decorator.js';
import { CreatePlantDto } from './dto/create-plant.dto.js';
import { type PlantResponse, toPlantResponse } from './dto/plant-response.dto.js';
import { PlantsService } from './plants.service.js';

@Controller('plants')
export class PlantsController {
  constructor(private readonly plants: PlantsService) {}

  /** The seed's createPlant: 200 with the Plant (no id), also for an identical replay. */
  @Post()
  @HttpCode(HttpStatus.OK)
  @RequiresScopes('plants:write')
  async create(@Body() body: CreatePlantDto): Promise<PlantResponse> {
    return toPlantResponse(await this.plants.create(body));
  }
}

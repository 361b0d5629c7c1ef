import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreatedPlantsOutbox } from './created-plants-outbox.js';
import { Plant } from './entities/plant.entity.js';
import { PlantsController } from './plants.controller.js';
import { PlantsRepository } from './plants.repository.js';
import { PlantsService } from './plants.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Plant])],
  controllers: [PlantsController],
  providers: [PlantsService, PlantsRepository, CreatedPlantsOutbox],
  // Other modules write to the outbox with each new plant (the webhooks, say).
  exports: [CreatedPlantsOutbox],
})
export class PlantsModule {}

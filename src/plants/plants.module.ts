import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreatedPlantsOutbox } from './created-plants-outbox.js';
import { Plant } from './entities/plant.entity.js';
import { PlantsController } from './plants.controller.js';
import { PlantsReader } from './plants.reader.js';
import { PlantsRepository } from './plants.repository.js';
import { PlantsService } from './plants.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Plant])],
  controllers: [PlantsController],
  providers: [PlantsService, PlantsRepository, PlantsReader, CreatedPlantsOutbox],
  // Other modules read plants through PlantsReader, and write to the outbox with each new
  // plant (the webhooks, say): never to the plants table itself.
  exports: [PlantsReader, CreatedPlantsOutbox],
})
export class PlantsModule {}

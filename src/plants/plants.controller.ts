import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequiresScopes } from '../auth/decorators/requires-scopes.decorator.js';
import { ApiInt64IdParam, ApiNotFoundResponse } from '../common/openapi/api-by-id.decorators.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import {
  ApiDatabaseBackedResponses,
  ApiErrorResponse,
  ApiJsonBodyResponses,
} from '../common/openapi/api-error-response.decorator.js';
import { nextPageLink } from '../common/pagination/next-page-link.js';
import { ParseInt64Pipe } from '../common/validation/parse-int64.pipe.js';
import { CreatePlantDto } from './dto/create-plant.dto.js';
import { ListPlantsQueryDto } from './dto/list-plants-query.dto.js';
import { PlantDto, toPlantDto } from './dto/plant.dto.js';
import { ReplacePlantDto } from './dto/replace-plant.dto.js';
import { StoredPlantDto, toStoredPlantDto } from './dto/stored-plant.dto.js';
import { PlantsService } from './plants.service.js';

const ApiPlantIdParam = () => ApiInt64IdParam('Identification number of the plant');
const ApiPlantNotFoundResponse = () => ApiNotFoundResponse('plant');

@Controller('plants')
@ApiDatabaseBackedResponses()
export class PlantsController {
  constructor(private readonly plants: PlantsService) {}

  /** The seed's createPlant: 200 with the Plant (no id), also for an identical replay. */
  @Post()
  @HttpCode(HttpStatus.OK)
  @RequiresScopes('plants:write')
  @ApiOperation({
    operationId: 'createPlant',
    summary: 'Create a plant',
    description:
      'Creates a new plant in the store. Sending the same plant again is answered like the first time.',
  })
  @ApiBody({ type: CreatePlantDto, required: true })
  @ApiOkResponse({ description: 'Plant response', type: PlantDto })
  @ApiErrorResponse(400, 'The body is not a valid NewPlant')
  @ApiErrorResponse(409, 'A plant with this id exists with another name or tag')
  @ApiJsonBodyResponses()
  async create(@Body() body: CreatePlantDto): Promise<PlantDto> {
    return toPlantDto(await this.plants.create(body));
  }

  @Get()
  @RequiresScopes('plants:read')
  @ApiOperation({
    operationId: 'listPlants',
    summary: 'List plants',
    description: 'Plants by ascending id, a page at a time.',
  })
  @ApiPageResponse({
    description: 'A page of plants',
    type: StoredPlantDto,
    example: '</plants?limit=20&cursor=MjA>; rel="next"',
  })
  @ApiErrorResponse(400, 'limit, tag or cursor is invalid')
  async list(
    @Query() query: ListPlantsQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<StoredPlantDto[]> {
    const { items, nextCursor } = await this.plants.list(query);
    if (nextCursor !== undefined) {
      const { limit, tag } = query;
      reply.header('Link', nextPageLink(reply.request, { limit, tag }, nextCursor));
    }
    return items.map(toStoredPlantDto);
  }

  @Get(':id')
  @RequiresScopes('plants:read')
  @ApiOperation({ operationId: 'getPlant', summary: 'Read a plant' })
  @ApiPlantIdParam()
  @ApiOkResponse({ description: 'The plant', type: StoredPlantDto })
  @ApiErrorResponse(400, 'The id is not an int64')
  @ApiPlantNotFoundResponse()
  async findOne(@Param('id', ParseInt64Pipe) id: bigint): Promise<StoredPlantDto> {
    return toStoredPlantDto(await this.plants.findOne(id));
  }

  @Put(':id')
  @RequiresScopes('plants:write')
  @ApiOperation({
    operationId: 'replacePlant',
    summary: 'Replace a plant',
    description:
      'Replaces the name and tag of an existing plant; a body without tag clears it. Never creates a plant.',
  })
  @ApiPlantIdParam()
  @ApiBody({ type: ReplacePlantDto, required: true })
  @ApiOkResponse({ description: 'The plant as replaced', type: StoredPlantDto })
  @ApiErrorResponse(400, 'The id or the body is invalid, or the body has another id')
  @ApiPlantNotFoundResponse()
  @ApiJsonBodyResponses()
  async replace(
    @Param('id', ParseInt64Pipe) id: bigint,
    @Body() body: ReplacePlantDto,
  ): Promise<StoredPlantDto> {
    return toStoredPlantDto(await this.plants.replace(id, body));
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RequiresScopes('plants:write')
  @ApiOperation({ operationId: 'deletePlant', summary: 'Delete a plant' })
  @ApiPlantIdParam()
  @ApiNoContentResponse({ description: 'The plant is deleted' })
  @ApiErrorResponse(400, 'The id is not an int64, or the request has a body that is not JSON')
  @ApiPlantNotFoundResponse()
  @ApiJsonBodyResponses()
  async delete(@Param('id', ParseInt64Pipe) id: bigint): Promise<void> {
    await this.plants.delete(id);
  }
}

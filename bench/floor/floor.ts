// The design card's floor: the reference's two operations on the stack the design card
// names and nothing more: Nest on Fastify, a passport bearer guard, a class-validator DTO
// through Nest's ValidationPipe, a TypeORM repository and a global exception filter. No
// logs, metrics, rate limit, OpenAPI document, health checks, webhooks or group commit.
// Like the reference, it keeps each token's hash for good once looked up and parses
// bodies with Fastify's JSON.parse; unlike it, it checks no scopes (any valid token may
// create and read), which only makes it cheaper: it is a floor.
// `npm run bench` builds it with bench/floor/tsconfig.json.
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import {
  ArgumentsHost,
  Body,
  Catch,
  ConflictException,
  Controller,
  ExceptionFilter,
  Get,
  HttpCode,
  HttpException,
  Injectable,
  Module,
  NotFoundException,
  Param,
  Post,
  UseGuards,
  ValidationPipe,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { IsInt, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { Strategy } from 'passport-http-bearer';
import { Column, Entity, PrimaryColumn, Repository } from 'typeorm';

@Entity({ name: 'plants' })
class Plant {
  @PrimaryColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  tag: string | null;
}

@Entity({ name: 'api_tokens' })
class ApiToken {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'secret_hash', type: 'char', length: 64 })
  secretHash: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;
}

class NewPlantDto {
  @IsInt()
  id: number;

  @IsString()
  @Length(1, 255)
  name: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  tag?: string;
}

type PlantBody = { name: string; tag?: string };
/** A read answers the id too, as the reference does (a string: TypeORM reads bigint so). */
type StoredPlant = PlantBody & { id: string };

@Injectable()
class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  /** sha256(token) → scopes, or null for an unknown token; never expires. */
  private readonly scopesByHash = new Map<string, string[] | null>();

  constructor(@InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>) {
    super();
  }

  async validate(token: string): Promise<string[] | false> {
    const hash = createHash('sha256').update(token).digest('hex');
    if (!this.scopesByHash.has(hash)) {
      const found = await this.tokens
        .createQueryBuilder('token')
        .select('token.scopes')
        .where('token.secretHash = :hash', { hash })
        .andWhere('token.revokedAt IS NULL')
        .andWhere('(token.expiresAt IS NULL OR token.expiresAt > now())')
        .getOne();
      this.scopesByHash.set(hash, found?.scopes ?? null);
    }
    return this.scopesByHash.get(hash) ?? false;
  }
}

@Injectable()
class PlantsService {
  constructor(@InjectRepository(Plant) private readonly plants: Repository<Plant>) {}

  async create({ id, name, tag }: NewPlantDto): Promise<PlantBody> {
    const inserted = await this.plants
      .createQueryBuilder()
      .insert()
      .values({ id: String(id), name, tag: tag ?? null })
      .orIgnore()
      .returning('id')
      .updateEntity(false)
      .execute();
    if (inserted.raw.length === 0) {
      const stored = await this.plants.findOneBy({ id: String(id) });
      if (stored?.name !== name || stored?.tag !== (tag ?? null)) throw new ConflictException();
    }
    return tag === undefined ? { name } : { name, tag };
  }

  async find(id: string): Promise<StoredPlant> {
    const stored = await this.plants.findOneBy({ id });
    if (!stored) throw new NotFoundException();
    return stored.tag === null
      ? { id, name: stored.name }
      : { id, name: stored.name, tag: stored.tag };
  }
}

@Controller('plants')
@UseGuards(AuthGuard('bearer'))
class PlantsController {
  constructor(private readonly plants: PlantsService) {}

  @Post()
  @HttpCode(200)
  create(@Body() plant: NewPlantDto): Promise<PlantBody> {
    return this.plants.create(plant);
  }

  @Get(':id')
  find(@Param('id') id: string): Promise<StoredPlant> {
    return this.plants.find(id);
  }
}

@Catch(HttpException)
class HttpErrorFilter implements ExceptionFilter {
  catch(exception: HttpException, host: ArgumentsHost): void {
    const status = exception.getStatus();
    host
      .switchToHttp()
      .getResponse<FastifyReply>()
      .status(status)
      .send({ error: status, message: exception.message });
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [Plant, ApiToken],
      extra: { max: Number(process.env.POOL_SIZE ?? 10) },
    }),
    TypeOrmModule.forFeature([Plant, ApiToken]),
    PassportModule,
  ],
  controllers: [PlantsController],
  providers: [PlantsService, BearerStrategy],
})
class FloorModule {}

const app = await NestFactory.create<NestFastifyApplication>(FloorModule, new FastifyAdapter(), {
  logger: ['warn', 'error'],
});
app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
app.useGlobalFilters(new HttpErrorFilter());
app.enableShutdownHooks();
await app.listen({ port: Number(process.env.PORT ?? 3002), host: '127.0.0.1' });

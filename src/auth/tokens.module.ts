import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiToken } from './entities/api-token.entity.js';
import { TokensService } from './tokens.service.js';

/** The token store alone: what the token CLI needs, without anything HTTP. */
@Module({
  imports: [TypeOrmModule.forFeature([ApiToken])],
  providers: [TokensService],
  exports: [TokensService],
})
export class TokensModule {}

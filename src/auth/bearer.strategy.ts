import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { Principal } from './principal.js';
import { TokensService } from './tokens.service.js';

export const BEARER_REALM = 'plant-store';

/** `Authorization: Bearer <token>` (RFC 6750), checked against the token store. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly tokens: TokensService) {
    super({ realm: BEARER_REALM });
  }

  async validate(secret: string): Promise<Principal | false> {
    return (await this.tokens.authenticate(secret)) ?? false;
  }
}

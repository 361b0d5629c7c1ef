import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'auth:isPublic';

/** The route needs no token (health, metrics, the API document). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

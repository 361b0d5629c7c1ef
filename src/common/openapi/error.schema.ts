import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { ErrorBody } from '../filters/http-error.filter.js';

/** The seed's Error, as HttpErrorFilter writes it for every failure. */
@ApiSchema({ name: 'Error', description: 'Every error the service answers, whatever raised it' })
export class ErrorSchema implements ErrorBody {
  @ApiProperty({ type: 'integer', format: 'int32', description: 'The HTTP status code' })
  error: number;

  @ApiProperty({ description: 'What went wrong, for a person' })
  message: string;
}

import { ApiProperty, OmitType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';
import { PAGE_SIZE, PageQueryDto } from '../../common/pagination/page-query.dto.js';
import {
  decimalDigitsToNumber,
  IsIntegerBetween,
} from '../../common/validation/is-integer-between.decorator.js';

/**
 * `GET /webhooks`' query. With `limit` or `cursor`, a page, as the plants' list; with
 * neither, every subscription in one answer, as release 1.0.0 answered, so that a client
 * of 1.0 that reads the list whole still gets all of it.
 */
export class ListWebhooksQueryDto extends OmitType(PageQueryDto, ['limit'] as const) {
  @ApiProperty({
    required: false,
    type: 'integer',
    format: 'int32',
    minimum: PAGE_SIZE.min,
    maximum: PAGE_SIZE.max,
    description: `How many subscriptions a page holds at most (${PAGE_SIZE.default} when only \`cursor\` is given). Without \`limit\` and \`cursor\`, every subscription comes in one answer.`,
  })
  @Transform(decimalDigitsToNumber)
  @ValidateIf((query: ListWebhooksQueryDto) => query.limit !== undefined)
  @IsIntegerBetween(PAGE_SIZE.min, PAGE_SIZE.max)
  limit?: number;
}

import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';
import { IsInt64 } from '../../common/validation/is-int64.decorator.js';
import { IsText } from '../../common/validation/is-text.decorator.js';

export const NAME_LIMITS = { min: 1, max: 255 };
export const TAG_LIMITS = { min: 0, max: 255 };

/** The seed's NewPlant. Unknown properties are dropped by the validation pipe. */
export class CreatePlantDto {
  @IsInt64()
  @Transform(({ value }) => (Number.isSafeInteger(value) ? BigInt(value) : value))
  id: bigint;

  @IsText(NAME_LIMITS)
  name: string;

  /** Absent means no tag; `null` is not a string and is refused. */
  @ValidateIf((dto: CreatePlantDto) => dto.tag !== undefined)
  @IsText(TAG_LIMITS)
  tag?: string;
}

import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { ParseUuidPipe } from '../../src/common/validation/parse-uuid.pipe.js';

describe('ParseUuidPipe', () => {
  const pipe = new ParseUuidPipe();
  const parse = (value: string) => pipe.transform(value, { type: 'param', data: 'id' });

  it.each([
    ['5b0e2c1e-8f0a-4d55-9a43-0f7a3c2b9e61'],
    ['5B0E2C1E-8F0A-4D55-9A43-0F7A3C2B9E61'],
    ['00000000-0000-0000-0000-000000000000'],
    ['ffffffff-ffff-ffff-ffff-ffffffffffff'],
    ['01890a5d-ac96-774b-bcce-b302099a8057'],
  ])('takes %s as it is', async (value) => {
    await expect(parse(value)).resolves.toBe(value);
  });

  it.each([
    ['42'],
    [''],
    ['not-a-uuid'],
    ['5b0e2c1e8f0a4d559a430f7a3c2b9e61'],
    ['{5b0e2c1e-8f0a-4d55-9a43-0f7a3c2b9e61}'],
    ['urn:uuid:5b0e2c1e-8f0a-4d55-9a43-0f7a3c2b9e61'],
    ['5b0e2c1e-8f0a-4d55-9a43-0f7a3c2b9e61 '],
    ['5b0e2c1e-8f0a-0d55-9a43-0f7a3c2b9e61'],
  ])('refuses %j with 400 "id must be a UUID"', async (value) => {
    const refused = parse(value);
    await expect(refused).rejects.toThrow(BadRequestException);
    await expect(refused).rejects.toThrow(/^id must be a UUID$/);
  });
});

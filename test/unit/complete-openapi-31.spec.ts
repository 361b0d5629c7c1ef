import type { OpenAPIObject } from '@nestjs/swagger';
import { describe, expect, it } from 'vitest';
import { completeOpenApi31 } from '../../src/openapi/openapi-document.js';

describe('completeOpenApi31', () => {
  const generated: OpenAPIObject = {
    openapi: '3.1.0',
    info: { title: 'Plant Store', version: '1.0.0', license: { name: 'MIT' } },
    paths: { '/plants': { post: { responses: { '200': { description: 'Plant response' } } } } },
    components: { schemas: { Plant: { type: 'object', required: ['name'] } } },
  };

  it('gives the license its SPDX identifier, as the seed has it', () => {
    expect(completeOpenApi31(generated).info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
  });

  it('keeps everything else as generated and leaves the generated document alone', () => {
    const before = structuredClone(generated);
    const { info, ...rest } = completeOpenApi31(generated);
    const { info: generatedInfo, ...generatedRest } = before;
    expect(rest).toEqual(generatedRest);
    expect(info).toMatchObject({ title: generatedInfo.title, version: generatedInfo.version });
    expect(generated).toEqual(before);
  });
});

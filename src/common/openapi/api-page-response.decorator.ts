import { ApiOkResponse } from '@nestjs/swagger';

/**
 * The 200 of a list read a page at a time: an array of `type`, and the `Link` header of
 * the next page (see nextPageLink). `example`: a Link header as this list answers it.
 */
export const ApiPageResponse = (options: {
  description: string;
  type: Function;
  example: string;
}) =>
  ApiOkResponse({
    description: options.description,
    type: options.type,
    isArray: true,
    headers: {
      Link: {
        description: 'The next page (RFC 8288); absent on the last page',
        schema: { type: 'string', examples: [options.example] },
      },
    },
  });

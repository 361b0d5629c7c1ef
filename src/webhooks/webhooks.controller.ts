import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Actor } from '../audit/actor.js';
import { RequestActor } from '../audit/request-actor.decorator.js';
import { RequiresScopes } from '../auth/decorators/requires-scopes.decorator.js';
import { ApiNotFoundResponse, ApiUuidIdParam } from '../common/openapi/api-by-id.decorators.js';
import {
  ApiDatabaseBackedResponses,
  ApiErrorResponse,
  ApiJsonBodyResponses,
} from '../common/openapi/api-error-response.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { nextPageLink } from '../common/pagination/next-page-link.js';
import { ParseUuidPipe } from '../common/validation/parse-uuid.pipe.js';
import { CreateWebhookDto } from './dto/create-webhook.dto.js';
import { ListWebhooksQueryDto } from './dto/list-webhooks-query.dto.js';
import {
  DEFAULT_OVERLAP_SECONDS,
  OVERLAP_LIMITS,
  RotateWebhookSecretDto,
} from './dto/rotate-webhook-secret.dto.js';
import {
  CreatedWebhookDto,
  RedeliveryDto,
  RotatedWebhookDto,
  toCreatedWebhookDto,
  toRotatedWebhookDto,
  toWebhookDto,
  WebhookDto,
} from './dto/webhook.dto.js';
import { WebhooksService } from './webhooks.service.js';

const ApiWebhookIdParam = () => ApiUuidIdParam('The webhook');
/** Also for a body, which these operations take none of, that is not JSON. */
const ApiWebhookByIdResponses = () =>
  applyDecorators(
    ApiErrorResponse(400, 'The id is not a UUID, or the request has a body that is not JSON'),
    ApiNotFoundResponse('webhook'),
    ApiJsonBodyResponses(),
  );

/** Subscriptions to the new-plant webhook; every operation needs `webhooks:manage`. */
@Controller('webhooks')
@ApiDatabaseBackedResponses()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @RequiresScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Subscribe a URL to new plants',
    description:
      'Every plant created from now on is POSTed to the URL as a NewPlant, signed as Standard Webhooks says. The answer holds the signing secret, shown this once.',
  })
  @ApiBody({ type: CreateWebhookDto, required: true })
  @ApiCreatedResponse({ description: 'The subscription and its secret', type: CreatedWebhookDto })
  @ApiErrorResponse(
    400,
    'The body is invalid, or the URL is not http(s), carries credentials, names port 0, does not resolve, or resolves to a loopback, private or link-local address (as IPv4 or embedded in IPv6)',
  )
  @ApiJsonBodyResponses()
  async create(
    @Body() body: CreateWebhookDto,
    @RequestActor() actor: Actor,
  ): Promise<CreatedWebhookDto> {
    const { subscription, secret } = await this.webhooks.create(body, actor);
    return toCreatedWebhookDto(subscription, secret);
  }

  @Get()
  @RequiresScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'List the webhook subscriptions',
    description:
      'Subscriptions, oldest first: a page at a time with `limit` or `cursor`, every one without either (as release 1.0.0 answered).',
  })
  @ApiPageResponse({
    description: 'A page of subscriptions, with their delivery status',
    type: WebhookDto,
    example:
      '</webhooks?limit=20&cursor=WyIyMDI2LTExLTIzVDIwOjAwOjAwLjAwMFoiLCI1YjBlMmMxZS04ZjBhLTRkNTUtOWE0My0wZjdhM2MyYjllNjEiXQ>; rel="next"',
  })
  @ApiErrorResponse(400, 'limit or cursor is invalid')
  async list(
    @Query() query: ListWebhooksQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookDto[]> {
    const { items, nextCursor } = await this.webhooks.list(query);
    if (nextCursor !== undefined) {
      reply.header('Link', nextPageLink(reply.request, { limit: query.limit }, nextCursor));
    }
    return items.map(toWebhookDto);
  }

  @Get(':id')
  @RequiresScopes('webhooks:manage')
  @ApiOperation({ operationId: 'getWebhook', summary: 'Read a webhook subscription' })
  @ApiWebhookIdParam()
  @ApiOkResponse({ description: 'The subscription with its delivery status', type: WebhookDto })
  @ApiWebhookByIdResponses()
  async findOne(@Param('id', ParseUuidPipe) id: string): Promise<WebhookDto> {
    return toWebhookDto(await this.webhooks.findOne(id));
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RequiresScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Unsubscribe',
    description: 'Deliveries not sent yet are dropped.',
  })
  @ApiWebhookIdParam()
  @ApiNoContentResponse({ description: 'The subscription is deleted' })
  @ApiWebhookByIdResponses()
  async delete(
    @Param('id', ParseUuidPipe) id: string,
    @RequestActor() actor: Actor,
  ): Promise<void> {
    await this.webhooks.delete(id, actor);
  }

  @Post(':id/enable')
  @HttpCode(HttpStatus.OK)
  @RequiresScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'enableWebhook',
    summary: 'Enable a subscription disabled for failing',
    description:
      'A subscription whose every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS (5 days by default) is disabled: it is sent nothing, and its pending deliveries are failed. This sends it the plants created from now on again, and starts its failure window afresh; redeliver then sends the failed deliveries. Enabling an enabled subscription changes nothing.',
  })
  @ApiWebhookIdParam()
  @ApiOkResponse({ description: 'The subscription, enabled', type: WebhookDto })
  @ApiWebhookByIdResponses()
  async enable(
    @Param('id', ParseUuidPipe) id: string,
    @RequestActor() actor: Actor,
  ): Promise<WebhookDto> {
    return toWebhookDto(await this.webhooks.enable(id, actor));
  }

  @Post(':id/rotate-secret')
  @HttpCode(HttpStatus.OK)
  @RequiresScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'Give a subscription a new signing secret',
    description: `The answer holds the new secret, shown this once. Until the overlap ends (overlapSeconds, ${DEFAULT_OVERLAP_SECONDS} s by default, at most ${OVERLAP_LIMITS.max}), every delivery carries two signatures in webhook-signature, space-separated as Standard Webhooks says: one with the new secret, one with the previous; a receiver holding either verifies it. After it, only the new one. Rotating again during an overlap retires the oldest secret at once.`,
  })
  @ApiWebhookIdParam()
  @ApiBody({ type: RotateWebhookSecretDto, required: false })
  @ApiOkResponse({ description: 'The subscription and its new secret', type: RotatedWebhookDto })
  @ApiErrorResponse(
    400,
    'The id is not a UUID, or the body is not a JSON object, or overlapSeconds is not an integer within its bounds',
  )
  @ApiNotFoundResponse('webhook')
  @ApiJsonBodyResponses()
  async rotateSecret(
    @Param('id', ParseUuidPipe) id: string,
    @Body() { overlapSeconds = DEFAULT_OVERLAP_SECONDS }: RotateWebhookSecretDto,
    @RequestActor() actor: Actor,
  ): Promise<RotatedWebhookDto> {
    const { subscription, secret } = await this.webhooks.rotateSecret(id, overlapSeconds, actor);
    return toRotatedWebhookDto(subscription, secret);
  }

  @Post(':id/redeliver')
  @HttpCode(HttpStatus.ACCEPTED)
  @RequiresScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'redeliverWebhook',
    summary: 'Send failed deliveries again',
    description:
      "Deliveries that used up their attempts are sent again, each from a first attempt, with the same webhook-id. Deliveries are kept for WEBHOOK_DELIVERY_RETENTION (30 days by default) from their plant's creation: a failed one older than that is gone, and is not sent again.",
  })
  @ApiWebhookIdParam()
  @ApiAcceptedResponse({ description: 'How many deliveries are queued again', type: RedeliveryDto })
  @ApiWebhookByIdResponses()
  async redeliver(
    @Param('id', ParseUuidPipe) id: string,
    @RequestActor() actor: Actor,
  ): Promise<RedeliveryDto> {
    return { redelivered: await this.webhooks.redeliverFailed(id, actor) };
  }
}

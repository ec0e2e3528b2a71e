import { requirePermission, scopeOf } from '../api-keys/scope.js';
import type { InboxApi } from '../auth.js';
import type { Deps } from '../deps.js';
import {
  createdWebhookSchema,
  createWebhookBody,
  deliveryPage,
  deliveryParams,
  deliverySchema,
  listDeliveriesQuery,
  listWebhooksQuery,
  updateWebhookBody,
  webhookPage,
  webhookParams,
  webhookSchema,
} from './schemas.js';
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listDeliveries,
  listWebhooks,
  retryDelivery,
  toWebhookResponse,
  updateWebhook,
} from './service.js';

const SIGNING =
  'Each delivery is a POST of the event (as GET /v1/events shows it) signed as Standard Webhooks says: `webhook-id` (the ' +
  'same on every retry), `webhook-timestamp`, `webhook-signature`. A 2xx within 15 s is delivered; anything else is retried ' +
  '(INBOX_WEBHOOK_RETRY_SCHEDULE, see the README), and a delivery failing the whole schedule disables the webhook. ';

export function webhookOutRoutes(api: InboxApi, deps: Deps): void {
  const settings = { allowPrivate: deps.config.INBOX_WEBHOOK_ALLOW_PRIVATE };
  api.route({
    method: 'post',
    path: '/v1/webhooks',
    tags: ['webhooks'],
    summary: 'Create a webhook: events delivered to a URL',
    description:
      SIGNING +
      'The answer carries the signing `secret`, shown only here. Needs `manage` and `read` (the deliveries carry the messages); ' +
      'a key limited to some inboxes must give `inbox_ids` within them (403 otherwise).',
    body: createWebhookBody,
    status: 201,
    response: createdWebhookSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage', 'read'),
    handler: ({ actor, body }) => createWebhook(deps.db, settings, actor, body),
  });
  api.route({
    method: 'get',
    path: '/v1/webhooks',
    tags: ['webhooks'],
    summary: 'List webhooks, newest first',
    description:
      'The webhooks the API key reaches (`manage`): those of its organization, or for a limited key those limited to its inboxes.',
    query: listWebhooksQuery,
    response: webhookPage,
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, query }) => listWebhooks(deps.db, scopeOf(actor), query),
  });
  api.route({
    method: 'get',
    path: '/v1/webhooks/{webhook_id}',
    tags: ['webhooks'],
    summary: 'Get a webhook',
    params: webhookParams,
    response: webhookSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: async ({ actor, params }) => toWebhookResponse(await findWebhook(deps.db, scopeOf(actor), params.webhook_id)),
  });
  api.route({
    method: 'patch',
    path: '/v1/webhooks/{webhook_id}',
    tags: ['webhooks'],
    summary: 'Change a webhook, or enable or disable it',
    description:
      'Only the fields given change. `enabled: true` enables a webhook the service disabled, and clears `disabled_reason`. ' +
      'Needs `manage` and `read`, as creating one does.',
    params: webhookParams,
    body: updateWebhookBody,
    response: webhookSchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage', 'read'),
    handler: ({ actor, params, body }) => updateWebhook(deps.db, settings, actor, params.webhook_id, body),
  });
  api.route({
    method: 'delete',
    path: '/v1/webhooks/{webhook_id}',
    tags: ['webhooks'],
    summary: 'Delete a webhook and its deliveries',
    params: webhookParams,
    status: 204,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, params }) => deleteWebhook(deps.db, scopeOf(actor), params.webhook_id),
  });
  api.route({
    method: 'get',
    path: '/v1/webhooks/{webhook_id}/deliveries',
    tags: ['webhooks'],
    summary: "List a webhook's deliveries, newest first",
    description:
      'Each with its attempts (status codes, errors), and while pending when the next attempt is due. A key limited to some ' +
      'inboxes sees the deliveries of events in them only.',
    params: webhookParams,
    query: listDeliveriesQuery,
    response: deliveryPage,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, params, query }) => listDeliveries(deps.db, scopeOf(actor), params.webhook_id, query),
  });
  api.route({
    method: 'post',
    path: '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry',
    tags: ['webhooks'],
    summary: 'Attempt a delivery again now',
    description:
      "An attempt now, with the same `webhook-id`, whatever the delivery's state: a delivery still in its schedule keeps it (a " +
      'failure is retried as the schedule says); any other, also on a disabled webhook (to try a fixed receiver), gets one ' +
      'attempt outside the schedule. An attempt already under way is left to end (no second one beside it). ' +
      'The answer is the delivery as queued (`pending`); list the deliveries for the outcome.',
    params: deliveryParams,
    status: 202,
    response: deliverySchema,
    errors: [404],
    authorize: ({ actor }) => requirePermission(actor, 'manage'),
    handler: ({ actor, params }) =>
      retryDelivery(deps, scopeOf(actor), { webhookId: params.webhook_id, deliveryId: params.delivery_id }),
  });
}

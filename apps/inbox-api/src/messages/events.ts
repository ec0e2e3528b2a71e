import type { EventType, NewEvent } from '../events/log.js';
import type { Message } from '../generated/prisma/client.js';
import { toMessageResponse } from './records.js';

/** The event that reports a change of `message`, carrying its list view (as GET /v1/messages shows it). */
export function messageEvent(type: EventType, inbox: { organizationId: string }, message: Message): NewEvent {
  return {
    type,
    organizationId: inbox.organizationId,
    inboxId: message.inboxId,
    threadId: message.threadId,
    messageId: message.id,
    data: toMessageResponse(message),
  };
}

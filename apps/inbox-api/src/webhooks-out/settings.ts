import { z } from 'zod';
import { setting } from '@repo/config';

/**
 * Seconds before each retry of a delivery that failed: the first within 30 s, then backing off,
 * 27.7 hours in all (11 attempts). A delivery that fails every one disables its webhook.
 */
export const DEFAULT_RETRY_SCHEDULE = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 43_200] as const;

/** Environment variables of the webhooks that the service calls (src/webhooks-out). */
export function webhookOutSettings() {
  return {
    INBOX_WEBHOOK_ALLOW_PRIVATE: setting
      .boolean()
      .default(false)
      .describe(
        'Let webhooks (POST /v1/webhooks) be called at private (RFC 1918, 100.64/10, fc00::/7) and loopback addresses, for development and tests. Link-local and cloud metadata addresses are refused whatever this says.',
      ),
    INBOX_WEBHOOK_RETRY_SCHEDULE: setting
      .list()
      .transform((items, ctx) => {
        const seconds = items.map(Number);
        if (seconds.some((value) => !Number.isInteger(value) || value < 1 || value > 7 * 86_400) || seconds.length > 50) {
          ctx.addIssue({ code: 'custom', message: 'must be at most 50 whole numbers of seconds from 1 to 604800' });
          return z.NEVER;
        }
        return seconds;
      })
      .default([...DEFAULT_RETRY_SCHEDULE])
      .describe(
        `Seconds before each retry of a webhook delivery that failed, comma-separated; a delivery that fails the last one is given up and its webhook disabled. Default ${DEFAULT_RETRY_SCHEDULE.join(',')} (the first retry after 5 s, 27.7 hours in all).`,
      ),
    INBOX_WEBHOOK_TIMEOUT_SECONDS: setting
      .integer({ min: 1, max: 60 })
      .default(15)
      .describe(
        'How long a webhook receiver has to answer a delivery with a 2xx status; later, or any other answer, is a failed attempt.',
      ),
    INBOX_WEBHOOK_SWEEP_SECONDS: setting
      .integer({ min: 1, max: 300 })
      .default(5)
      .describe(
        'How often each process looks for webhook deliveries whose retry is due (and events a missed notification left undelivered); a retry may wait this long past its time.',
      ),
  };
}
